// The Changes view: seed change, reset and corrections (supervisors only: for other roles
// the forms are not built at all), and the proposals waiting for a second supervisor.

import { $, clear, el, field, money, moneyUnits, unitsText, when } from "./dom.js";
import { call, path } from "./api.js";
import { describeInPlay } from "./in_play.js";
import { confirmApproval, figureList, resetFigures } from "./approvals.js";
import { codeSelect } from "./reason_codes.js";

const MONEY = /^\d{1,9}(\.\d{1,2})?$/;
const SIGNED = /^-?\d{1,9}(\.\d{1,2})?$/;
const KINDS = {
  adjust: "Adjust the value (signed amount, the house gives or takes it)",
  hand_paid: "Jackpot paid by hand (5.18.1)",
  void_round: "Void a round whose award is already final (5.24)",
};

let ctx;

export function setupChanges(context) {
  ctx = context;
  const supervisor = ctx.role === "supervisor";
  const forms = clear($("#change-forms"));
  $("#role-note").hidden = supervisor;
  $("#role-note").textContent = supervisor ? "" :
    `Your role (${ctx.role}) may read everything but change nothing: seed changes, resets and corrections need a supervisor.`;
  if (supervisor) forms.append(seedForm(), resetForm(), correctionForm());
}

function meterSelect(id) {
  const select = el("select", { id, required: true });
  for (const link of ctx.floor().links) {
    for (const m of link.meters) {
      select.append(el("option", { value: `${link.link}/${m.meter}`, text: `${link.name} · ${m.name}` }));
    }
  }
  return select;
}

function current(select) {
  const [linkId, meterId] = select.value.split("/");
  const link = ctx.floor().links.find((l) => l.link === linkId);
  return { link, meter: link?.meters.find((m) => m.meter === meterId), linkId, meterId };
}

function reasonBox(id) {
  return el("textarea", { id, rows: 2, required: true, maxlength: 500, "aria-describedby": `${id}-hint` });
}

function verb(dual, proposeText, doText) {
  return dual ? proposeText : doText;
}

// A form: inputs, a preview of before -> after, a submit enabled only when it may be sent.
// A form's latest answer, kept in sight until the next click or key (at most 10 s): the
// proposal it made soon lands in the list above the forms and would push it out of view.
let answered = null;
for (const type of ["pointerdown", "keydown"]) document.addEventListener(type, () => { answered = null; }, true);

function changeForm(id, title, inputs, check, send) {
  const preview = el("p", { class: "preview", id: `${id}-preview`, "aria-live": "polite" });
  // What is missing, in grey until the form is used, then in red.
  const problem = el("p", { class: "error untouched", id: `${id}-problem` });
  const submit = el("button", { type: "submit", id: `${id}-submit`, disabled: true, "aria-describedby": `${id}-problem` });
  // The answer right under the button that asked for it.
  const result = el("p", { class: "result", id: `${id}-result`, role: "status", "aria-live": "polite" });
  const form = el("form", { id, class: "card change", novalidate: true, "aria-labelledby": `${id}-title` },
    el("h3", { id: `${id}-title`, text: title }), inputs, preview, problem, submit, result);
  const update = () => {
    const state = check();
    preview.replaceChildren(...(state.preview || []));
    problem.textContent = state.problem || "";
    submit.textContent = state.label;
    submit.disabled = Boolean(state.problem);
  };
  form.addEventListener("input", () => problem.classList.remove("untouched"));
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.refresh = update;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const state = check();
    if (state.problem) { problem.classList.remove("untouched"); update(); return; } // never sent
    submit.disabled = true;
    try {
      const answer = await send();
      ctx.report(answer.status === 202
        ? `Proposed as ${answer.data.id}: waiting for a different supervisor to approve or reject it.`
        : `Done: ${state.done}.`, "ok", result.id);
      form.reset();
      problem.classList.add("untouched");
      ctx.changed();
    } catch (error) {
      ctx.report(`Refused: ${error.describe ? error.describe() : error}`, "error", result.id);
    }
    update();
    result.scrollIntoView({ block: "nearest" }); // the answer stays in sight as the form resets
    answered = { node: result, until: Date.now() + 10_000 };
  });
  queueMicrotask(update);
  return form;
}

