// Report presets from the floor's gaming day (floor file `time_zone`, `gaming_day_start`,
// `shifts`; the server computes the periods: docs/api.md, the floor view's `gaming_day`):
// today's gaming day so far, yesterday's, the current shift so far.

import { el } from "./dom.js";
import { toZonedInput, zoneLabel, zoneName } from "./zone.js";

const NAMES = { today: "Today's gaming day", yesterday: "Yesterday's gaming day", shift: "This shift" };

// A period's [from, to) as the inputs show them: a period still running ends now (to the
// next minute), so a report or a chart is not stretched over hours still to come.
export function presetPeriod(floor, name) {
  const preset = (floor.gaming_day?.presets || []).find((p) => p.name === name);
  if (!preset) return null;
  const now = Date.parse(floor.now);
  const end = Math.min(Date.parse(preset.to), Math.ceil((now + 1) / 60_000) * 60_000);
  return { from: toZonedInput(Date.parse(preset.from)), to: toZonedInput(end) };
}

export function presetButtons(prefix, floor, apply) {
  return el("div", { class: "presets", role: "group", "aria-label": "Periods" },
    Object.entries(NAMES).map(([name, text]) => el("button", {
      type: "button", class: "secondary small", id: `${prefix}-preset-${name}`,
      onclick: () => { const period = presetPeriod(floor(), name); if (period) apply(period); },
    }, text)));
}

// Times are typed and shown as everywhere else, "YYYY-MM-DD HH:MM" (the browser's own
// date picker would show its locale's format).
export const TIME_INPUT = { placeholder: "YYYY-MM-DD HH:MM", pattern: "\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}", autocomplete: "off", spellcheck: "false" };

export const inputLabel = (what) => `${what} (${zoneName()}, ${zoneLabel()})`;
