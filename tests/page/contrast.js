// WCAG 2.1 AA, checked in the page: every visible text against the background it is drawn on
// (4.5:1; 3:1 for large text). Disabled controls are exempt, as WCAG says. Answers the failures.
() => {
  const rgba = (c) => {
    const m = c.match(/[\d.]+/g).map(Number);
    return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 };
  };
  const lum = ({r, g, b}) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const over = (top, bottom) => ({r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
                                  b: top.b * top.a + bottom.b * (1 - top.a), a: 1});
  const background = (node) => {
    const layers = [];
    for (let n = node; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c.a > 0) layers.push(c);
      if (c.a === 1) break;
    }
    return layers.reverse().reduce((acc, c) => over(c, acc), {r: 255, g: 255, b: 255, a: 1});
  };
  const opacity = (node) => { let o = 1; for (let n = node; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity); return o; };
  const failures = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const node = text.parentElement;
    if (!text.textContent.trim() || !node || node.closest("[hidden], :disabled, .visually-hidden")) continue;
    if (!node.getClientRects().length || getComputedStyle(node).visibility === "hidden") continue;
    const style = getComputedStyle(node);
    const bg = background(node);
    const fg = rgba(style.color);
    fg.a *= opacity(node);
    const [l1, l2] = [lum(over(fg, bg)), lum(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) failures.push(`${ratio.toFixed(2)}:1 "${text.textContent.trim().slice(0, 30)}"`);
  }
  return failures;
}
