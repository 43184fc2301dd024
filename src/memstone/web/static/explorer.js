// The Memory Explorer: a catalogue, a detail view with the revision chain, and create / edit / flag / relate /
// remove, over /api/memories only. No framework, no remote asset, no innerHTML: every node is built with
// createElement and textContent, and memory bodies go through the safe Markdown renderer.

import { byline, reasonText, renderComparison } from "./diff.js";
import { firstLine, h, when } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { openMaintenance } from "./maintenance.js";

const KINDS = ["fact", "preference", "decision", "constraint", "convention", "correction", "lesson", "pattern",
  "procedure", "working_note"];
const TOKEN_KEY = "memstone.token";
const PAGE = 50;

const $ = (id) => document.getElementById(id);

const state = {
  session: null,
  scope: null,
  scopes: [],
  items: [],
  next: null,
  q: "",
  mode: "auto",
  filters: { kind: "", tag: "", important: false, mandatory: false, all: false },
  entry: null,
  record: null,
  etag: null,
  chain: [],
  shown: null,
  compare: null,
};

// ------------------------------------------------------------------------------------------------- API
class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
    this.hint = body?.error?.hint;
    this.body = body;
  }
}

async function api(method, path, { query, body, headers } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v === undefined || v === null || v === "" || v === false) continue;
    for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
  }
  const init = { method, headers: { Accept: "application/json", ...(headers || {}) } };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    // Without a token yet, a 401 is the server asking for one, not an error: the sign-in dialog says why.
    if (res.status === 401) await login(token ? err.message : null);
    throw err;
  }
  return { data, etag: res.headers.get("etag"), status: res.status };
}

// ------------------------------------------------------------------------------------------------- addresses
function scopePath(uri) {
  return uri.replace(/^memstone:\/\//, "");
}

function address(scope, entry, version, compare) {
  let path = "/memory/explorer/" + scopePath(scope).split("/").map(encodeURIComponent).join("/") + "/";
  if (entry) path += encodeURIComponent(entry);
  if (compare) path += `?from=${encodeURIComponent(compare.from)}&to=${encodeURIComponent(compare.to)}`;
  else if (version) path += `?v=${encodeURIComponent(version)}`;
  return path;
}

function parseLocation() {
  const rest = location.pathname.replace(/^\/memory\/explorer\/?/, "");
  const parts = rest.split("/").filter(Boolean).map(decodeURIComponent);
  let entry = null;
  if (parts.length && parts[parts.length - 1].startsWith("ent_")) entry = parts.pop();
  const scope = parts.length ? "memstone://" + parts.join("/") : null;
  const params = new URLSearchParams(location.search);
  const from = params.get("from");
  const to = params.get("to");
  return { scope, entry, version: params.get("v"), compare: from && to ? { from, to } : null };
}

function navigate(url, { replace = false } = {}) {
  history[replace ? "replaceState" : "pushState"](null, "", url);
  route();
}

// ------------------------------------------------------------------------------------------------- feedback
let toastTimer = null;

function toast(message, { error = false } = {}) {
  const box = $("toast");
  box.textContent = message;
  box.className = error ? "toast show error" : "toast show";
  box.setAttribute("role", error ? "alert" : "status");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.className = "toast"; }, error ? 8000 : 3500);
}

function explain(err) {
  if (err instanceof ApiError) return err.hint ? `${err.message} — ${err.hint}` : err.message;
  return String(err?.message || err);
}

function label(rec) {
  return rec.title || firstLine(rec.text) || `(${rec.kind})`;
}

// ------------------------------------------------------------------------------------------------- session
let loginWaiter = null;

function login(message) {
  const dialog = $("login");
  if (loginWaiter) return loginWaiter;
  const err = $("login-error");
  err.hidden = !message;
  err.textContent = message || "";
  loginWaiter = new Promise((resolve) => {
    $("login-form").onsubmit = (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("l-token").value.trim());
      dialog.close();
      loginWaiter = null;
      state.session = null;
      resolve();
      route();
    };
  });
  if (!dialog.open) dialog.showModal();
  return loginWaiter;
}

