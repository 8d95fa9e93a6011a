// The Audit log and Awards views: filters (time, link, table, kind), tables, CSV download.

import { $, clear, el, field, fromLocalInput, money, row, when } from "./dom.js";
import { ApiError, get } from "./api.js";
import { describeDownload, download } from "./exports.js";
import { TIME_INPUT, inputLabel, presetButtons } from "./periods.js";

let latestFloor = () => null;
export function followFloor(get) { latestFloor = get; }

const AWARD_KINDS = ["meter", "fixed", "envy", "magic_card", "lucky_player", "lucky_dealer", "river"];
const ACTIONS = ["seed", "reset", "correct", "propose", "reject", "suspend", "resume", "acknowledge"];

function options(id, label, values) {
  return el("select", { id }, el("option", { value: "", text: label }),
    values.map(([value, text]) => el("option", { value, text })));
}

function filters(form, prefix, floor, kinds, kindLabel) {
  const inputs = {
    from: el("input", { id: `${prefix}-from`, type: "text", ...TIME_INPUT }),
    to: el("input", { id: `${prefix}-to`, type: "text", ...TIME_INPUT }),
    link: options(`${prefix}-link`, "every link", floor.links.map((l) => [l.link, l.name])),
    table: options(`${prefix}-table`, "every table", floor.tables.map((t) => [t.table, t.table])),
    kind: options(`${prefix}-kind`, kindLabel, kinds.map((k) => [k, k.replace(/_/g, " ")])),
  };
  clear(form).append(
    field(inputLabel("From"), inputs.from), field(inputLabel("To"), inputs.to),
    presetButtons(prefix, () => latestFloor() ?? floor, (period) => { inputs.from.value = period.from; inputs.to.value = period.to; form.requestSubmit(); }),
    field("Link", inputs.link), field("Table", inputs.table), field(kindLabel.replace("every ", "").replace(/^./, (c) => c.toUpperCase()), inputs.kind),
    el("div", { class: "actions" },
      el("button", { type: "submit", id: `${prefix}-apply`, text: "Show" }),
      el("button", { type: "button", class: "secondary", id: `${prefix}-csv`, text: "Download CSV" }),
      el("button", { type: "button", class: "secondary", id: `${prefix}-jsonl`, text: "Download JSON" })));
  return inputs;
}

function params(inputs, kindName) {
  return {
    from: fromLocalInput(inputs.from.value), to: fromLocalInput(inputs.to.value),
    link: inputs.link.value || undefined, table: inputs.table.value || undefined,
    [kindName]: inputs.kind.value || undefined,
  };
}

function problem(status, error) {
  status.textContent = error instanceof ApiError ? error.describe() : error?.message || String(error);
  status.classList.add("error");
}

function list({ prefix, path, kindName, kinds, kindLabel, render, file, noun, limit }) {
  let inputs;
  const status = $(`#${prefix}-status`);
  const load = async () => {
    status.classList.remove("error");
    status.textContent = "Loading…";
    try {
      const data = await get(path, { ...params(inputs, kindName), limit });
      status.textContent = "";
      render(data);
    } catch (error) { problem(status, error); }
  };
  return {
    setup(floor) {
      const form = $(`#${prefix}-filters`);
      inputs = filters(form, prefix, floor, kinds, kindLabel);
      form.onsubmit = (event) => { event.preventDefault(); load(); };
      // The file has every record of the period: the screen pages, the export never.
      for (const format of ["csv", "jsonl"]) {
        $(`#${prefix}-${format}`).onclick = async () => {
          status.classList.remove("error");
          status.textContent = "Preparing the file…";
          try {
            const saved = await download(path, params(inputs, kindName), file, format);
            status.textContent = describeDownload(saved, noun);
          } catch (error) { problem(status, error); }
        };
      }
    },
    load,
  };
}

function describe(side) {
  if (!side) return "—";
  if (side.change) return el("code", { class: "id", text: side.change });
  if ("in_play" in side) return side.in_play ? "in play" : "not in play";
  if (side.alarm) return `alarm ${side.alarm}`;
  return Object.entries(side).map(([k, v]) => `${k} ${money(v)}`).join(", ");
}

export const audit = list({
  prefix: "audit", path: "/v1/audit", kindName: "action", kinds: ACTIONS, kindLabel: "every action",
  file: "audit", noun: "record", limit: 1000,
  render(data) {
    const body = clear($("#audit tbody"));
    // Newest first on screen; the API (and its CSV) lists oldest first.
    for (const a of [...data.audit].reverse()) {
      body.append(el("tr", { dataset: { audit: a.id } }, [...row([String(a.id), when(a.at), a.who, a.action,
        a.link ? `${a.link} · ${a.meter}${a.round ? ` · ${a.round}` : ""}${a.amount ? ` · ${money(a.amount)}` : ""}` : "—",
        describe(a.before), describe(a.after), a.approved_by || "—", el("td", { class: "reason", text: a.reason_code ? `${a.reason_code}: ${a.reason}` : a.reason })]).childNodes]));
    }
    $("#audit-status").textContent = `${data.total} record${data.total === 1 ? "" : "s"}${data.total > data.audit.length ? `, the oldest ${data.audit.length} shown (the downloads have every one)` : ""}.`;
  },
});

// A pending jackpot says what holds it (docs/api.md: held_by, final_by).
function stateOf(a) {
  if (!a.held_by) return a.state;
  if (!a.held_by.length) return `${a.state}: paid within seconds`;
  return el("span", { class: "why-held" }, `${a.state}: held by `,
    ...a.held_by.flatMap((h, i) => [i ? ", " : "", "round ", el("code", { class: "id", text: h.round }), " at ", el("code", { class: "id", text: h.table })]),
    "; at the latest ", when(a.final_by));
}

export const awards = list({
  prefix: "awards", path: "/v1/awards", kindName: "kind", kinds: AWARD_KINDS, kindLabel: "every kind",
  file: "awards", noun: "award", limit: 500,
  render(data) {
    const body = clear($("#awards tbody"));
    for (const a of data.awards) {
      body.append(row([when(a.dealt_at), a.kind.replace(/_/g, " "), `${a.link ?? "no link"}${a.meter ? ` · ${a.meter}` : ""}`,
        el("code", { class: "id", text: a.table }), el("code", { class: "id", text: a.round }), String(a.box), (a.hand || "").replace(/_/g, " "),
        el("td", { class: "num", text: a.amount ? money(a.amount) : "—" }), stateOf(a)]));
    }
    $("#awards-status").textContent = `${data.total} award${data.total === 1 ? "" : "s"}${data.total > data.awards.length ? `, the newest ${data.awards.length} shown (the downloads have every one)` : ""}.`;
  },
});
