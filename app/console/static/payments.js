// The Unpaid view: final awards not yet paid (the liability), the supervisor's pay
// action, a second operator's witness, and the printable payout slip (docs/api.md
// "Payments"). The slip prints alone: payments.css's print rules hide the rest.

import { $, clear, el, field, money, row, when } from "./dom.js";
import { ApiError, call, get } from "./api.js";

const METHODS = ["cash", "chips", "cheque", "transfer", "table"];
const you = { name: null, role: null };

// An award's id keeps its slashes in the path: each part encoded on its own.
function awardPath(id, action) {
  return `/v1/awards/${id.split("/").map(encodeURIComponent).join("/")}/${action}`;
}

function say(text, kind) {
  const node = $("#unpaid-result");
  node.className = `result ${kind}`;
  node.textContent = text;
}

function failed(error) {
  say(error instanceof ApiError ? error.describe() : String(error), "error");
}

function what(a) {
  return `${a.kind.replace(/_/g, " ")} · ${a.link ?? "no link"}${a.meter ? ` · ${a.meter}` : ""}`;
}

function payForm(a) {
  const id = a.id.replace(/[^A-Za-z0-9]/g, "-");
  const amount = el("input", { id: `pay-amount-${id}`, value: a.amount, inputmode: "decimal", autocomplete: "off" });
  const method = el("select", { id: `pay-method-${id}` }, METHODS.map((m) => el("option", { value: m, text: m })));
  const reference = el("input", { id: `pay-reference-${id}`, maxlength: "200", autocomplete: "off" });
  const note = el("input", { id: `pay-note-${id}`, maxlength: "500", autocomplete: "off" });
  const form = el("form", { class: "pay-form", dataset: { award: a.id } },
    field("Amount paid", amount, `The award's amount: ${money(a.amount)}`), field("Method", method),
    field("Reference (cheque no., transfer id)", reference), field("Note", note),
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "pay-submit", text: "Record payment" }),
      el("button", { type: "button", class: "secondary", text: "Cancel", onclick: () => form.remove() })));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const { data } = await call("POST", awardPath(a.id, "paid"), {
        body: { amount: amount.value.trim(), method: method.value, reference: reference.value, note: note.value },
      });
      say(data.state === "paid"
        ? `Award ${a.id} paid: ${data.id}.`
        : `Payment ${data.id} recorded: it needs a second operator's witness before the award is paid.`, "ok");
      await load();
      if (data.state === "paid") await showSlip(a.id);
    } catch (error) { failed(error); }
  });
  return form;
}

async function confirm(a) {
  try {
    const { data } = await call("POST", awardPath(a.id, "paid/confirm"));
    say(`Payment ${data.id} witnessed by ${data.witness}: award ${a.id} is paid.`, "ok");
    await load();
    await showSlip(a.id);
  } catch (error) { failed(error); }
}

function action(a, cell) {
  if (a.payment) {
    const own = a.paid_by === you.name;
    return el("button", {
      type: "button", class: "small confirm", disabled: own,
      title: own ? "You recorded this payment: a different operator witnesses it." : undefined,
      text: "Confirm as witness", onclick: () => confirm(a),
    });
  }
  if (you.role !== "supervisor") return el("span", { class: "muted", text: "a supervisor pays" });
  return el("button", {
    type: "button", class: "small pay", text: "Pay",
    onclick: () => { if (!cell.querySelector("form")) cell.append(payForm(a)); },
  });
}

function renderUnpaid(data) {
  const body = clear($("#unpaid tbody"));
  for (const a of data.awards) {
    const cell = el("td", { class: "pay-cell" });
    cell.append(action(a, cell));
    const status = a.payment ? `awaiting witness: ${a.payment} by ${a.paid_by}` : "unpaid";
    const tr = row([when(a.dealt_at), what(a), a.table, a.round, String(a.box), (a.hand || "").replace(/_/g, " "),
      el("td", { class: "num", text: money(a.amount) }), status, cell]);
    tr.dataset.award = a.id;
    body.append(tr);
  }
  $("#unpaid-empty").hidden = data.awards.length > 0;
  $("#unpaid-status").textContent = `${data.total} unpaid award${data.total === 1 ? "" : "s"}.`;
}

function renderPaid(data) {
  const body = clear($("#paid tbody"));
  for (const a of data.awards) {
    const tr = row([when(a.paid_at), what(a), a.table, a.round, String(a.box),
      el("td", { class: "num", text: money(a.amount) }), a.method, a.paid_by, a.witness || "—",
      el("td", {}, el("button", { type: "button", class: "small secondary slip", text: "Slip", onclick: () => showSlip(a.id) }))]);
    tr.dataset.award = a.id;
    body.append(tr);
  }
}

export async function load() {
  const status = $("#unpaid-status");
  try {
    const [unpaid, paid] = await Promise.all([
      get("/v1/awards", { state: "final", limit: 1000 }),
      get("/v1/awards", { state: "paid", limit: 50 }),
    ]);
    status.classList.remove("error");
    renderUnpaid(unpaid);
    renderPaid(paid);
  } catch (error) {
    status.classList.add("error");
    status.textContent = error instanceof ApiError ? error.describe() : String(error);
  }
}

// The payout slip: what was paid, to which hand, by whom, witnessed by whom, and the
// journal entries (seq and chained hash) that record it, to check it against later.
export async function showSlip(id) {
  const slip = await get(awardPath(id, "slip"));
  const a = slip.award;
  const p = slip.payment;
  const fields = clear($("#slip-fields"));
  const add = (label, value, name) => fields.append(el("dt", { text: label }),
    el("dd", { dataset: { field: name } }, value));
  add("Award", a.id, "award");
  add("Hand", `${(a.hand || "").replace(/_/g, " ")} (${a.kind.replace(/_/g, " ")})`, "hand");
  add("Amount", money(p.amount), "amount");
  add("Table / round / box", `${a.table} / ${a.round} / box ${a.box}`, "where");
  add("Link / level", `${a.link ?? "no link"}${a.meter ? ` / ${a.meter}` : ""}`, "link");
  add("Dealt at", when(a.dealt_at), "dealt_at");
  add("Paid at", when(p.paid_at), "paid_at");
  add("Method / reference", `${p.method}${p.reference ? ` / ${p.reference}` : ""}`, "method");
  add("Paid by", p.paid_by, "paid_by");
  add("Witness", p.witness || (p.needs_witness ? "awaiting" : "not required"), "witness");
  add("Payment", p.id, "payment");
  for (const entry of slip.journal) {
    add(`Journal entry ${entry.seq}`, el("code", { text: entry.hash ?? "not yet committed" }), `journal-${entry.seq}`);
  }
  $("#slip-card").hidden = false;
  $("#slip-card").scrollIntoView({ block: "nearest" });
}

export function setupPayments(who) {
  you.name = who.name;
  you.role = who.role;
  $("#unpaid-refresh").addEventListener("click", load);
  $("#slip-print").addEventListener("click", () => window.print());
  $("#slip-close").addEventListener("click", () => { $("#slip-card").hidden = true; });
}
