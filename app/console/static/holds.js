// Why a jackpot is pending: the round(s) holding each award, how long, and the remedies
// (the table posts the outcome or voids the round, rule 5.17; or a supervisor voids it
// here, an audited void_round correction, proposed first where dual control is on).

import { $, ago, el, when } from "./dom.js";
import { ApiError, call, path } from "./api.js";
import { codeSelect } from "./reason_codes.js";

const HAND = (h) => (h || "").replace(/_/g, " ");
const seconds = (ms) => `${Math.round(ms / 1000)} s`;
const ctx = { role: null, dual: false };
let target = null; // the round the void dialog is about: {link, meter, table, round}

export function setHoldsRole(role) { ctx.role = role; }

function holder(h) {
  return el("span", { class: "holder" }, `round `, el("code", { class: "id", text: h.round }),
    ` at table `, el("code", { class: "id", text: h.table }), ` (open since `, when(h.open_since), `)`);
}

// The link's pending awards, each with what holds it.
export function pendingList(floor, link) {
  if (!link.pending.length) return el("p", { class: "muted", text: "No award pending." });
  return el("ul", { class: "pending" }, link.pending.map((p) => el("li", { dataset: { award: p.id } },
    el("strong", { text: "Jackpot pending" }),
    ` ${p.meter} · table ${p.table} · box ${p.box} · ${HAND(p.hand)} · dealt `, when(p.dealt_at),
    el("span", { class: "why" }, ...(p.held_by?.length
      ? ["Held by ", ...p.held_by.flatMap((h, i) => [i ? ", " : "", holder(h)]),
         ": it is paid once that round has its outcome or is void, at the latest ", when(p.final_by),
         ` (${ago(floor.now, p.final_by).replace(" ago", "")} from now).`]
      : ["Nothing holds it: it is paid within seconds (the hold for late bets)."])))));
}

// Rounds holding awards past the floor's warning time: plain words and the remedies.
export function holdWarnings(floor, link) {
  const late = (link.holding_rounds || []).filter((r) => r.warning);
  if (!late.length) return null;
  return el("div", { class: "hold-warnings", role: "alert" }, late.map((r) => {
    const n = r.awards.length;
    const award = link.pending.find((p) => r.awards.includes(p.id));
    return el("div", { class: "hold-warning", dataset: { table: r.table, round: r.round } },
      el("p", {}, el("strong", { text: `Round ${r.round} at table ${r.table} is holding ${n} jackpot${n === 1 ? "" : "s"}` }),
        ` for ${seconds(r.held_for_ms)}: its bets closed `, when(r.open_since), ` and it has no outcome yet. ` +
        `The jackpot${n === 1 ? " is" : "s are"} paid once the round has its outcome or is void, at the latest `, when(r.ends_by), "."),
      el("p", { class: "remedy" }, "Ask table ", el("strong", { text: r.table }),
        " to post the round's outcome, or to void the round (rule 5.17)",
        ctx.role === "supervisor" && award ? ". Or void it from here:" : "."),
      ctx.role === "supervisor" && award ? el("button", {
        type: "button", class: "danger small", dataset: { key: `void/${r.table}/${r.round}` },
        onclick: () => openVoid({ link: link.link, meter: award.meter, table: r.table, round: r.round }, floor),
      }, `Void round ${r.round} at ${r.table}…`) : null);
  }));
}

function dialog() {
  let d = $("#void-dialog");
  if (d) return d;
  d = el("dialog", { id: "void-dialog", "aria-labelledby": "void-title" },
    el("form", { method: "dialog", id: "void-form" },
      el("h3", { id: "void-title", text: "Void a round" }),
      el("p", { id: "void-what" }),
      el("label", { for: "void-code", text: "Listed reason (required: it lowers the meter)" }),
      codeSelect("void-code"),
      el("label", { for: "void-reason", text: "Reason (recorded in the audit log)" }),
      el("textarea", { id: "void-reason", rows: 2, required: true }),
      el("p", { id: "void-result", class: "result", role: "status", "aria-live": "polite" }),
      el("div", { class: "actions" },
        el("button", { type: "submit", id: "void-confirm", class: "danger", text: "Void the round" }),
        el("button", { type: "button", id: "void-cancel", class: "secondary", text: "Close" }))));
  document.body.append(d);
  $("#void-cancel").addEventListener("click", () => d.close());
  $("#void-form").addEventListener("submit", (event) => { event.preventDefault(); submitVoid(); });
  return d;
}

function openVoid(round, floor) {
  target = round;
  ctx.dual = floor.dual_control;
  const d = dialog();
  $("#void-what").textContent = `Round ${round.round} at table ${round.table}: its contributions leave the meter now ` +
    `and the jackpots it holds are paid in deal order. ` +
    (ctx.dual ? "Dual control is on: this is a proposal a second supervisor approves under Changes." : "It takes effect at once.");
  $("#void-reason").value = "";
  $("#void-code").value = "";
  $("#void-result").textContent = "";
  $("#void-confirm").disabled = false;
  d.showModal();
  $("#void-reason").focus();
}

async function submitVoid() {
  const reason = $("#void-reason").value.trim();
  const code = $("#void-code").value;
  const result = $("#void-result");
  if (!code) { result.className = "result error"; result.textContent = "Choose a listed reason: voiding the round lowers the meter."; return; }
  if (!reason) { result.className = "result error"; result.textContent = "Give a reason: it is recorded."; return; }
  $("#void-confirm").disabled = true;
  try {
    const { status, data } = await call("POST", path("v1", "links", target.link, "meters", target.meter, "corrections"),
      { body: { kind: "void_round", table: target.table, round: target.round, reason, reason_code: code } });
    result.className = "result ok";
    result.textContent = status === 202
      ? `Proposed as ${data.id}: a second supervisor approves it under Changes.`
      : `Round ${target.round} at table ${target.table} is void (recorded by ${data.by}).`;
  } catch (error) {
    $("#void-confirm").disabled = false;
    result.className = "result error";
    result.textContent = error instanceof ApiError ? error.describe() : String(error);
  }
}