async function loadSession() {
  const { data } = await api("GET", "/api/session");
  state.session = data;
  const who = $("who");
  who.textContent = data.mode === "local" ? "local mode" : `${data.principal.user} · ${data.principal.org}`;
  who.title = data.mode === "local" ? "Bound to this machine; no token needed" : `Signed in as ${data.principal.user}`;
}

async function loadScopes() {
  const { data } = await api("GET", "/api/memories/scopes");
  state.scopes = data.items;
  const select = $("scope");
  select.replaceChildren();
  const known = new Set();
  for (const s of data.items) {
    known.add(s.scope);
    select.append(h("option", { value: s.scope, selected: s.scope === state.scope }, scopePath(s.scope)));
  }
  if (!known.has(state.scope)) select.append(h("option", { value: state.scope, selected: true }, scopePath(state.scope)));
}

// ------------------------------------------------------------------------------------------------- catalogue
function filterQuery() {
  const f = state.filters;
  return {
    kind: f.kind || undefined,
    tag: f.tag ? [f.tag] : undefined,
    important: f.important || undefined,
    mandatory: f.mandatory || undefined,
  };
}

// Each load takes a ticket; an answer that arrives after a newer load began is dropped, so a slow list can
// never overwrite the search the user asked for after it.
const tickets = { catalogue: 0, entry: 0 };

async function loadCatalogue({ reset = true } = {}) {
  const ticket = ++tickets.catalogue;
  const stale = () => ticket !== tickets.catalogue;
  const summary = $("summary");
  summary.textContent = "Loading…";
  try {
    if (state.q) {
      const { data } = await api("GET", "/api/memories/search", {
        query: { q: state.q, mode: state.mode, limit: PAGE, scope: [state.scope], ...filterQuery() },
      });
      if (stale()) return;
      state.items = data.hits.map((hit) => ({ ...hit, state: "active", score: hit.score }));
      state.next = null;
      const how = data.fallback_reason ? `${data.mode} (${data.fallback_reason})` : data.mode;
      summary.textContent = `${data.hits.length} result${data.hits.length === 1 ? "" : "s"} for “${state.q}” · ${how}`;
    } else {
      const { data } = await api("GET", "/api/memories", {
        query: {
          scope: state.scope, ...filterQuery(), state: state.filters.all ? "all" : undefined, limit: PAGE,
          cursor: reset ? undefined : state.next,
        },
      });
      if (stale()) return;
      state.items = reset ? data.items : state.items.concat(data.items);
      state.next = data.next_cursor;
      summary.textContent = data.total === 0
        ? (data.memory_ref ? "No memory matches these filters." : "This scope has no memories yet.")
        : `${data.total} memor${data.total === 1 ? "y" : "ies"} · ${scopePath(state.scope)}`;
    }
  } catch (err) {
    if (stale()) return;
    state.items = [];
    state.next = null;
    summary.textContent = explain(err);
  }
  renderItems();
}

function badges(rec) {
  return [
    rec.mandatory ? h("span", { class: "badge mandatory", title: "Mandatory: loaded at every session start" }, "mandatory") : null,
    rec.important ? h("span", { class: "badge important", title: "Important: curated reference" }, "important") : null,
    rec.state === "inactive" ? h("span", { class: "badge removed" }, "removed") : null,
    rec.superseded ? h("span", { class: "badge superseded" }, "archived match") : null,
    isStale(rec) ? staleBadge() : null,
  ];
}

// Flagged stale by maintenance (the "stale" tag): its evidence changed after it was written.
function isStale(rec) {
  return rec.stale === true || (Array.isArray(rec.tags) && rec.tags.includes("stale"));
}

function staleBadge() {
  return h("span", { class: "badge stale", title: "Stale: its evidence changed after it was written; re-check it" }, "stale");
}

const CHANNELS = { fts: "full-text", vector: "vector" };
const PARTS = { lexical: "full-text", dense: "vector" };

