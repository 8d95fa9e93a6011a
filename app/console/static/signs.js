// The Signs view: every screen's last acknowledgement against the committed values
// (GET /v1/screens): lag, variance, stale; a flagged screen's row is red.

import { $, clear, el, money, row, when } from "./dom.js";
import { ApiError, get } from "./api.js";

const REFRESH_MS = 2000;
let timer = null;

function flags(s) {
  if (!s.flags.length) return "ok";
  const words = { stale: "stale (no answer for 15 s)", variance: "off the meter", win: `win not shown: ${s.late_win}` };
  return s.flags.map((f) => words[f] || f).join(", ");
}

function render(data) {
  const body = clear($("#signs tbody"));
  for (const s of data.screens) {
    const tr = row([s.name || "—", el("code", { text: s.screen }), s.link, s.address || "—",
      s.connected ? "yes" : "no", when(s.acked_at),
      el("td", { class: "num", text: s.seq_behind ?? "—" }), el("td", { class: "num", text: s.lag_ms ?? "—" }),
      el("td", { class: "num", text: s.variance === null ? "—" : money(s.variance) }), flags(s)]);
    tr.dataset.screen = s.screen;
    if (s.flagged) tr.classList.add("flagged");
    body.append(tr);
  }
  $("#signs-empty").hidden = data.screens.length > 0;
  const flagged = data.screens.filter((s) => s.flagged).length;
  $("#signs-status").textContent = `${data.screens.length} screen${data.screens.length === 1 ? "" : "s"}, ${flagged} flagged. ` +
    `Variance bound ${money(data.sign_variance)}; a final win within ${data.win_shown_within_ms / 1000} s.`;
}

export async function load() {
  const status = $("#signs-status");
  try {
    render(await get("/v1/screens"));
    status.classList.remove("error");
  } catch (error) {
    status.classList.add("error");
    status.textContent = error instanceof ApiError ? error.describe() : String(error);
  }
}

// Refreshed while the view is shown.
export function showSigns(visible) {
  clearInterval(timer);
  timer = null;
  if (!visible) return;
  load();
  timer = setInterval(load, REFRESH_MS);
}

export function setupSigns() {
  $("#signs-refresh").addEventListener("click", load);
}
