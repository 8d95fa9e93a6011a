// One date format everywhere, in the floor's time zone (floor file `time_zone`), with the
// zone said: "2026-11-27 16:51:39 GMT+8". Inputs are read and filled in that zone too,
// whatever the browser's own.

let zone = "UTC";
let format = null;

export function setZone(name) {
  zone = name || "UTC";
  format = null;
}

export const zoneName = () => zone;

function fields(ms) {
  format ??= new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
    minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "shortOffset",
  });
  const out = {};
  for (const part of format.formatToParts(new Date(ms))) out[part.type] = part.value;
  return out;
}

// "2026-11-27 16:51:39 GMT+8" (`seconds: false`: "2026-11-27 16:51"; `withZone: false`
// without the zone, where a heading already says it).
export function formatInstant(ms, { seconds = true, withZone = true } = {}) {
  const f = fields(ms);
  const text = `${f.year}-${f.month}-${f.day} ${f.hour}:${f.minute}${seconds ? `:${f.second}` : ""}`;
  return withZone ? `${text} ${f.timeZoneName}` : text;
}

export function timeOfDay(ms, seconds = false) {
  const f = fields(ms);
  return `${f.hour}:${f.minute}${seconds ? `:${f.second}` : ""}`;
}

export function dayOf(ms) {
  const f = fields(ms);
  return `${f.year}-${f.month}-${f.day}`;
}

export const zoneLabel = (ms = Date.now()) => fields(ms).timeZoneName;

// The zone's offset at `ms`, in ms (local wall clock minus UTC).
function offset(ms) {
  const f = fields(ms);
  const wall = Date.UTC(+f.year, +f.month - 1, +f.day, +f.hour, +f.minute, +f.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

// "YYYY-MM-DD HH:MM" (or with a "T") read as the floor's local time -> epoch ms (NaN if not a time).
export function zonedToUtc(value) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec((value || "").trim());
  if (!m) return NaN;
  const wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0));
  let at = wall - offset(wall);
  const again = wall - offset(at);
  if (again !== at) at = again; // the offset changed between the guess and the answer
  return at;
}

// epoch ms -> "YYYY-MM-DD HH:MM" in the floor's zone, for a time input.
export function toZonedInput(ms) {
  const f = fields(ms);
  return `${f.year}-${f.month}-${f.day} ${f.hour}:${f.minute}`;
}
