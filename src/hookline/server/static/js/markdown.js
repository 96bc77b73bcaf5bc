// A small Markdown renderer for answers. It builds DOM nodes and never parses HTML, so
// whatever a model or a tool writes (<script>, <img onerror=...>) stays text. Links keep
// only http(s) and mailto targets; images in Markdown become links (no remote loads).
//
// Blocks: paragraphs, # headings, ``` fenced code, > quotes, - and 1. lists, | tables |, ---.
// Inline: `code`, **bold**, *italic*, ~~strike~~, [links](https://...).
//
// An answer's headings sit under the page's own (h1 the page, h2 its regions): its top
// level is h3, and a level never skips one (### after # is h4), so the outline stays whole.
// `MarkdownStream` renders an answer while it streams: the blocks that a blank line closed
// are rendered once, only the last one again on each delta.

import { el } from "./dom.js";

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const INLINE = [
  ["code", /`([^`\n]+)`/],
  ["image", /!\[([^\]]*)\]\(([^)\s]+)\)/],
  ["link", /\[([^\]]+)\]\(([^)\s]+)\)/],
  ["strong", /\*\*(\S(?:.*?\S)?)\*\*|__(\S(?:.*?\S)?)__/],
  ["em", /\*(\S(?:.*?\S)?)\*|\b_(\S(?:.*?\S)?)_\b/],
  ["del", /~~(\S(?:.*?\S)?)~~/],
];

const TOP_HEADING = 3;

// The heading levels of one answer: its first heading is h3, the next one at most one deeper.
export class Outline {
  constructor() {
    this.shown = []; // [markdown level, html level] of the headings so far
  }

  level(hashes) {
    while (this.shown.length && this.shown[this.shown.length - 1][0] >= hashes) this.shown.pop();
    const parent = this.shown.length ? this.shown[this.shown.length - 1][1] : TOP_HEADING - 1;
    const level = Math.min(6, parent + 1);
    this.shown.push([hashes, level]);
    return level;
  }
}

export function renderMarkdown(text, outline = new Outline()) {
  const root = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i += 1; continue; }
    const block = BLOCKS.find(([test]) => test(line, lines[i + 1]));
    const [node, next] = block ? block[1](lines, i, outline) : paragraph(lines, i);
    root.append(node);
    i = next;
  }
  return root;
}

// An answer rendered as it streams into `root`: `set(text)` with the whole text so far.
export class MarkdownStream {
  constructor(root) {
    this.root = root;
    this.text = "";
    this.done = 0;          // the length of the text rendered for good
    this.outline = new Outline();
    this.tail = document.createElement("div");
    this.tail.className = "md-tail";
    root.append(this.tail);
  }

  set(text) {
    if (!text.startsWith(this.text)) { this.restart(); }
    this.text = text;
    const closed = closedLength(text, this.done);
    if (closed > this.done) {
      this.tail.before(renderMarkdown(text.slice(this.done, closed), this.outline));
      this.done = closed;
    }
    const outline = Object.assign(new Outline(), { shown: [...this.outline.shown] });
    this.tail.replaceChildren(renderMarkdown(text.slice(this.done), outline));
  }

  restart() {
    this.root.replaceChildren(this.tail);
    this.done = 0;
    this.outline = new Outline();
  }

  // The final text: what was streamed stays in place (no reflow), the last block settles.
  finish(text) {
    this.set(text);
    this.tail.replaceWith(...this.tail.childNodes);
  }
}

// The length of `text` whose blocks are closed: up to its last blank line outside a ``` fence.
function closedLength(text, from) {
  let closed = from;
  let fenced = false;
  let at = from;
  for (const line of text.slice(from).split("\n").slice(0, -1)) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    at += line.length + 1;
    if (!fenced && !line.trim()) closed = at;
  }
  return closed;
}