// A hit's score is its relevance on [0, 1] (convex fusion: the lexical and dense channels' scores, weighed); it is
// shown as a share with what it is made of, and not at all when it is not on that scale.
function relevance(hit) {
  const score = hit.score;
  if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) return null;
  const parts = Object.entries(PARTS).filter(([k]) => typeof hit.contributions?.[k] === "number")
    .map(([k, name]) => `${name} ${hit.contributions[k].toFixed(2)}`);
  const by = (hit.matched_by || []).map((c) => CHANNELS[c] || c).join(" and ");
  const pct = Math.round(score * 100);
  const says = `Relevance ${pct} % (1 is a perfect match)${by ? `, matched by ${by}` : ""}${parts.length ? ": " + parts.join(", ") : ""}`;
  return h("span", { class: "score", title: says, "aria-label": says },
    h("meter", { min: 0, max: 1, value: score, "aria-hidden": "true" }), `${pct} %`);
}

function renderItems() {
  const list = $("items");
  list.replaceChildren();
  const kinds = new Set(KINDS);
  const targets = $("targets");
  targets.replaceChildren();
  for (const rec of state.items) {
    kinds.add(rec.kind);
    targets.append(h("option", { value: rec.entry_id }, label(rec)));
    const current = rec.entry_id === state.entry;
    list.append(h("li", { class: current ? "item current" : "item" },
      h("a", { href: address(state.scope, rec.entry_id), "data-nav": true, "aria-current": current ? "page" : null },
        h("span", { class: "item-title" }, label(rec)),
        h("span", { class: "item-meta" },
          h("span", { class: "kind" }, rec.kind), ...badges(rec),
          ...(rec.tags || []).slice(0, 4).map((t) => h("span", { class: "tag" }, `#${t}`)),
          relevance(rec)))));
  }
  $("more").hidden = !state.next;
  const kindSelect = $("f-kind");
  const chosen = state.filters.kind;
  kindSelect.replaceChildren(h("option", { value: "" }, "any"),
    ...[...kinds].sort().map((k) => h("option", { value: k, selected: k === chosen }, k)));
  $("kinds").replaceChildren(...[...kinds].sort().map((k) => h("option", { value: k })));
}

function markSelected() {
  for (const a of document.querySelectorAll("#items a")) {
    const on = a.getAttribute("href").endsWith("/" + state.entry);
    a.toggleAttribute("aria-current", on);
    a.parentElement.classList.toggle("current", on);
  }
  document.body.classList.toggle("show-detail", Boolean(state.entry));
}

// ------------------------------------------------------------------------------------------------- detail
function showEmpty() {
  state.entry = null;
  state.record = null;
  const detail = $("detail");
  detail.replaceChildren(h("div", { class: "empty" },
    h("h1", null, "Memory Explorer"),
    h("p", null, `Scope ${scopePath(state.scope)}. Pick a memory from the catalogue, search, or create one.`)));
}

async function loadEntry(entryId, versionRef, compare = null) {
  const ticket = ++tickets.entry;
  const stale = () => ticket !== tickets.entry;
  const detail = $("detail");
  detail.setAttribute("aria-busy", "true");
  try {
    const [{ data: entry, etag }, { data: hist }] = await Promise.all([
      api("GET", `/api/memories/${encodeURIComponent(entryId)}`),
      api("GET", `/api/memories/${encodeURIComponent(entryId)}/versions`, { query: { limit: 200 } }),
    ]);
    if (stale()) return;
    state.entry = entryId;
    state.record = entry.record;
    state.etag = etag;
    state.chain = hist.items;
    let shown = null;
    if (versionRef) {
      shown = hist.items.find((v) => String(v.version) === versionRef || v.entry_version_id === versionRef);
      if (!shown) shown = (await api("GET", `/api/memories/${encodeURIComponent(entryId)}/versions/${encodeURIComponent(versionRef)}`)).data;
      if (shown.status === "current" || shown.entry_version_id === state.record.entry_version_id) shown = null;
    }
    state.shown = shown;
    state.compare = null;
    if (compare) {
      const { data: diff } = await api("GET", `/api/memories/${encodeURIComponent(entryId)}/diff`,
        { query: { from: compare.from, to: compare.to } });
      const side = (ref) => hist.items.find((v) => v.entry_version_id === ref.entry_version_id) || ref;
      state.compare = { ...compare, diff, from: side(diff.from), to: side(diff.to) };
    }
    if (stale()) return;
    if (entry.record.scope && entry.record.scope !== state.scope) {
      history.replaceState(null, "", address(entry.record.scope, entryId, versionRef, compare));
      state.scope = entry.record.scope;
      await loadScopes();
      await loadCatalogue();
      if (stale()) return;
    }
    renderDetail();
  } catch (err) {
    if (stale()) return;
    state.entry = entryId;
    state.record = null;
    detail.replaceChildren(h("div", { class: "empty" }, h("h1", null, "Not found"), h("p", null, explain(err)),
      h("p", null, h("a", { href: address(state.scope), "data-nav": true }, "Back to the catalogue"))));
  } finally {
    if (!stale()) detail.removeAttribute("aria-busy");
  }
}

