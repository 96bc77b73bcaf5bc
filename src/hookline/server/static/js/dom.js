// Small DOM helpers. Text from the server is only ever set as text (never as markup).

export const $ = (id) => document.getElementById(id);

// Build an element: el("button", {type: "button", class: "x"}, "text", child, ...).
// Attributes are set with setAttribute (so "on..." strings never become handlers: none are used).
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export function textOf(event) {
  return (event.parts || []).filter((p) => p.type === "text").map((p) => p.text).join("");
}

export function describeCall(call) {
  const args = call.arguments;
  const shown = typeof args === "string" ? args
    : Object.entries(args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
  return `${call.name}(${shown})`;
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

// A tool result's content, pretty-printed when it is JSON.
export function prettyContent(content) {
  const text = String(content ?? "");
  const start = text.trimStart()[0];
  if (start === "{" || start === "[") {
    try { return pretty(JSON.parse(text)); } catch { /* not JSON: shown as it is */ }
  }
  return text;
}

export function clock(iso) {
  return iso ? new Date(iso).toLocaleTimeString() : "";
}

// When something happened, the same way everywhere in lists: the time today, else the day and time.
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  const today = new Date().toDateString() === date.toDateString();
  const options = today ? { hour: "2-digit", minute: "2-digit" }
    : { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
      year: date.getFullYear() === new Date().getFullYear() ? undefined : "numeric" };
  return date.toLocaleString(undefined, options);
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

// A cost as the model's prices give it (`Model.prices`): cents, or two significant digits below 1; null without one.
export function money(cost, currency) {
  if (cost === null || cost === undefined) return null;
  return `${cost >= 1 || cost === 0 ? cost.toFixed(2) : cost.toPrecision(2)} ${currency}`;
}

// An image part that carries its own source: a `url` (http(s) or a data: URL of an image),
// or base64 `data` (the server sends the URL-safe alphabet; a data: URL wants the standard
// one). Anything else gives null; an image a store holds comes from media.js instead.
export function imageOf(part) {
  const kind = part.kind || part.type;
  if (kind !== "image") return null;
  let src = typeof part.url === "string" ? part.url : null;
  if (!src && typeof part.data === "string") {
    const mime = part.mime_type || part.media_type || "image/png";
    src = part.data.startsWith("data:") ? part.data
      : `data:${mime};base64,${part.data.replace(/-/g, "+").replace(/_/g, "/")}`;
  }
  if (!src || !/^(https?:|data:image\/(png|jpeg|gif|webp|avif);)/i.test(src)) return null;
  return el("img", { src, alt: part.alt || part.title || "image", class: "part-image", loading: "lazy" });
}

// A byte count for people: 512 B, 12.3 KB, 4.1 MB.
export function bytes(count) {
  if (count < 1000) return `${count} B`;
  const [size, unit] = count < 1e6 ? [count / 1e3, "KB"] : [count / 1e6, "MB"];
  return `${size.toFixed(size < 10 ? 1 : 0)} ${unit}`;
}

// A line diff of two texts (the longest common subsequence of their lines): "-" removed, "+" added.
export function diffLines(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  const common = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push(["same", "  ", a[i]]); i += 1; j += 1;
    } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
      lines.push(["removed", "- ", a[i]]); i += 1;
    } else {
      lines.push(["added", "+ ", b[j]]); j += 1;
    }
  }
  return lines.map(([kind, mark, text]) => el("div", { class: `line ${kind}` },
    el("span", { class: "mark", "aria-hidden": "true" }, mark),
    kind === "same" ? null : el("span", { class: "visually-hidden" }, `${kind}: `), text));
}