const BLOCKS = [
  [(l) => /^\s*```/.test(l), fence],
  [(l) => /^#{1,6}\s/.test(l), heading],
  [(l) => /^\s*(-{3,}|\*{3,}|_{3,})\s*$/.test(l), (lines, i) => [el("hr"), i + 1]],
  [(l) => /^\s*>/.test(l), quote],
  [(l) => /^\s*([-*+]|\d+[.)])\s+/.test(l), list],
  [(l, next) => l.includes("|") && next !== undefined && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(next), table],
];

function fence(lines, i) {
  const open = lines[i].trim();
  const language = open.slice(3).trim();
  const body = [];
  let j = i + 1;
  while (j < lines.length && !lines[j].trim().startsWith("```")) body.push(lines[j++]);
  const code = el("code", language ? { "data-language": language } : {}, body.join("\n"));
  return [el("pre", { class: "code" }, code), j + 1];
}

function heading(lines, i, outline) {
  const [, hashes, text] = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(lines[i]);
  return [el(`h${outline.level(hashes.length)}`, { class: "md-heading" }, ...inline(text)), i + 1];
}

function quote(lines, i, outline) {
  const body = [];
  let j = i;
  while (j < lines.length && /^\s*>/.test(lines[j])) body.push(lines[j++].replace(/^\s*>\s?/, ""));
  const node = el("blockquote");
  node.append(renderMarkdown(body.join("\n"), outline));
  return [node, j];
}

function list(lines, i) {
  const ordered = /^\s*\d+[.)]\s/.test(lines[i]);
  const item = ordered ? /^\s*\d+[.)]\s+(.*)$/ : /^\s*[-*+]\s+(.*)$/;
  const node = el(ordered ? "ol" : "ul");
  let j = i;
  while (j < lines.length && item.test(lines[j])) {
    const text = [item.exec(lines[j])[1]];
    j += 1;
    while (j < lines.length && /^\s{2,}\S/.test(lines[j]) && !item.test(lines[j])) text.push(lines[j++].trim());
    node.append(el("li", {}, ...inline(text.join(" "))));
  }
  return [node, j];
}

function table(lines, i) {
  const cells = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  const head = el("tr", {}, ...cells(lines[i]).map((c) => el("th", { scope: "col" }, ...inline(c))));
  const body = el("tbody");
  let j = i + 2;
  while (j < lines.length && lines[j].includes("|") && lines[j].trim()) {
    body.append(el("tr", {}, ...cells(lines[j++]).map((c) => el("td", {}, ...inline(c)))));
  }
  return [el("div", { class: "table-wrap" }, el("table", {}, el("thead", {}, head), body)), j];
}

function paragraph(lines, i) {
  const node = el("p");
  let j = i;
  while (j < lines.length && lines[j].trim() && (j === i || !BLOCKS.some(([test]) => test(lines[j], lines[j + 1])))) {
    if (j > i) node.append(el("br"));
    node.append(...inline(lines[j]));
    j += 1;
  }
  return [node, j];
}

function inline(text) {
  const out = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const [kind, pattern] of INLINE) {
      const found = pattern.exec(rest);
      if (found && (!best || found.index < best.found.index)) best = { kind, found };
    }
    if (!best) { out.push(rest); break; }
    if (best.found.index) out.push(rest.slice(0, best.found.index));
    out.push(inlineNode(best.kind, best.found));
    rest = rest.slice(best.found.index + best.found[0].length);
  }
  return out;
}

function inlineNode(kind, found) {
  const inner = found[1] ?? found[2] ?? "";
  if (kind === "code") return el("code", {}, inner);
  if (kind === "link" || kind === "image") {
    const label = kind === "image" ? `image: ${inner || found[2]}` : inner;
    if (!SAFE_URL.test(found[2])) return `${label} (${found[2]})`;
    return el("a", { href: found[2], target: "_blank", rel: "noopener noreferrer nofollow" }, ...inline(label));
  }
  const tag = { strong: "strong", em: "em", del: "del" }[kind];
  return el(tag, {}, ...inline(inner));
}