function chainIndex() {
  const id = state.shown ? state.shown.entry_version_id : state.record.entry_version_id;
  return state.chain.findIndex((v) => v.entry_version_id === id);
}

function versionHref(v) {
  const latest = state.chain[state.chain.length - 1];
  return address(state.scope, state.entry, v && latest && v.entry_version_id !== latest.entry_version_id ? v.version : null);
}

function renderDetail() {
  const rec = state.record;
  const view = state.shown || rec;
  const detail = $("detail");
  const idx = chainIndex();
  const total = state.chain.length || rec.revision;
  const number = state.shown ? state.shown.version : rec.revision;
  const prev = idx > 0 ? state.chain[idx - 1] : null;
  const next = idx >= 0 && idx < state.chain.length - 1 ? state.chain[idx + 1] : null;
  const superseded = Boolean(state.shown);
  const removed = rec.state === "inactive";
  const status = superseded ? "superseded" : removed ? "removed" : "current";
  const author = state.shown ? state.shown.author : rec.updated_by;
  const written = state.shown ? state.shown.created_at : rec.updated_at;
  const hash = view.entry_content_hash;
  const shownItem = state.chain[idx] || null;

  const actions = h("div", { class: "toolbar", role: "toolbar", "aria-label": "Actions" });
  if (!superseded && !removed) {
    actions.append(
      h("button", { type: "button", id: "act-edit", onclick: () => openEditor(rec), "aria-keyshortcuts": "e" }, "Edit"),
      h("button", { type: "button", id: "act-important", "aria-pressed": String(rec.important),
        onclick: () => setFlag({ important: !rec.important }) }, rec.important ? "★ Important" : "☆ Important"),
      h("button", { type: "button", id: "act-mandatory", "aria-pressed": String(rec.mandatory),
        onclick: () => setFlag({ mandatory: !rec.mandatory }) }, rec.mandatory ? "● Mandatory" : "○ Mandatory"),
      h("button", { type: "button", id: "act-relate", onclick: openRelate }, "Relate"),
      h("button", { type: "button", id: "act-remove", class: "danger", onclick: confirmRemove }, "Remove"));
  } else if (removed && !superseded) {
    actions.append(h("button", { type: "button", id: "act-restore", class: "primary", onclick: restore }, "Restore"));
  } else if (superseded && !removed) {
    actions.append(h("button", { type: "button", id: "act-revert", onclick: () => revertTo(state.shown) },
      `Restore version ${state.shown.version} as a new revision`));
  }

  const nav = h("nav", { class: "versions-nav", "aria-label": "Versions" },
    prev ? h("a", { href: versionHref(prev), "data-nav": true, rel: "prev", id: "nav-prev", "aria-keyshortcuts": "[" }, `← v${prev.version}`)
         : h("span", { class: "disabled" }, "← previous"),
    h("span", { class: "position" }, `Revision ${number} of ${total}`),
    next ? h("a", { href: versionHref(next), "data-nav": true, rel: "next", id: "nav-next", "aria-keyshortcuts": "]" }, `v${next.version} →`)
         : h("span", { class: "disabled" }, "next →"),
    prev && shownItem ? h("a", { href: compareHref(prev, shownItem), "data-nav": true, id: "nav-diff", "aria-keyshortcuts": "d" },
      `What changed in v${shownItem.version}`) : null);

  const banner = superseded
    ? h("p", { class: "banner", role: "note" }, `You are reading revision ${number}, superseded by a newer one. `,
        h("a", { href: address(state.scope, state.entry), "data-nav": true }, "Go to the current revision"))
    : removed ? h("p", { class: "banner removed", role: "note" }, "This memory was removed. Its history is kept; Restore brings it back.")
    : null;

  const purge = shownItem && shownItem.purge;  // a purged version: when, by whom and why (issue 12)
  const purgedNote = purge
    ? h("p", { class: "banner removed", role: "note", id: "purged-note" },
        `This version's content was purged ${when(purge.purged_at)} by ${purge.author || "an unknown user"}: ${purge.reason}. `
        + "Its content hash is kept, so the history still verifies.")
    : null;

  const body = h("article", { class: "markdown", id: "body" });
  body.append(renderMarkdown(view.text));

  const meta = h("dl", { class: "meta" },
    ...row("Scope", rec.scope || "(unbound)"),
    ...row("Entry", h("code", null, rec.entry_id)),
    ...row("Version", h("code", null, view.entry_version_id)),
    ...row("Kind", view.kind),
    ...row("Tags", (view.tags || []).length ? view.tags.flatMap((t) => [h("span", { class: "tag" }, `#${t}`), " "]) : "—"),
    ...row("Slug", view.slug || "—"),
    ...row("Flags", [view.important ? "important" : null, view.mandatory ? "mandatory" : null].filter(Boolean).join(", ") || "—"),
    ...row("Author", author || "—"),
    ...row("Reason", shownItem ? reasonText(shownItem) : "—"),
    ...row("Created", when(rec.created_at)),
    ...row("Updated", when(written)),
    ...row("Content hash", h("code", { class: "hash", title: hash }, hash)),
    ...row("Memory", h("code", null, `${rec.memory_ref.memory_id}@${rec.memory_ref.revision}`)));

  const relations = (view.relations || []).length
    ? h("section", { class: "relations", "aria-label": "Relations" }, h("h2", null, "Relations"),
        h("ul", null, ...view.relations.map((r) => h("li", null,
          h("span", { class: "kind" }, r.kind), " ",
          h("a", { href: address(state.scope, r.target), "data-nav": true }, r.target),
          !superseded && !removed
            ? h("button", { type: "button", class: "link", title: "Remove this relation", "aria-label": `Remove relation to ${r.target}`,
                onclick: () => unrelate(r) }, "×")
            : null))))
    : null;

  const chain = h("section", { class: "chain", "aria-label": "Revision chain" }, h("h2", null, "Revision chain"),
    compareForm(view),
    h("ol", { id: "chain" }, ...state.chain.map((v, i) => {
      const here = !state.compare && v.entry_version_id === (state.shown ? state.shown.entry_version_id : rec.entry_version_id);
      const st = v.status === "deleted" ? "removed" : v.status;
      const before = i > 0 ? state.chain[i - 1] : null;
      return h("li", { class: here ? "here" : null, "data-version": v.version },
        h("a", { href: versionHref(v), "data-nav": true, "aria-current": here ? "true" : null },
          h("strong", null, `v${v.version}`), " ", h("span", { class: `badge ${st}` }, st)), " ",
        ...byline(v), " · ",
        h("code", { title: v.entry_content_hash }, v.entry_content_hash.slice(0, 12)),
        before ? [" · ", h("a", { class: "diff-link", href: compareHref(before, v), "data-nav": true,
          title: `What changed from v${before.version} to v${v.version}` }, "changes")] : null);
    })));

  if (state.compare) {
    const c = state.compare;
    detail.replaceChildren(...[
      h("p", { class: "back" }, h("a", { href: address(state.scope), "data-nav": true }, "← All memories")),
      h("header", { class: "detail-head" }, h("h1", { id: "detail-title" }, rec.title || label(rec)),
        h("div", { class: "badges" }, h("span", { class: "badge superseded", id: "status" }, "comparing"),
          h("span", { class: "kind" }, rec.kind))),
      h("p", { class: "banner", role: "note" }, `Comparing version ${c.from.version} with version ${c.to.version}. `,
        h("a", { href: address(state.scope, state.entry), "data-nav": true, id: "compare-close" }, "Back to the current revision")),
      renderComparison(c.diff, c.from, c.to), chain].filter(Boolean));
    document.title = `v${c.from.version} → v${c.to.version} · ${rec.title || label(rec)} · memstone Explorer`;
    return;
  }

  detail.replaceChildren(...[
    h("p", { class: "back" }, h("a", { href: address(state.scope), "data-nav": true }, "← All memories")),
    h("header", { class: "detail-head" },
      h("h1", { id: "detail-title" }, view.title || label(view)),
      h("div", { class: "badges" }, h("span", { class: `badge ${status}`, id: "status" }, status),
        view.mandatory ? h("span", { class: "badge mandatory" }, "mandatory") : null,
        view.important ? h("span", { class: "badge important" }, "important") : null,
        isStale(view) ? staleBadge() : null,
        h("span", { class: "kind" }, view.kind))),
    banner, purgedNote, actions, nav, body, relations, meta, chain].filter(Boolean));
  document.title = `${view.title || label(view)} · memstone Explorer`;
}