function seedForm() {
  const select = meterSelect("seed-meter");
  const value = el("input", { id: "seed-value", inputmode: "decimal", autocomplete: "off", placeholder: "15000.00" });
  const reason = reasonBox("seed-reason");
  const inputs = [field("Level", select), field("New seed", value, "Takes effect at the meter's next reset."),
    field("Reason (required)", reason, "Why: it goes into the audit log.")];
  return changeForm("seed-form", "Change a seed", inputs, () => {
    const { meter } = current(select);
    const dual = ctx.floor().dual_control;
    const label = verb(dual, "Propose the seed change", "Change the seed");
    if (!meter) return { label, problem: "Choose a level." };
    const text = value.value.trim();
    const before = money(meter.next_seed ?? meter.seed);
    const after = MONEY.test(text) ? money(text) : "?";
    const preview = [el("strong", { text: "Seed: " }), `${before} → ${after}`, ` (at the next reset; the value now, ${money(meter.value)}, does not change)`];
    if (!MONEY.test(text)) return { label, preview, problem: "Enter the new seed as an amount such as 15000.00." };
    if (meter.ceiling && moneyUnits(text) > moneyUnits(meter.ceiling)) return { label, preview, problem: `The seed may not exceed the ceiling, ${money(meter.ceiling)}.` };
    if (!reason.value.trim()) return { label, preview, problem: "A reason is required." };
    return { label, preview, done: `seed ${before} → ${after} at the next reset` };
  }, () => {
    const { linkId, meterId } = current(select);
    return call("PUT", path("v1", "links", linkId, "meters", meterId, "seed"), { body: { seed: value.value.trim(), reason: reason.value } });
  });
}

function resetForm() {
  const select = meterSelect("reset-meter");
  const reason = reasonBox("reset-reason");
  const code = codeSelect("reset-code");
  const inputs = [field("Level", select), field("Listed reason (required)", code),
    field("Reason (required)", reason, "Why: it goes into the audit log.")];
  return changeForm("reset-form", "Reset a meter to its seed", inputs, () => {
    const { meter } = current(select);
    const dual = ctx.floor().dual_control;
    const label = verb(dual, "Propose the reset", "Reset the meter");
    if (!meter) return { label, problem: "Choose a level." };
    const seed = meter.next_seed ?? meter.seed;
    const preview = [el("strong", { text: "If it took effect now:" }), figureList(resetFigures(meter), "reset", "reset-figures")];
    if (!code.value) return { label, preview, problem: "A listed reason is required." };
    if (!reason.value.trim()) return { label, preview, problem: "A reason is required." };
    return { label, preview, done: `meter reset from ${money(meter.value)} to ${money(seed)}` };
  }, () => {
    const { linkId, meterId } = current(select);
    return call("POST", path("v1", "links", linkId, "meters", meterId, "reset"), { body: { reason: reason.value, reason_code: code.value } });
  });
}

function correctionForm() {
  const select = meterSelect("corr-meter");
  const kind = el("select", { id: "corr-kind" }, Object.entries(KINDS).map(([k, t]) => el("option", { value: k, text: t })));
  const amount = el("input", { id: "corr-amount", inputmode: "decimal", autocomplete: "off", placeholder: "-25.00" });
  const reset = el("input", { id: "corr-reset", type: "checkbox", checked: true });
  const table = el("input", { id: "corr-table", autocomplete: "off", placeholder: "T01" });
  const round = el("input", { id: "corr-round", autocomplete: "off", placeholder: "R1001" });
  const reason = reasonBox("corr-reason");
  const code = codeSelect("corr-code");
  const resetField = el("div", { class: "field check" }, reset, el("label", { for: "corr-reset", text: "Return the meter to its seed afterwards" }));
  const amountField = field("Amount", amount);
  const roundFields = el("div", { class: "pair" }, field("Table", table), field("Round", round));
  const inputs = [field("Level", select), field("Correction", kind), amountField, resetField, roundFields,
    field("Listed reason (required when it lowers the meter)", code),
    field("Reason (required)", reason, "Why: it goes into the audit log.")];
  return changeForm("corr-form", "Correct a meter", inputs, () => {
    const { meter } = current(select);
    const k = kind.value;
    amountField.hidden = k === "void_round";
    resetField.hidden = k !== "hand_paid";
    roundFields.hidden = k !== "void_round";
    const dual = ctx.floor().dual_control;
    const label = verb(dual, "Propose the correction", "Apply the correction");
    if (!meter) return { label, problem: "Choose a level." };
    const text = amount.value.trim();
    let preview;
    let problem = null;
    if (k === "void_round") {
      preview = [el("strong", { text: "Value: " }), `${money(meter.value)} → less the round's contributions (the answer shows them)`];
      if (!table.value.trim() || !round.value.trim()) problem = "Name the table and the round.";
    } else {
      const ok = (k === "adjust" ? SIGNED : MONEY).test(text);
      const value = moneyUnits(meter.value);
      const delta = ok ? moneyUnits(text) : null;
      let after = "?";
      if (ok && k === "adjust") after = money(unitsText(value + delta));
      if (ok && k === "hand_paid") {
        const left = value - delta;
        after = money(unitsText(left < 0n ? 0n : left)) + (reset.checked ? `, then the seed ${money(meter.next_seed ?? meter.seed)}` : "");
      }
      preview = [el("strong", { text: "Value: " }), `${money(meter.value)} → ${after}`];
      if (!ok) problem = k === "adjust" ? "Enter a signed amount such as -25.00 or 25.00." : "Enter the amount paid, such as 10234.50.";
    }
    const lowers = k !== "adjust" || text.startsWith("-");
    if (!problem && lowers && !code.value) problem = "A listed reason is required: it lowers the meter.";
    if (!problem && !reason.value.trim()) problem = "A reason is required.";
    return { label, preview, problem, done: `${k.replace("_", " ")} on ${meter.name}` };
  }, () => {
    const { linkId, meterId } = current(select);
    const body = { kind: kind.value, reason: reason.value };
    if (code.value) body.reason_code = code.value;
    if (kind.value === "void_round") Object.assign(body, { table: table.value.trim(), round: round.value.trim() });
    else body.amount = amount.value.trim();
    if (kind.value === "hand_paid") body.reset = reset.checked;
    return call("POST", path("v1", "links", linkId, "meters", meterId, "corrections"), { body });
  });
}

