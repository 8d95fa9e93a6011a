// The Levels panel of the Floor view: per link, every level (meter) with its value, seed and
// ceiling; a must-hit-by level with its range and the commitment of its hidden trigger (the
// trigger itself is never sent before the hit); and each level's last hits, a must-hit-by
// hit with its reveal, checked here against the commitment drawn before play when the
// browser can hash (docs/design.md "Must-hit-by levels"). Data: the live floor (GET /v1/floor).

import { $, clear, el, money, when } from "./dom.js";

const SHOWN = 5; // a level's last hits listed here; the Awards view lists them all
const checked = new Map(); // "trigger|nonce|commitment" -> true / false once hashed
let latest = null; // the floor last rendered: a hash that completes redraws it

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// "matches" / "DOES NOT MATCH" once hashed; nothing where the browser cannot hash (plain
// http to another host: crypto.subtle needs a secure context).
function verdict(reveal, redraw) {
  if (!globalThis.crypto?.subtle) return null;
  const key = `${reveal.trigger}|${reveal.nonce}|${reveal.commitment}`;
  if (!checked.has(key)) {
    checked.set(key, null);
    sha256Hex(`${reveal.trigger}|${reveal.nonce}`)
      .then((hex) => { checked.set(key, hex === reveal.commitment); redraw(); })
      .catch(() => checked.delete(key));
  }
  const ok = checked.get(key);
  if (ok === null || ok === undefined) return null;
  return el("span", { class: ok ? "reveal-ok" : "reveal-bad", dataset: { check: ok ? "ok" : "bad" },
    text: ok ? " · matches the commitment" : " · DOES NOT MATCH the commitment" });
}

function reveal(hit, redraw) {
  const r = hit.reveal;
  if (!r) return null;
  return el("div", { class: "reveal", dataset: { reveal: hit.id } },
    `hit at ${money(r.trigger)} (drawn in ${money(r.must_hit_from)} – ${money(r.must_hit_by)}) · sha256(`,
    el("code", { text: `${r.trigger}|${r.nonce}` }), ") = ",
    el("code", { class: "commitment", text: r.commitment }), verdict(r, redraw));
}

function hitsList(m, redraw) {
  if (!m.hits.length) return el("p", { class: "muted", text: "No hit yet." });
  return el("ul", { class: "level-hits" }, m.hits.slice(0, SHOWN).map((h) => el("li", { dataset: { hit: h.id } },
    when(h.dealt_at), ` · table ${h.table} · round ${h.round} · box ${h.box} · `,
    el("strong", { text: h.amount ? money(h.amount) : h.state }),
    h.hand === "must_hit_by" ? null : ` · ${(h.hand || "").replace(/_/g, " ")}`,
    h.state === "final" ? null : ` (${h.state})`,
    reveal(h, redraw))));
}

function level(floor, m, redraw) {
  const mystery = m.must_hit_by !== undefined;
  const facts = [
    ["Value", money(m.value)], ["Seed", money(m.seed)],
    ["Ceiling", m.ceiling ? money(m.ceiling) : "none"],
  ];
  if (mystery) {
    facts.push(["Must hit", `from ${money(m.must_hit_from)} by ${money(m.must_hit_by)}`]);
  }
  return el("section", { class: "level", dataset: { meter: m.meter } },
    el("h4", {}, m.name, mystery ? el("span", { class: "muted", text: " · must-hit-by level" }) : null),
    el("dl", { class: "fields" }, facts.flatMap(([k, v]) => [el("dt", { text: k }),
      el("dd", { class: k.toLowerCase().replace(" ", "-"), text: v })])),
    mystery ? el("p", { class: "level-commitment" }, "Commitment of the next trigger: ",
      m.commitment ? el("code", { class: "commitment", text: m.commitment })
        : el("span", { class: "muted", text: "awaiting the next draw" })) : null,
    el("h5", { text: `Last hits (${floor.currency})` }), hitsList(m, redraw));
}

export function renderLevels(floor) {
  latest = floor;
  const redraw = () => renderLevels(latest);
  const root = clear($("#levels"));
  root.append(el("h3", { id: "levels-title", text: "Levels and their last hits" }));
  for (const link of floor.links) {
    // Attributes of its own: the link cards above are found by article[data-link].
    root.append(el("article", { class: "levels-link", dataset: { levels: link.link } },
      el("h4", {}, el("span", { class: "levels-name", text: link.name }), el("span", { class: "muted", text: ` (${link.link})` })),
      el("div", { class: "levels-row" }, link.meters.map((m) => level(floor, m, redraw)))));
  }
}