function compareHref(from, to) {
  return address(state.scope, state.entry, null, { from: String(from.version), to: String(to.version) });
}

// Pick any two versions to compare (default: the one shown against the one before it).
function compareForm(view) {
  if (state.chain.length < 2) return null;
  const c = state.compare;
  const at = c ? null : state.chain.findIndex((v) => v.entry_version_id === view.entry_version_id);
  const toDefault = c ? c.to.version : state.chain[Math.max(at, 1)].version;
  const fromDefault = c ? c.from.version : state.chain[Math.max(at, 1) - 1].version;
  const pick = (id, name, chosen) => h("label", null, name, " ", h("select", { id, "aria-label": `${name} version` },
    ...state.chain.map((v) => h("option", { value: v.version, selected: v.version === chosen }, `v${v.version}`))));
  return h("form", { class: "compare-form", id: "compare-form", onsubmit: (e) => {
    e.preventDefault();
    navigate(address(state.scope, state.entry, null, { from: $("cmp-from").value, to: $("cmp-to").value }));
  } }, pick("cmp-from", "Compare", fromDefault), pick("cmp-to", "with", toDefault),
  h("button", { type: "submit", id: "cmp-go" }, "Compare"));
}

function row(name, value) {
  return [h("dt", null, name), h("dd", null, value)];
}

