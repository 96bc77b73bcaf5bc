// The panes' widths: the splitters between the session list, the chat and the inspector drag
// with the mouse or a finger, and move with the arrow keys (a separator is one tab stop);
// each width is kept in this browser.

import { $ } from "./dom.js";

const KEY = "hookline.panes";
const STEP = 16; // px per arrow key
const LIMITS = { sessions: [160, 560], inspector: [280, 1100] };

export function setupPanes() {
  const kept = JSON.parse(localStorage.getItem(KEY) || "{}");
  for (const [pane, width] of Object.entries(kept)) if (LIMITS[pane]) resize(pane, width);
  splitter("split-sessions", "sessions", 1);
  splitter("split-inspector", "inspector", -1);
}

// `direction`: 1 when the pane is left of its splitter (dragging right widens it), -1 when right of it.
function splitter(id, pane, direction) {
  const handle = $(id);
  handle.addEventListener("pointerdown", (down) => {
    down.preventDefault();
    handle.setPointerCapture(down.pointerId);
    const start = $(pane).getBoundingClientRect().width;
    const move = (event) => resize(pane, start + direction * (event.clientX - down.clientX));
    const up = () => {
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", up);
      keep(pane);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up);
  });
  handle.addEventListener("keydown", (event) => {
    const step = { ArrowRight: STEP, ArrowLeft: -STEP }[event.key];
    if (!step) return;
    event.preventDefault();
    resize(pane, $(pane).getBoundingClientRect().width + direction * step);
    keep(pane);
  });
  resize(pane, null);
}

function resize(pane, width) {
  const [least, most] = LIMITS[pane];
  const node = $(pane);
  if (width !== null) node.style.width = `${Math.round(Math.max(least, Math.min(most, width)))}px`;
  const handle = document.querySelector(`[aria-controls="${pane}"].splitter`);
  handle.setAttribute("aria-valuemin", String(least));
  handle.setAttribute("aria-valuemax", String(most));
  handle.setAttribute("aria-valuenow", String(Math.round(parseFloat(node.style.width) || node.getBoundingClientRect().width || least)));
}

function keep(pane) {
  const kept = JSON.parse(localStorage.getItem(KEY) || "{}");
  kept[pane] = parseFloat($(pane).style.width);
  localStorage.setItem(KEY, JSON.stringify(kept));
}
