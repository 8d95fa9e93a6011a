// The Floor view: links and levels, pending awards, stale rounds, tables, last hits.

import { $, ago, clear, el, money, row, when } from "./dom.js";
import { get, path } from "./api.js";
import { holdWarnings, pendingList } from "./holds.js";

const openHits = new Set();
const HAND = (h) => (h || "").replace(/_/g, " ");

export function renderFloor(floor, { unreachable }) {
  // Live updates rebuild the view: keep the keyboard's place (data-key) across them.
  const focused = document.activeElement?.closest?.("[data-key]")?.dataset.key;
  const links = clear($("#links"));
  for (const link of floor.links) links.append(linkCard(floor, link, unreachable));
  renderTables(floor);
  renderHits(floor);
  $("#floor-summary").replaceChildren(
    `${floor.currency} · dual control ${floor.dual_control ? "on: a change needs a second supervisor" : "off: a change takes effect at once"} · updated `,
    when(floor.now));
  if (focused) document.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

function statusOf(link, unreachable) {
  if (unreachable) return ["unreachable", "writer unreachable"];
  return link.status === "ok" ? ["ok", "ok"] : ["degraded", "degraded: cannot record events"];
}

function linkCard(floor, link, unreachable) {
  const [cls, text] = statusOf(link, unreachable);
  const meters = el("table", { class: "grid meters" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "Level" }), el("th", { scope: "col", class: "num", text: "Value" }),
      el("th", { scope: "col", class: "num", text: "Seed" }), el("th", { scope: "col", class: "num", text: "Reserve" }),
      el("th", { scope: "col", class: "num", text: "Ceiling" }), el("th", { scope: "col", text: "" }))),
    el("tbody", {}, link.meters.map((m) => el("tr", { dataset: { link: link.link, meter: m.meter } },
      el("th", { scope: "row", text: m.name }),
      el("td", { class: "num value", dataset: { value: m.value } }, money(m.value)),
      el("td", { class: "num" }, money(m.seed),
        m.next_seed ? el("span", { class: "next", text: ` → ${money(m.next_seed)} at next reset` }) : null),
      el("td", { class: "num", text: money(m.reserve) }),
      el("td", { class: "num", text: m.ceiling ? money(m.ceiling) : "none" }),
      el("td", {}, el("button", {
        type: "button", class: "secondary small", "aria-label": `Details of ${link.name} ${m.name}`,
        dataset: { key: `details/${link.link}/${m.meter}` },
        onclick: () => showMeter(link.link, m.meter),
      }, "Details"))))));
  const pending = pendingList(floor, link);
  const stale = link.stale_rounds.length
    ? el("ul", { class: "stale" }, link.stale_rounds.map((r) => el("li", {},
        el("strong", { text: "Stale round" }), ` table ${r.table} · round ${r.round} · bets closed `, when(r.closed_at),
        `: no outcome for ${Math.round(floor.round_timeout_ms / 1000)} s, it no longer holds jackpots back. ` +
        `Ask table ${r.table} to post its outcome or void it (rule 5.17).`)))
    : el("p", { class: "muted", text: "No stale round." });
  return el("article", { class: "card link", dataset: { link: link.link }, "aria-label": link.name },
    el("div", { class: "view-head" },
      el("h3", {}, el("span", { class: "link-name", text: link.name }), el("span", { class: "muted", text: ` (${link.link})` })),
      el("span", { class: `pill pill-${cls}`, dataset: { status: cls }, text })),
    meters, holdWarnings(floor, link), pending, stale);
}

function renderTables(floor) {
  const body = clear($("#tables tbody"));
  $("#tables-note").textContent =
    `A table is flagged silent after ${Math.round(floor.silent_after_ms / 1000)} s without an event.`;
  for (const t of floor.tables) {
    body.append(el("tr", { dataset: { table: t.table }, class: t.silent ? "warn" : "" },
      el("th", { scope: "row", text: t.table }),
      el("td", { text: HAND(t.game) }),
      el("td", { text: t.link ?? "none" }),
      el("td", { text: t.last_event ?? "none yet" }),
      el("td", { class: "num", text: String(t.open_rounds ?? 0) }),
      el("td", {}, when(t.last_event_at), t.last_event_at ? el("span", { class: "muted", text: ` (${ago(t.last_event_at, floor.now)})` }) : null),
      el("td", {}, t.silent ? el("span", { class: "pill pill-degraded", text: "silent too long" }) : el("span", { class: "pill pill-ok", text: "active" }))));
  }
}

function renderHits(floor) {
  const hits = clear($("#hits"));
  for (const link of floor.links) {
    for (const m of link.meters) {
      const open = openHits.has(`${link.link}/${m.meter}`);
      const details = el("details", { class: "card hits", dataset: { link: link.link, meter: m.meter } },
        el("summary", { dataset: { key: `hits/${link.link}/${m.meter}` } }, el("h3", { class: "inline", text: `Last ${m.hits.length} hits: ${link.name} · ${m.name}` })),
        m.hits.length ? el("table", { class: "grid" },
          el("thead", {}, el("tr", {}, ["Dealt at", "Table", "Round", "Box", "Hand", "Amount", "State"].map(
            (h) => el("th", { scope: "col", class: h === "Amount" ? "num" : "", text: h })))),
          el("tbody", {}, m.hits.map((h) => row([when(h.dealt_at), h.table, h.round, String(h.box), HAND(h.hand),
            el("td", { class: "num", text: h.amount ? money(h.amount) : "—" }), h.state]))))
          : el("p", { class: "muted", text: "No hit yet." }));
      if (open) details.open = true;
      hits.append(details);
    }
  }
}

// Keep the "last hits" panels the operator opened open across live updates.
document.addEventListener("toggle", (event) => {
  const d = event.target;
  if (d instanceof HTMLDetailsElement && d.classList.contains("hits")) {
    const key = `${d.dataset.link}/${d.dataset.meter}`;
    if (d.open) openHits.add(key); else openHits.delete(key);
  }
}, true);

export async function showMeter(link, meter) {
  const panel = $("#meter-detail");
  panel.hidden = false;
  $("#meter-detail-title").textContent = `Meter ${link} · ${meter}`;
  const fields = clear($("#meter-detail-fields"));
  try {
    const m = await get(path("v1", "links", link, "meters", meter));
    const items = [
      ["Value (pending events counted)", money(m.value)], ["Final value", money(m.final_value)],
      ["Seed", money(m.seed)], ["Next seed (at the next reset)", m.next_seed ? money(m.next_seed) : "no change"],
      ["Rate", m.rate], ["Reserve rate", m.reserve_rate], ["Reserve", money(m.reserve)],
      ["Ceiling", m.ceiling ? money(m.ceiling) : "none"],
      ["Pending awards", m.pending_awards.length ? m.pending_awards.join(", ") : "none"],
      ["Stale rounds", m.stale_rounds.length ? m.stale_rounds.join(", ") : "none"],
    ];
    for (const [k, v] of items) fields.append(el("dt", { text: k }), el("dd", { text: v }));
    panel.dataset.nextSeed = m.next_seed ?? "";
  } catch (error) {
    fields.append(el("dd", { class: "error", text: error.describe ? error.describe() : String(error) }));
  }
  $("#meter-detail-close").focus();
}

export function closeMeter() {
  $("#meter-detail").hidden = true;
}
