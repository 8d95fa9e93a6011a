// What is in play (rules 5.17, 5.18.2): the suspensions in force and the unheard tables,
// on the Floor view; supervisors suspend a link, a table or boxes, and resume them
// (with dual control: a proposal, approved in the Changes view).

import { $, clear, el, field, when } from "./dom.js";
import { ApiError, call, path } from "./api.js";

let ctx = null;

export function setupInPlay(context) {
  ctx = context;
  const section = $("#in-play");
  clear(section).append(
    el("h3", { id: "in-play-title", text: "In play" }),
    el("p", { id: "in-play-summary", class: "muted", "aria-live": "polite" }),
    el("table", { id: "suspensions", class: "grid" },
      el("thead", {}, el("tr", {}, ["What", "Since", "Why", "By", ""].map((t) => el("th", { scope: "col", text: t })))),
      el("tbody")),
    el("p", { id: "unheard", class: "muted" }),
    ctx.role === "supervisor" ? suspendForm() : null,
    el("p", { id: "in-play-result", class: "result", role: "status", "aria-live": "polite" }),
  );
}

function where(s) {
  if (s.scope === "link") return `link ${s.link}`;
  if (s.scope === "table") return `table ${s.table}`;
  return `table ${s.table} box ${s.box}`;
}

function report(text, kind) {
  const node = $("#in-play-result");
  node.className = `result ${kind}`;
  node.textContent = text;
}

async function send(action, target, boxes, reason) {
  const [kind, id] = target.split(":");
  const body = { reason };
  if (boxes && boxes.length) body.boxes = boxes;
  try {
    const answer = await call("POST", path("v1", kind === "link" ? "links" : "tables", id, action), { body });
    if (answer.status === 202) report(`Proposed as ${answer.data.id}: a second supervisor approves it in Changes.`, "ok");
    else report(`${action === "suspend" ? "Suspended" : "Resumed"}: ${(answer.data.suspended || answer.data.resumed).map(where).join(", ")}`, "ok");
  } catch (error) {
    report(error instanceof ApiError ? error.describe() : String(error), "error");
  }
}

function suspendForm() {
  const target = el("select", { id: "suspend-target", required: true });
  const boxes = el("input", { id: "suspend-boxes", inputmode: "numeric", placeholder: "e.g. 3, 4 (empty: the whole table)" });
  const reason = el("input", { id: "suspend-reason", required: true, maxlength: 500 });
  const submit = el("button", { type: "submit", id: "suspend-submit", text: "Suspend" });
  const form = el("form", { id: "suspend-form", class: "change", novalidate: true },
    field("Link or table", target), field("Boxes", boxes), field("Reason", reason), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const numbers = boxes.value.split(/[\s,]+/).filter(Boolean).map(Number);
    if (!reason.value.trim()) { report("Give a reason.", "error"); return; }
    if (numbers.some((n) => !Number.isInteger(n) || n < 1)) { report("Boxes are whole numbers from 1.", "error"); return; }
    if (numbers.length && target.value.startsWith("link:")) { report("Boxes are a table's.", "error"); return; }
    send("suspend", target.value, numbers, reason.value.trim());
    reason.value = "";
    boxes.value = "";
  });
  return form;
}

function fillTargets(floor) {
  const select = $("#suspend-target");
  if (!select || select.options.length) return;
  for (const link of floor.links) select.append(el("option", { value: `link:${link.link}`, text: `Link ${link.name}` }));
  for (const table of floor.tables) select.append(el("option", { value: `table:${table.table}`, text: `Table ${table.table}` }));
}

export function renderInPlay(floor) {
  if (!ctx || !$("#suspensions")) return;
  fillTargets(floor);
  const suspensions = floor.suspensions || [];
  $("#in-play-summary").textContent = suspensions.length
    ? `Progressive not in play: ${suspensions.map(where).join(", ")}.`
    : "Everything is in play.";
  const body = clear($("#suspensions tbody"));
  for (const s of suspensions) {
    const target = s.scope === "link" ? `link:${s.link}` : `table:${s.table}`;
    const resume = ctx.role === "supervisor"
      ? el("button", { type: "button", class: "secondary", text: "Resume", dataset: { where: where(s) },
          onclick: () => {
            const reason = window.prompt(`Resume ${where(s)}: why?`);
            if (reason && reason.trim()) send("resume", target, s.box ? [s.box] : [], reason.trim());
          } })
      : null;
    body.append(el("tr", { dataset: { where: where(s) } },
      el("td", { text: where(s) }), el("td", {}, when(s.since)), el("td", { text: s.reason }),
      el("td", { text: s.by === null ? "server (silent table)" : s.by }), el("td", {}, resume)));
  }
  const unheard = (floor.tables || []).filter((t) => t.unheard);
  $("#unheard").textContent = unheard.length
    ? `Unheard longer than ${floor.table_silence_ms} ms: ${unheard.map((t) => t.table).join(", ")}.`
    : "";
}

// A proposed suspension or resumption, as the Changes view lists it.
export function describeInPlay(c) {
  const what = c.link ? `link ${c.link}` : `table ${c.table}`;
  return `${c.kind} ${what}${c.boxes && c.boxes.length ? ` boxes ${c.boxes.join(", ")}` : ""}`;
}
