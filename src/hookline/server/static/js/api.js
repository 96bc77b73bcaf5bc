// Talking to the server: the token, JSON calls, errors that say why, and SSE bodies.

const TOKEN_KEY = "hookline.token";

export const auth = {
  token: localStorage.getItem(TOKEN_KEY) || "",
  onMissing: () => {},
  save(token) { this.token = token; localStorage.setItem(TOKEN_KEY, token); },
  forget() { this.token = ""; localStorage.removeItem(TOKEN_KEY); },
};

// The server answered with an error: `status` and its `code` ("busy", "invalid_approvals", ...).
export class ApiError extends Error {
  constructor(message, status, code) { super(message); this.status = status; this.code = code; }
}

// The request never got an answer: the server is down or the network is.
export class NetworkError extends Error {}

export const session = (id) => `/v1/sessions/${encodeURIComponent(id)}`;

export async function api(path, options = {}) {
  const headers = new Headers(options.headers || {});
  if (auth.token) headers.set("Authorization", `Bearer ${auth.token}`);
  let response;
  try {
    response = await fetch(path, { ...options, headers });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new NetworkError("the server could not be reached");
  }
  if (response.status === 401) {
    auth.onMissing();
    throw new ApiError("this server needs an access token", 401, "unauthorized");
  }
  if (!response.ok) {
    let body = {};
    try { body = await response.json(); } catch { /* not JSON */ }
    throw new ApiError(body.message || `${response.status} ${response.statusText}`, response.status, body.error);
  }
  return response;
}

export async function apiJSON(path, options) {
  return (await api(path, options)).json();
}

export function postJSON(path, body, extra = {}) {
  return api(path, {
    ...extra, method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", ...(extra.headers || {}) },
  });
}

// Start a run or a resume; answer once the server has taken it (or throw why it did not):
// whether it does anything. Its events come on the session's follow stream, so its own stream is
// closed after its first bytes (the run goes on in the server whatever its request does); a
// stream that ends before any is a resume that found nothing to do (it answers false).
export async function startRun(path, body, signal) {
  const response = await postJSON(path, body, { headers: { Accept: "text/event-stream" }, signal });
  const reader = response.body.getReader();
  try {
    const first = await reader.read();
    return !first.done;
  } catch {
    return true; // the line broke: the run goes on, and the stream says how
  } finally {
    reader.cancel().catch(() => {});
  }
}

// Read a text/event-stream body frame by frame; call onEvent with each frame's data and its
// type ("message", "status", "delta", or "stored": {id, seq} of a live event now on record).
// Comments (": keepalive") carry nothing.
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (error.name === "AbortError") throw error;
      throw new NetworkError("the connection to the server broke");
    }
    if (chunk.done) break;
    buffer += chunk.value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = frame.split("\n");
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart());
      const type = (lines.find((l) => l.startsWith("event:")) || "event: message").slice(6).trim();
      if (data.length) onEvent(JSON.parse(data.join("\n")), type);
    }
  }
}
