// "Save as test case": the open session as an eval case, the JSON `hookline sessions export ID
// --as-case` prints (GET /v1/sessions/{id}/case). It is fetched with the token (an <a download>
// to the route could not send it), then saved from an object URL under the name the server gives.

import { $, el } from "./dom.js";
import { api, session } from "./api.js";

export async function saveCase(sessionId) {
  say("Saving...");
  let response, text;
  try {
    response = await api(`${session(sessionId)}/case`);
    text = await response.text();
  } catch (error) {
    say(`Not saved: ${error.message}`, true);
    return;
  }
  const disposition = response.headers.get("Content-Disposition") || "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] || `${sessionId}.case.json`;
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000); // the download may read it after click() returns
  say(`Saved ${name}: ${summary(JSON.parse(text))} (hookline eval runs it).`);
}

// Another session is shown: the note was about the one before.
export function forgetSavedCase() {
  say("");
}

function say(text, failed = false) {
  const note = $("case-note");
  note.textContent = text;
  note.classList.toggle("problem", failed);
}

function summary(found) {
  const count = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
  return `${count(found.prompts.length, "prompt")}, ${count((found.calls || []).length, "tool call")}`;
}
