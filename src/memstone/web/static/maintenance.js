// Maintenance proposals (issue 14) in the Explorer: list what a maintenance run proposed for the scope shown,
// start a dry run that proposes, and accept (written now, through the normal write path) or reject each one.
// Over /api/maintenance only; every string is text.

import { h } from "./dom.js";

export async function openMaintenance({ api, toast, explain, scope, onApplied }) {
  const dialog = document.getElementById("maint-dialog");
  const list = document.getElementById("maint-items");
  const note = document.getElementById("maint-note");
  const refresh = () => openMaintenance({ api, toast, explain, scope, onApplied });
  const decide = async (p, verb) => {
    try {
      const { data } = await api("POST", `/api/maintenance/proposals/${encodeURIComponent(p.proposal_id)}/${verb}`);
      const st = data.proposal.status;
      toast(st === "APPLIED" ? "Applied" : st === "REJECTED" ? "Rejected" : `Not applied: ${st}${data.proposal.result ? ` (${data.proposal.result})` : ""}`,
        { error: st !== "APPLIED" && st !== "REJECTED" });
      await refresh();
      if (st === "APPLIED") await onApplied();
    } catch (err) { toast(explain(err), { error: true }); }
  };
  document.getElementById("maint-run").onclick = async () => {
    try {
      const { data } = await api("POST", "/api/maintenance/runs", { query: { scope }, body: { mode: "dry-run" } });
      toast(`Dry run ${data.run.status.toLowerCase()}: ${data.proposals.length} proposal${data.proposals.length === 1 ? "" : "s"}`);
      await refresh();
    } catch (err) { toast(explain(err), { error: true }); }
  };
  let items = [];
  try {
    items = (await api("GET", "/api/maintenance/proposals", { query: { scope, status: "PROPOSED" } })).data.proposals;
  } catch (err) { toast(explain(err), { error: true }); return; }
  note.textContent = `Proposals waiting for a decision in ${scope.replace(/^memstone:\/\//, "")}.`;
  list.replaceChildren(...(items.length ? items.map((p) => h("li", { class: "maint-item", "data-id": p.proposal_id },
    h("div", { class: "maint-head" }, h("span", { class: "badge" }, p.kind), " ", h("strong", { class: "maint-action" }, p.action)),
    h("p", { class: "maint-evidence" }, p.evidence),
    p.text ? h("blockquote", { class: "maint-text" }, p.text) : null,
    h("p", { class: "maint-entries" }, "Entries: ", ...p.entries.flatMap((e, i) => [i ? ", " : "", h("code", null, e)])),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: () => decide(p, "accept") }, "Accept"),
      h("button", { type: "button", onclick: () => decide(p, "reject") }, "Reject"))))
    : [h("li", { class: "maint-empty" }, "No proposal waits. A dry run looks for duplicates, stale and empty entries.")]));
  if (!dialog.open) dialog.showModal();
}
