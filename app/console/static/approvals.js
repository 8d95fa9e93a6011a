// What a change does, in figures: the meter's value now, the seed before and after, a
// reset's excess to the reserve or its funding (reserve first, then the house), a
// correction's before and after. The proposal's row shows them (the server's
// `consequence`, live), and approving asks for a confirmation that repeats them.

import { $, el, money, moneyUnits, unitsText } from "./dom.js";
import { ApiError, call, path } from "./api.js";

const zero = (text) => !text || moneyUnits(text) === 0n;

// [label, figure] pairs, in the order a supervisor reads them.
export function figures(c, kind) {
  if (kind === "suspend" || kind === "resume") return [["Figures", "none: it moves no meter, it changes what is in play"]];
  if (kind === "transfer" || kind === "retire") return [["Figures", "not computed for this change: read it above"]];
  if (!c) return [["Figures", "the meter or the round is no longer known"]];
  const rows = [["Value now", money(c.value_now)], ["Value after", money(c.value_after)]];
  if (kind === "seed") rows[1] = ["Value after", `${money(c.value_after)} (a seed change takes effect at the next reset)`];
  rows.push(["Seed", `${money(c.seed_before)} → ${money(c.seed_after)}`]);
  if (kind === "reset" || !zero(c.from_reserve) || !zero(c.from_house) || !zero(c.to_reserve)) {
    if (!zero(c.to_reserve)) rows.push(["Leaves the meter for the reserve", money(c.to_reserve)]);
    rows.push(["From the reserve", money(c.from_reserve)], ["From the house", money(c.from_house)]);
  }
  if (!zero(c.house_cover)) rows.push(["The house covers", money(c.house_cover)]);
  rows.push(["Reserve", `${money(c.reserve_now)} → ${money(c.reserve_after)}`]);
  return rows;
}

export function figureList(c, kind, id) {
  return el("dl", { class: "figures", id }, figures(c, kind).flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
}

// A reset's figures from the floor's meter (the same rule as jackpot/consequences.py).
export function resetFigures(meter) {
  const value = moneyUnits(meter.value), reserve = moneyUnits(meter.reserve);
  const seed = moneyUnits(meter.next_seed ?? meter.seed);
  const need = seed - value;
  const fromReserve = need > 0n ? (reserve < need ? reserve : need) : 0n;
  const fromHouse = need > 0n ? need - fromReserve : 0n;
  const toReserve = need < 0n ? -need : 0n;
  const t = (u) => unitsText(u);
  return {
    value_now: meter.value, value_after: t(seed), seed_before: meter.seed, seed_after: t(seed),
    reserve_now: meter.reserve, reserve_after: t(reserve - fromReserve + toReserve),
    from_reserve: t(fromReserve), from_house: t(fromHouse), to_reserve: t(toReserve), house_cover: "0",
  };
}

function dialog() {
  let d = $("#approve-dialog");
  if (d) return d;
  d = el("dialog", { id: "approve-dialog", "aria-labelledby": "approve-title" },
    el("form", { method: "dialog", id: "approve-form" },
      el("h3", { id: "approve-title", text: "Approve a change" }),
      el("p", { id: "approve-what" }),
      el("div", { id: "approve-figures" }),
      el("p", { class: "muted", text: "The figures are the meter's as it stands now; it may still move until the change takes effect." }),
      el("p", { id: "approve-result", class: "result", role: "status", "aria-live": "polite" }),
      el("div", { class: "actions" },
        el("button", { type: "submit", id: "approve-confirm", text: "Approve: it takes effect" }),
        el("button", { type: "button", id: "approve-cancel", class: "secondary", text: "Cancel" }))));
  document.body.append(d);
  $("#approve-cancel").addEventListener("click", () => d.close());
  return d;
}

// Opens the confirmation; `done(text)` once approved.
export function confirmApproval(p, what, done) {
  const d = dialog();
  $("#approve-title").textContent = `Approve ${p.id}?`;
  $("#approve-what").textContent = `${what}. Proposed by ${p.proposed_by}; reason: ${p.change.reason}`;
  $("#approve-figures").replaceChildren(figureList(p.consequence, p.change.kind, "approve-numbers"));
  const result = $("#approve-result");
  result.textContent = "";
  result.className = "result";
  const confirm = $("#approve-confirm");
  confirm.disabled = false;
  confirm.hidden = false;
  $("#approve-cancel").textContent = "Cancel";
  $("#approve-form").onsubmit = async (event) => {
    event.preventDefault();
    confirm.disabled = true;
    try {
      await call("POST", path("v1", "changes", p.id, "approve"));
      result.className = "result ok";
      result.textContent = `${p.id} approved: it took effect.`;
      confirm.hidden = true;
      $("#approve-cancel").textContent = "Close";
      done(result.textContent);
    } catch (error) {
      confirm.disabled = false;
      result.className = "result error";
      result.textContent = `Refused: ${error instanceof ApiError ? error.describe() : error}`;
    }
  };
  d.showModal();
  confirm.focus();
}