// ------------------------------------------------------------------------------------------------- writes
async function afterWrite(message, { version = null } = {}) {
  toast(message);
  await Promise.all([loadEntry(state.entry, version), loadCatalogue()]);
  markSelected();
}

function conflictMessage(err) {
  const cur = err.body?.current;
  return cur ? `Someone changed this memory first: it is now at revision ${cur.revision}${cur.updated_by ? ` by ${cur.updated_by}` : ""}. Reload it and apply your change again.`
             : explain(err);
}

async function setFlag(flags) {
  try {
    const { data } = await api("POST", `/api/memories/${state.entry}/flag`, { body: { ...flags, revision: state.record.revision } });
    await afterWrite(`Saved as revision ${data.record.revision}`);
  } catch (err) {
    toast(err.status === 409 ? conflictMessage(err) : explain(err), { error: true });
    if (err.status === 409) await loadEntry(state.entry);
  }
}

async function restore() {
  try {
    await api("POST", `/api/memories/${state.entry}/reactivate`, { body: {} });
    await afterWrite("Restored");
  } catch (err) { toast(explain(err), { error: true }); }
}

async function revertTo(version) {
  try {
    const { data } = await api("POST", `/api/memories/${state.entry}/revert`, {
      body: { to: String(version.version), revision: state.record.revision },
    });
    history.replaceState(null, "", address(state.scope, state.entry));
    state.shown = null;
    await afterWrite(`Restored version ${version.version} as revision ${data.record.revision}`);
  } catch (err) { toast(err.status === 409 ? conflictMessage(err) : explain(err), { error: true }); }
}

