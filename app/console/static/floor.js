// The Floor view: links and levels, pending awards, stale rounds, tables, last hits.

import { $, ago, clear, el, money, row, when } from "./dom.js";
import { get, path } from "./api.js";
import { holdWarnings, pendingList } from "./holds.js";

const openHits = new Set();
const HAND = (h) => (h || "").replace(/_/g, " ");
const idText = (id) => el("code", { class: "id", text: id });

export function renderFloor(floor, { unreachable }) {
  latest = [floor, unreachable];
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
      el("th", { scope: "col", class: "num", text: "Next reset to" }), el("th", { scope: "col", class: "num", text: "Reserve" }),
      el("th", { scope: "col", class: "num", text: "Ceiling" }), el("th", { scope: "col", text: "" }))),
    el("tbody", {}, link.meters.flatMap((m) => {
      const key = `${link.link}/${m.meter}`;
      const open = openDetails.has(key);
      const row = el("tr", { dataset: { link: link.link, meter: m.meter } },
        el("th", { scope: "row", text: m.name }),
        el("td", { class: "num value", dataset: { value: m.value } }, money(m.value)),
        // The seed the next reset returns to, as the forms show it; the current one beside.
        el("td", { class: "num seed", dataset: { seed: m.next_seed ?? m.seed } }, money(m.next_seed ?? m.seed),
          m.next_seed ? el("span", { class: "next", text: `changed: now ${money(m.seed)}` }) : null),
        el("td", { class: "num", text: money(m.reserve) }),
        el("td", { class: "num", text: m.ceiling ? money(m.ceiling) : "none" }),
        el("td", {}, el("button", {
          type: "button", class: "secondary small", "aria-label": `Details of ${link.name} ${m.name}`,
          "aria-expanded": String(open), "aria-controls": `detail-${link.link}-${m.meter}`,
          dataset: { key: `details/${key}` },
          onclick: () => toggleMeter(floor, link.link, m.meter),
        }, open ? "Hide" : "Details")));
      return open ? [row, detailRow(floor, link, m)] : [row];
    })));
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
      el("th", { scope: "row" }, idText(t.table)),
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
          el("tbody", {}, m.hits.map((h) => row([when(h.dealt_at), idText(h.table), idText(h.round), String(h.box), HAND(h.hand),
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

// A meter's details, in a row under its own, rebuilt with every floor update (live);
// the rates come once from the meter's own read (they change only with the floor file).
const openDetails = new Set();
const rates = new Map();

function toggleMeter(floor, link, meter) {
  const key = `${link}/${meter}`;
  if (openDetails.has(key)) openDetails.delete(key); else openDetails.add(key);
  if (!rates.has(key)) {
    rates.set(key, null);
    get(path("v1", "links", link, "meters", meter)).then((m) => { rates.set(key, m); renderFloor(latest[0], { unreachable: latest[1] }); })
      .catch(() => rates.delete(key));
  }
  renderFloor(floor, { unreachable: latest?.[1] ?? false });
}

function detailRow(floor, link, m) {
  const fixed = rates.get(`${link.link}/${m.meter}`);
  const pending = link.pending.filter((p) => p.meter === m.meter);
  const items = [
    ["Value (pending events counted)", money(m.value)], ["Final value", money(m.final_value)],
    ["Seed now", money(m.seed)], ["Next seed (at the next reset)", m.next_seed ? money(m.next_seed) : "no change"],
    ["Rate", fixed ? fixed.rate : "…"], ["Reserve rate", fixed ? fixed.reserve_rate : "…"],
    ["Reserve", money(m.reserve)], ["Ceiling", m.ceiling ? money(m.ceiling) : "none"],
    ["Pending awards", pending.length ? pending.map((p) => p.id).join(", ") : "none"],
    ["Stale rounds", link.stale_rounds.length ? link.stale_rounds.map((r) => `${r.table}/${r.round}`).join(", ") : "none"],
  ];
  return el("tr", { class: "detail-row", id: `detail-${link.link}-${m.meter}`, dataset: { link: link.link, meter: m.meter } },
    el("td", { colspan: 6 }, el("dl", { class: "fields meter-detail" },
      items.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])),
    el("p", { class: "muted", text: "Live: updated with the floor." })));
}

let latest = null; // [floor, unreachable] as last rendered
