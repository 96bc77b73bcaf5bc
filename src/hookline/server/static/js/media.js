// Images and files of the log: an image part shows as a picture, a file part as a chip that
// downloads it. Bytes a store holds (a part with `blob`) come from the blob route, fetched
// with the token (an <img src> could not send it), and are kept as object URLs until the
// page shows another session (`forgetMedia`).

import { bytes, el, imageOf } from "./dom.js";
import { api, session } from "./api.js";

const loaded = new Map(); // "session id/digest" -> Promise<{url, size}>

export function forgetMedia() {
  for (const blob of loaded.values()) blob.then(({ url }) => URL.revokeObjectURL(url), () => {});
  loaded.clear();
}

function stored(sessionId, digest) {
  const key = `${sessionId}/${digest}`;
  if (!loaded.has(key)) {
    const blob = api(`${session(sessionId)}/blobs/${encodeURIComponent(digest)}`)
      .then((response) => response.blob())
      .then((data) => ({ url: URL.createObjectURL(data), size: data.size }));
    blob.catch(() => loaded.delete(key)); // a later view asks again
    loaded.set(key, blob);
  }
  return loaded.get(key);
}

// The node showing an image or file part, or null for any other part.
export function mediaOf(part, sessionId, onGrow = () => {}) {
  if (part.type === "image") return pictureOf(part, sessionId, onGrow);
  if (part.type === "file") return fileChip(part, sessionId);
  return null;
}

function pictureOf(part, sessionId, onGrow) {
  const own = imageOf(part);
  if (own || !part.blob || !sessionId) return own;
  const img = el("img", { alt: `image (${part.media_type || "stored"})`, class: "part-image", "data-blob": part.blob });
  img.addEventListener("load", () => onGrow(img), { once: true });
  stored(sessionId, part.blob).then(({ url }) => { img.src = url; }, (error) => {
    img.replaceWith(el("span", { class: "chip problem", role: "note" }, `image not loaded: ${error.message}`));
  });
  return img;
}

function fileChip(part, sessionId) {
  const name = part.name || "file";
  const size = typeof part.data === "string" ? Math.floor((part.data.replace(/=+$/, "").length * 3) / 4) : null;
  const facts = el("span", { class: "facts" }, describe(part.media_type, size));
  if (typeof part.url === "string" && /^https?:/i.test(part.url)) {
    return el("a", { class: "file-chip", href: part.url, target: "_blank", rel: "noopener noreferrer" }, name, facts);
  }
  if (!part.blob && typeof part.data !== "string") return el("span", { class: "file-chip" }, name, facts);
  const chip = el("button", { type: "button", class: "file-chip", title: `Download ${name}` }, name, facts);
  chip.addEventListener("click", async () => {
    let url = part.url;
    if (typeof part.data === "string") {
      url = `data:${part.media_type};base64,${part.data.replace(/-/g, "+").replace(/_/g, "/")}`;
    } else {
      try {
        const blob = await stored(sessionId, part.blob);
        url = blob.url;
        facts.textContent = describe(part.media_type, blob.size);
      } catch (error) {
        facts.textContent = ` · not loaded: ${error.message}`;
        return;
      }
    }
    const link = el("a", { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
  });
  return chip;
}

function describe(mediaType, size) {
  return [mediaType, size === null || size === undefined ? null : bytes(size)].filter(Boolean).map((f) => ` · ${f}`).join("");
}
