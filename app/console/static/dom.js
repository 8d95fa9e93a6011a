// Building the page: every server string goes in as text (textContent), never as HTML.

import { formatInstant, toZonedInput, zonedToUtc } from "./zone.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);

export function clear(node) {
  node.replaceChildren();
  return node;
}

// "10234.5" -> "10,234.50": money stays a string (no float), grouped for reading.
export function money(text) {
  if (text === undefined || text === null) return "—";
  const s = String(text);
  const negative = s.startsWith("-");
  const [whole, frac = ""] = (negative ? s.slice(1) : s).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const cents = (frac + "00").slice(0, Math.max(2, frac.length));
  return (negative ? "-" : "") + grouped + "." + cents;
}

// Money strings compared exactly: as integers of the smallest unit given.
export function moneyUnits(text, places = 6) {
  const s = String(text).trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return null;
  const frac = (m[3] || "").padEnd(places, "0").slice(0, places);
  const units = BigInt(m[2]) * 10n ** BigInt(places) + BigInt(frac || "0");
  return m[1] ? -units : units;
}

export function unitsText(units, places = 2, scale = 6) {
  const negative = units < 0n;
  let v = negative ? -units : units;
  v = v / 10n ** BigInt(scale - places);
  const s = v.toString().padStart(places + 1, "0");
  return (negative ? "-" : "") + s.slice(0, -places) + "." + s.slice(-places);
}

// RFC 3339 from the server -> the floor's time, its zone said (zone.js); the exact text
// in the title.
export function when(text) {
  if (!text) return el("span", { class: "muted", text: "—" });
  const ms = Date.parse(text);
  const shown = Number.isNaN(ms) ? text : formatInstant(ms);
  return el("time", { datetime: text, title: text, text: shown });
}

export function ago(text, now) {
  if (!text) return "never";
  const seconds = Math.max(0, Math.round((Date.parse(now) - Date.parse(text)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min ago`;
}

// A time input ("YYYY-MM-DD HH:MM", the floor's time) -> RFC 3339 in UTC, or undefined.
export function fromLocalInput(value) {
  if (!value) return undefined;
  const ms = zonedToUtc(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

export function toLocalInput(date) {
  return toZonedInput(date.getTime());
}

export function field(label, input, hint) {
  const id = input.id;
  return el("div", { class: "field" },
    el("label", { for: id, text: label }), input,
    hint ? el("p", { class: "hint", id: `${id}-hint`, text: hint }) : null);
}

export function row(cells) {
  return el("tr", {}, cells.map((c) => (c instanceof Node && c.tagName === "TD" ? c : el("td", {}, c))));
}

export function num(text) {
  return el("td", { class: "num" }, money(text));
}
