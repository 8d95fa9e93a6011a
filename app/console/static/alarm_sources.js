// The floor's own alarm sources (alarms.js): pending jackpots and their age, rounds
// holding them, changes waiting for a second supervisor, silent tables. Unpaid awards
// and signs out of variance add theirs the same way once the server reports them.

import { addAlarmSource } from "./alarms.js";

const HAND = (h) => (h || "").replace(/_/g, " ");

addAlarmSource("pending", (floor) => floor.links.flatMap((link) => link.pending.map((p) => ({
  key: `pending:${p.id}`, since: p.dealt_at,
  text: `Jackpot pending: ${link.name} · ${p.meter} · table ${p.table} box ${p.box} · ${HAND(p.hand)}`,
}))));

addAlarmSource("holding", (floor) => floor.links.flatMap((link) => (link.holding_rounds || []).map((r) => ({
  key: `holding:${r.table}/${r.round}`, since: r.open_since,
  text: `Round ${r.round} at table ${r.table} holds ${r.awards.length} jackpot${r.awards.length === 1 ? "" : "s"} (no outcome yet)`,
}))));

addAlarmSource("change", (floor) => (floor.changes || []).map((c) => ({
  key: `change:${c.id}`, since: c.proposed_at,
  text: `${c.id} waits for a second supervisor (${c.change.kind} on ${c.change.link} · ${c.change.meter}, by ${c.proposed_by})`,
})));

addAlarmSource("silent", (floor) => floor.tables.filter((t) => t.silent).map((t) => ({
  key: `silent:${t.table}@${t.last_event_at ?? "never"}`, since: t.last_event_at ?? undefined,
  text: `Table ${t.table} is silent: no event for over ${Math.round(floor.silent_after_ms / 1000)} s`,
})));
