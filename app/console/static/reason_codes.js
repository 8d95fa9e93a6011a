// The listed reasons a meter or a reserve may be lowered for (jackpot/reduction_reasons.py):
// required on a reset and on a correction that lowers the meter; the server checks them.

import { el } from "./dom.js";

export const REASON_CODES = {
  jackpot_paid: "Jackpot paid",
  malfunction: "Malfunction",
  error_correction: "Error corrected",
  limit_reached: "Limit reached",
  transfer: "Transfer to another progressive",
  closure: "Link or game closed",
  regulator_order: "Regulator's order",
};

export function codeSelect(id) {
  return el("select", { id }, [el("option", { value: "", text: "— choose a listed reason —" }),
    ...Object.entries(REASON_CODES).map(([k, t]) => el("option", { value: k, text: t }))]);
}
