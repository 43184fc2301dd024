// The comparison of two versions of one entry, from GET /api/memories/{id}/diff: each side's version, author,
// date and reason, a table of the fields that differ, and the body's line diff. Every value is text.

import { h, when } from "./dom.js";

const NAMES = {
  kind: "Kind", title: "Title", text: "Body", tags: "Tags", slug: "Slug", important: "Important",
  mandatory: "Mandatory", sources: "Evidence", artifacts: "Artifacts", relations: "Relations",
};

export function reasonText(v) {
  if (v.reason) return v.reason;
  return v.version === 1 ? "first version" : "no reason given";
}

export function byline(v) {
  return [when(v.created_at), " · ", h("span", { class: "author" }, v.author || "no author"),
    v.surface ? h("span", { class: "surface" }, ` via ${v.surface}`) : null, " · ",
    h("span", { class: "reason", title: "Why this version was written" }, reasonText(v))];
}

function item(value) {
  if (value && typeof value === "object") {
    if ("target" in value) return `${value.kind} → ${value.target}`;
    if ("memory_id" in value) return `${value.memory_id}@${value.revision}`;
    return JSON.stringify(value);
  }
  return String(value);
}

function key(value) {
  return value && typeof value === "object" ? JSON.stringify(value) : String(value);
}

// A field's value; in a set-valued field the items the other side lacks are marked (removed / added).
function value(v, marked, tag) {
  if (v === null || v === undefined || v === "") return h("span", { class: "none" }, "—");
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) {
    if (!v.length) return h("span", { class: "none" }, "none");
    const hot = new Set((marked || []).map(key));
    return h("ul", { class: "values" }, ...v.map((x) => h("li", null, hot.has(key(x)) ? h(tag, null, item(x)) : item(x))));
  }
  return String(v);
}

function lineClass(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "same";
}

export function renderComparison(diff, from, to) {
  const fields = diff.changes.filter((c) => c.field !== "text");
  const body = diff.changes.find((c) => c.field === "text");
  const lines = diff.text_diff.filter((l) => lineClass(l) !== "file");
  return h("section", { class: "compare", id: "compare", "aria-label": "Comparison" },
    h("h2", null, `Changes from v${from.version} to v${to.version}`),
    h("div", { class: "sides" },
      h("div", { class: "side from", id: "compare-from" }, h("strong", null, `v${from.version}`), " ", ...byline(from)),
      h("div", { class: "side to", id: "compare-to" }, h("strong", null, `v${to.version}`), " ", ...byline(to))),
    diff.identical ? h("p", { class: "identical", id: "compare-identical" }, "The two versions have the same content.") : null,
    fields.length
      ? h("table", { class: "fields", id: "compare-fields" },
          h("thead", null, h("tr", null, h("th", { scope: "col" }, "Field"),
            h("th", { scope: "col" }, `v${from.version}`), h("th", { scope: "col" }, `v${to.version}`))),
          h("tbody", null, ...fields.map((c) => h("tr", { "data-field": c.field },
            h("th", { scope: "row" }, NAMES[c.field] || c.field),
            h("td", { class: "old" }, value(c.old, c.removed, "del")),
            h("td", { class: "new" }, value(c.new, c.added, "ins"))))))
      : null,
    body
      ? h("div", { class: "text-diff-wrap" }, h("h3", null, "Body"),
          h("pre", { class: "text-diff", id: "text-diff", "aria-label": "Line changes in the body" },
            ...lines.map((l) => {
              const cls = lineClass(l);
              const tag = cls === "add" ? "ins" : cls === "del" ? "del" : "span";
              return h(tag, { class: `line ${cls}` }, l);
            })))
      : null);
}