async function unrelate(relation) {
  try {
    await api("DELETE", `/api/memories/${state.entry}/relations`, { query: { kind: relation.kind, target: relation.target } });
    await afterWrite("Relation removed");
  } catch (err) { toast(explain(err), { error: true }); }
}

function confirmRemove() {
  const dialog = $("confirm");
  $("confirm-title").textContent = `Remove “${label(state.record)}”?`;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "ok") return;
    try {
      await api("POST", `/api/memories/${state.entry}/forget`, { body: { revision: state.record.revision, reason: "removed in the Explorer" } });
      await afterWrite("Removed. Restore brings it back.");
    } catch (err) { toast(err.status === 409 ? conflictMessage(err) : explain(err), { error: true }); }
  };
  dialog.showModal();
}

function openRelate() {
  const dialog = $("relate");
  $("relate-error").hidden = true;
  $("r-target").value = "";
  $("relate-form").onsubmit = async (e) => {
    e.preventDefault();
    try {
      await api("POST", `/api/memories/${state.entry}/relations`, {
        body: { target: $("r-target").value.trim(), kind: $("r-kind").value, revision: state.record.revision },
      });
      dialog.close();
      await afterWrite("Related");
    } catch (err) {
      $("relate-error").textContent = err.status === 409 ? conflictMessage(err) : explain(err);
      $("relate-error").hidden = false;
    }
  };
  $("relate-cancel").onclick = () => dialog.close();
  dialog.showModal();
}

