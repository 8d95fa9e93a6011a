// The Reconciliation view: a period's figures per link and level, and the meter's chart.

import { $, clear, el, field, fromLocalInput, money, num, toLocalInput } from "./dom.js";
import { ApiError, downloadCsv, get, path } from "./api.js";
import { drawChart } from "./chart.js";
import { TIME_INPUT, inputLabel, presetButtons, presetPeriod } from "./periods.js";

let inputs;
let period = {};

export function setupReconciliation(floor) {
  // By default today's gaming day so far (the floor's, in its zone).
  const today = presetPeriod(floor(), "today");
  const now = new Date();
  inputs = {
    from: el("input", { id: "rec-from", type: "text", ...TIME_INPUT, value: today?.from ?? toLocalInput(new Date(now - 3600_000)) }),
    to: el("input", { id: "rec-to", type: "text", ...TIME_INPUT, value: today?.to ?? toLocalInput(new Date(now.getTime() + 60_000)) }),
  };
  const form = clear($("#rec-filters"));
  form.append(field(inputLabel("From"), inputs.from), field(inputLabel("To"), inputs.to),
    presetButtons("rec", floor, (period) => { inputs.from.value = period.from; inputs.to.value = period.to; run(); }),
    el("div", { class: "actions" }, el("button", { type: "submit", id: "rec-run", text: "Reconcile" }),
      el("button", { type: "button", class: "secondary", id: "rec-csv", text: "Download CSV" })));
  form.onsubmit = (event) => { event.preventDefault(); run(); };
  $("#rec-csv").onclick = async () => {
    try { await downloadCsv("/v1/reports/reconciliation", currentPeriod(), "reconciliation.csv"); }
    catch (error) { say(error); }
  };
}

function currentPeriod() {
  return { from: fromLocalInput(inputs.from.value), to: fromLocalInput(inputs.to.value) };
}

function say(error) {
  const status = $("#rec-status");
  status.classList.add("error");
  status.textContent = error instanceof ApiError ? error.describe() : String(error);
}

export async function run() {
  const status = $("#rec-status");
  status.classList.remove("error");
  status.textContent = "Reading the journal…";
  period = currentPeriod();
  const picked = picks;
  try {
    const report = await get("/v1/reports/reconciliation", period);
    const body = clear($("#rec tbody"));
    for (const r of report.meters) {
      const contributions = sum(r.exact.contributions_meter, r.exact.contributions_reserve, neg(r.exact.reversed_meter), neg(r.exact.reversed_reserve));
      const seeding = sum(r.exact.seed_from_reserve, r.exact.seed_from_house);
      body.append(el("tr", { dataset: { link: r.link, meter: r.meter } },
        el("th", { scope: "row", text: `${r.link} · ${r.meter}` }),
        num(r.opening_value), num(contributions), num(r.awards), num(seeding), num(r.corrections), num(r.closing_value),
        el("td", {}, el("span", { class: `pill ${r.balanced ? "pill-ok" : "pill-degraded"}`, text: r.balanced ? "✓ balanced" : "✗ not balanced" })),
        el("td", {}, el("button", { type: "button", class: "secondary small", dataset: { key: `chart/${r.link}/${r.meter}` },
          "aria-label": `Chart of ${r.link} ${r.meter}`, onclick: () => { picks += 1; chart(r.link, r.meter); } }, "Chart"))));
    }
    // Every reset and lowering correction of the period, with its listed reason (docs/api.md).
    clear($("#rec-reductions")).append(...(report.reductions || []).map((d) => el("li", {
      text: `${d.at} · ${d.action} · ${d.link} · ${d.meter} · ${d.reason_code || "no code"}: ${d.reason} (${d.who})` })));
    status.textContent = `Journal up to entry ${report.journal.seq}. Figures to the cent; the CSV and the API carry them to the micro-unit.`;
    // The first level's chart, unless one was asked for meanwhile.
    if (report.meters.length && picks === picked) await chart(report.meters[0].link, report.meters[0].meter);
  } catch (error) { say(error); }
}

// Exact sums of the micro-unit strings (`exact`), shown to the cent.
function units(text) {
  const [whole, frac = ""] = text.replace("-", "").split(".");
  const v = BigInt(whole) * 1_000_000n + BigInt((frac + "000000").slice(0, 6));
  return text.startsWith("-") ? -v : v;
}
const neg = (text) => (text.startsWith("-") ? text.slice(1) : `-${text}`);
function sum(...texts) {
  const total = texts.reduce((acc, t) => acc + units(t), 0n);
  const negative = total < 0n;
  const cents = (negative ? -total : total) / 10_000n;
  const s = cents.toString().padStart(3, "0");
  return `${negative ? "-" : ""}${s.slice(0, -2)}.${s.slice(-2)}`;
}

let picks = 0; // charts asked for by a click
let drawn = 0; // the latest chart asked for: an older answer arriving late is dropped

async function chart(link, meter) {
  const ticket = ++drawn;
  const card = $("#chart-card");
  card.hidden = false;
  $("#chart-title").textContent = `${link} · ${meter}: meter value over the period`;
  const note = $("#chart-note");
  note.textContent = "Loading…";
  try {
    const history = await get(path("v1", "links", link, "meters", meter, "history"), period);
    if (ticket !== drawn) return;
    drawChart($("#chart"), history, { title: `${link} ${meter} value from ${money(history.opening)} to ${money(history.closing)}` });
    const thinned = history.points_total > history.points.length ? ` (${history.points.length} of ${history.points_total} drawn: each stretch's low and high kept)` : "";
    note.textContent = `Opening ${money(history.opening)}, closing ${money(history.closing)}; ${history.points_total} changes${thinned}, ${history.marks.length} marked.`;
  } catch (error) {
    note.textContent = error instanceof ApiError ? error.describe() : String(error);
  }
}