export function refreshForms() {
  for (const form of document.querySelectorAll("#change-forms form")) form.refresh?.();
}

function describeChange(c) {
  if (c.kind === "suspend" || c.kind === "resume") return describeInPlay(c); // in_play.js
  const what = { seed: "seed", reset: "reset", correct: `correction: ${(c.correction || "").replace("_", " ")}` }[c.kind] || c.kind;
  const parts = [`${what} on ${c.link} · ${c.meter}`];
  if (c.seed !== undefined) parts.push(`new seed ${money(c.seed)}`);
  if (c.amount !== undefined && c.kind === "correct" && c.correction !== "void_round") parts.push(`amount ${money(c.amount)}`);
  if (c.table) parts.push(`round ${c.table}/${c.round}`);
  if (c.reason_code) parts.push(`listed reason ${c.reason_code}`);
  return parts.join(", ");
}

let shown = null;
let current_changes = [];

export function renderProposals(floor) {
  const changes = floor.changes || [];
  // Rebuilt only when the list changes: a reason being typed survives live updates; the
  // figures (they move with the meter) are refreshed in place.
  const key = JSON.stringify([changes.map(({ consequence, ...p }) => p), floor.dual_control]);
  current_changes = changes;
  if (key === shown) {
    for (const p of changes) {
      const cell = document.querySelector(`#proposals tr[data-change="${CSS.escape(p.id)}"] .what`);
      cell?.querySelector(".figures")?.replaceWith(figureList(p.consequence, p.change.kind));
    }
    return;
  }
  shown = key;
  const body = clear($("#proposals tbody"));
  $("#proposals-empty").hidden = changes.length > 0;
  $("#changes-count").hidden = changes.length === 0;
  $("#changes-count").textContent = String(changes.length);
  $("#dual-note").textContent = floor.dual_control
    ? "Dual control is on: a supervisor's change is a proposal until a different supervisor approves it."
    : "Dual control is off on this floor: a supervisor's change takes effect at once.";
  for (const p of changes) {
    body.append(el("tr", { dataset: { change: p.id } },
      el("th", { scope: "row" }, el("code", { class: "id", text: p.id })),
      el("td", { class: "what" }, describeChange(p.change), figureList(p.consequence, p.change.kind)),
      el("td", { text: p.change.reason }), el("td", { text: p.proposed_by }), el("td", {}, when(p.proposed_at)),
      el("td", {}, decision(p))));
  }
  if (answered && Date.now() < answered.until) answered.node.scrollIntoView({ block: "nearest" });
}

function decision(p) {
  if (ctx.role !== "supervisor") return el("span", { class: "muted", text: "a supervisor decides" });
  if (p.proposed_by === ctx.name) return el("span", { class: "muted", text: "waiting for a different supervisor" });
  const reason = el("input", { id: `reject-reason-${p.id}`, placeholder: "reason to reject", "aria-label": `Reason to reject ${p.id}` });
  const decide = async (action) => {
    if (action === "approve") {
      // The figures as they stand when the dialog opens (the floor's latest).
      const latest = current_changes.find((c) => c.id === p.id) || p;
      confirmApproval(latest, describeChange(latest.change), (text) => { ctx.report(text, "ok", "proposals-result"); ctx.changed(); });
      return;
    }
    if (action === "reject" && !reason.value.trim()) { ctx.report("A reason is required to reject a change.", "error", "proposals-result"); reason.focus(); return; }
    try {
      await call("POST", path("v1", "changes", p.id, action), action === "reject" ? { body: { reason: reason.value } } : {});
      ctx.report(`${p.id} ${action === "approve" ? "approved: it took effect" : "rejected"}.`, "ok", "proposals-result");
      ctx.changed();
    } catch (error) {
      ctx.report(`Refused: ${error.describe ? error.describe() : error}`, "error", "proposals-result");
    }
  };
  return el("div", { class: "decide" },
    el("button", { type: "button", class: "small", dataset: { key: `approve/${p.id}` }, onclick: () => decide("approve"), "aria-label": `Approve ${p.id}` }, "Approve"),
    reason,
    el("button", { type: "button", class: "small danger", dataset: { key: `reject/${p.id}` }, onclick: () => decide("reject"), "aria-label": `Reject ${p.id}` }, "Reject"));
}