function openEditor(rec) {
  const dialog = $("editor");
  const creating = !rec;
  $("editor-title").textContent = creating ? `New memory in ${scopePath(state.scope)}` : "Edit memory";
  $("e-kind").value = rec ? rec.kind : "fact";
  $("e-title").value = rec?.title || "";
  $("e-tags").value = (rec?.tags || []).join(", ");
  $("e-slug").value = rec?.slug || "";
  $("e-important").checked = Boolean(rec?.important);
  $("e-mandatory").checked = Boolean(rec?.mandatory);
  $("e-text").value = rec?.text || "";
  $("e-reason").value = "";
  $("editor-error").hidden = true;
  const preview = () => $("e-preview").replaceChildren(renderMarkdown($("e-text").value));
  preview();
  $("e-text").oninput = preview;
  $("editor-cancel").onclick = () => dialog.close();
  const etag = state.etag;
  $("editor-form").onsubmit = async (e) => {
    e.preventDefault();
    const tags = $("e-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
    const fields = {
      kind: $("e-kind").value.trim(),
      title: $("e-title").value.trim() || null,
      tags,
      slug: $("e-slug").value.trim() || null,
      important: $("e-important").checked,
      mandatory: $("e-mandatory").checked,
      text: $("e-text").value,
    };
    const reason = $("e-reason").value.trim();
    if (reason) fields.reason = reason;
    $("editor-save").disabled = true;
    try {
      if (creating) {
        const { data } = await api("POST", "/api/memories", { query: { scope: state.scope }, body: fields });
        dialog.close();
        toast(data.record ? "Created" : "Already there");
        state.entry = data.record.entry_id;
        await loadCatalogue();
        navigate(address(state.scope, data.record.entry_id));
      } else {
        const { data } = await api("PATCH", `/api/memories/${rec.entry_id}`, { body: fields, headers: { "If-Match": etag } });
        dialog.close();
        history.replaceState(null, "", address(state.scope, rec.entry_id));
        await afterWrite(`Saved as revision ${data.record.revision}`);
      }
    } catch (err) {
      $("editor-error").textContent = err.status === 409 ? conflictMessage(err) : explain(err);
      $("editor-error").hidden = false;
    } finally {
      $("editor-save").disabled = false;
    }
  };
  dialog.showModal();
  $("e-text").focus();
}

// ------------------------------------------------------------------------------------------------- wiring
async function route() {
  try {
    if (!state.session) await loadSession();
  } catch (err) {
    if (err.status !== 401) $("summary").textContent = explain(err);
    return;
  }
  const loc = parseLocation();
  const scope = loc.scope || state.session.default_scope;
  if (!loc.scope) history.replaceState(null, "", address(scope, loc.entry, loc.version, loc.compare));
  if (scope !== state.scope) {
    state.scope = scope;
    await loadScopes().catch((err) => toast(explain(err), { error: true }));
    await loadCatalogue();
  }
  if (loc.entry) await loadEntry(loc.entry, loc.version, loc.compare);
  else showEmpty();
  markSelected();
}

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

// ------------------------------------------------------------------------------------------------- review queue
async function openReview() {
  const dialog = $("review-dialog");
  const list = $("review-items");
  const decide = async (item, verb) => {
    try {
      const { data } = await api("POST", `/api/capture/queue/${item.item_id}/${verb}`, verb === "reject" ? { body: {} } : {});
      toast(verb === "accept" ? `Accepted${data.entries.length ? `: ${data.entries.join(", ")}` : ""}` : "Rejected");
      await openReview();
      if (verb === "accept") await loadCatalogue();
    } catch (err) { toast(explain(err), { error: true }); }
  };
  let items = [];
  try {
    items = (await api("GET", "/api/capture/queue")).data.items;
  } catch (err) { toast(explain(err), { error: true }); return; }
  list.replaceChildren(
    ...(items.length ? items.map((item) => h("li", { class: "review-item", "data-id": item.item_id },
      h("span", { class: "badge" }, item.candidate ? item.candidate.kind : item.item_type),
      h("span", { class: "review-text" }, item.candidate ? item.candidate.text : (item.flag?.entry_excerpt || "")),
      h("span", { class: "review-scope" }, item.scope || ""),
      h("button", { type: "button", class: "primary", onclick: () => decide(item, "accept") }, "Accept"),
      h("button", { type: "button", onclick: () => decide(item, "reject") }, "Reject"),
    )) : [h("li", { class: "review-empty" }, "Nothing waits for review.")]),
  );
  if (!dialog.open) dialog.showModal();
}

function wire() {
  document.addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[data-nav]") : null;
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(a.getAttribute("href"));
    if (a.closest("#items")) $("detail").focus({ preventScroll: true });
  });
  window.addEventListener("popstate", route);
  $("search").addEventListener("submit", (e) => {
    e.preventDefault();
    state.q = $("q").value.trim();
    state.mode = $("mode").value;
    loadCatalogue();
  });
  $("q").addEventListener("search", () => {
    if (!$("q").value) { state.q = ""; loadCatalogue(); }
  });
  const onFilter = () => {
    state.filters = {
      kind: $("f-kind").value,
      tag: $("f-tag").value.trim(),
      important: $("f-important").checked,
      mandatory: $("f-mandatory").checked,
      all: $("f-all").checked,
    };
    loadCatalogue();
  };
  for (const id of ["f-kind", "f-important", "f-mandatory", "f-all"]) $(id).addEventListener("change", onFilter);
  $("f-tag").addEventListener("change", onFilter);
  $("more").addEventListener("click", () => loadCatalogue({ reset: false }));
  $("new").addEventListener("click", () => openEditor(null));
  $("review").addEventListener("click", openReview);
  $("maint").addEventListener("click", () => openMaintenance({ api, toast, explain, scope: state.scope,
    onApplied: () => Promise.all([loadCatalogue(), state.entry ? loadEntry(state.entry) : null]) }));
  $("scope").addEventListener("change", () => navigate(address($("scope").value)));
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey || typing(e.target)) return;
    if (document.querySelector("dialog[open]")) return;
    if (e.key === "/") { e.preventDefault(); $("q").focus(); }
    else if (e.key === "n") { e.preventDefault(); openEditor(null); }
    else if (e.key === "e" && $("act-edit")) { e.preventDefault(); $("act-edit").click(); }
    else if (e.key === "[" && $("nav-prev")) { e.preventDefault(); $("nav-prev").click(); }
    else if (e.key === "]" && $("nav-next")) { e.preventDefault(); $("nav-next").click(); }
    else if (e.key === "d" && $("nav-diff")) { e.preventDefault(); $("nav-diff").click(); }
  });
  route();
}

wire();
