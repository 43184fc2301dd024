// The one way the Explorer builds DOM: createElement + textContent (never innerHTML), so every string a user or
// a memory supplies is text, whatever it contains.

export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

// Dates and times in the reader's locale and time zone (the browser's), with the exact UTC instant as a tooltip.
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return h("time", { datetime: iso, title: iso }, Number.isNaN(d.getTime()) ? iso : DATE.format(d));
}

// A one-line label from a Markdown body: the first non-empty line, whole (never cut), with Markdown syntax
// removed but every word of the text kept: link and image text stay, parentheses and brackets that are not
// Markdown stay, underscores inside words stay.
export function firstLine(text) {
  const line = (text || "").split("\n").find((l) => l.trim()) || "";
  return line
    .replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)/, "")
    .replace(/!\[([^\]]*)\]\([^)\s]*(\s+"[^"]*")?\)/g, "$1")
    .replace(/\[([^\]]+)\]\([^)\s]*(\s+"[^"]*")?\)/g, "$1")
    .replace(/<((?:https?:|mailto:)[^>\s]+)>/g, "$1")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1")
    .replace(/(^|[^\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g, "$1$2")
    .replace(/(^|[^\w])_(?=\S)([^_]+?)(?<=\S)_(?!\w)/g, "$1$2")
    .replace(/\s+#+\s*$/, "")
    .trim();
}
