// One alarm strip on every tab, fed by a small registry of sources: each source turns the
// floor's view into alarms `{key, text, since?}`; the strip shows them, counts the ones no
// supervisor has acknowledged in the page title, can sound and notify once per new alarm,
// and lets a supervisor acknowledge one (an audited `acknowledge` journal entry,
// docs/api.md "Alarms"). A view adds a source with `addAlarmSource(name, fn)`.

import { $, ago, clear, el, when } from "./dom.js";
import { ApiError, call } from "./api.js";

const sources = new Map();
const SHOWN = 4; // alarms listed before "show all"
const TITLE = document.title;
const ctx = { role: null, sound: false, expanded: false, heard: new Set(), first: true };
const answers = new Map(); // key -> the acknowledgement's answer or refusal, shown beside it

// `fn(floor)` -> [{key, text, since?}]: `key` is `<name>:<what>`, stable while the alarm is
// the same one (an acknowledgement holds for that key).
export function addAlarmSource(name, fn) { sources.set(name, fn); }

export function setAlarmsRole(role) {
  ctx.role = role;
  ctx.sound = localStorage.getItem("jackpot.console.sound") === "on";
}

export function alarmsOf(floor) {
  const acked = new Map((floor.acknowledged || []).map((a) => [a.alarm, a]));
  const alarms = [];
  for (const [name, fn] of sources) {
    for (const alarm of fn(floor) || []) alarms.push({ ...alarm, source: name, ack: acked.get(alarm.key) });
  }
  return alarms;
}

export function renderAlarms(floor) {
  const alarms = alarmsOf(floor);
  const open = alarms.filter((a) => !a.ack);
  document.title = open.length ? `(${open.length}) ${TITLE}` : TITLE;
  announce(open);
  const strip = $("#alarms");
  strip.dataset.count = String(open.length);
  strip.classList.toggle("quiet", open.length === 0);
  const focused = document.activeElement?.closest?.("#alarms [data-key]")?.dataset.key;
  const list = el("ul", { class: "alarm-list" });
  const ordered = [...open, ...alarms.filter((a) => a.ack)];
  const shown = ctx.expanded ? ordered : ordered.slice(0, SHOWN);
  for (const alarm of shown) list.append(item(alarm, floor));
  const more = alarms.length - shown.length;
  clear(strip).append(...[
    el("div", { class: "alarm-head" },
      el("strong", { id: "alarm-count", text: open.length ? `${open.length} alarm${open.length === 1 ? "" : "s"}` : "No alarm" }),
      alarms.length > open.length ? el("span", { class: "muted", text: ` · ${alarms.length - open.length} acknowledged` }) : null,
      el("span", { class: "alarm-controls" },
        el("label", { class: "inline" }, el("input", {
          type: "checkbox", id: "alarm-sound", checked: ctx.sound, dataset: { key: "alarm-sound" },
          onchange: (e) => { ctx.sound = e.target.checked; localStorage.setItem("jackpot.console.sound", ctx.sound ? "on" : "off"); },
        }), " Sound"),
        notifyButton())),
    alarms.length ? list : null,
    more > 0 || ctx.expanded ? el("button", {
      type: "button", class: "secondary small", id: "alarm-more", dataset: { key: "alarm-more" },
      onclick: () => { ctx.expanded = !ctx.expanded; renderAlarms(floor); },
    }, ctx.expanded ? "Show fewer" : `Show all ${alarms.length}`) : null].filter(Boolean));
  if (focused) strip.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

function item(alarm, floor) {
  const since = alarm.since ? el("span", { class: "age", text: ` · ${ago(alarm.since, floor.now).replace(" ago", "")}` }) : null;
  const answer = answers.get(alarm.key);
  let action;
  if (alarm.ack) {
    action = el("span", { class: "acked" }, `acknowledged by ${alarm.ack.by} at `, when(alarm.ack.at));
  } else if (ctx.role === "supervisor") {
    action = el("button", {
      type: "button", class: "small secondary", dataset: { key: `ack/${alarm.key}` },
      "aria-label": `Acknowledge: ${alarm.text}`, onclick: () => acknowledge(alarm, floor),
    }, "Acknowledge");
  } else {
    action = el("span", { class: "muted", text: "a supervisor acknowledges" });
  }
  return el("li", { class: `alarm alarm-${alarm.source}${alarm.ack ? " acked-item" : ""}`, dataset: { alarm: alarm.key } },
    el("span", { class: "alarm-text" }, alarm.text, since), action,
    answer ? el("span", { class: `result ${answer.kind}`, role: "status", text: answer.text }) : null);
}

async function acknowledge(alarm, floor) {
  try {
    const { data } = await call("POST", "/v1/alarms/acknowledge", { body: { alarm: alarm.key } });
    answers.set(alarm.key, { kind: "ok", text: `Recorded in the audit log (#${data.audit}).` });
    floor.acknowledged = [{ alarm: alarm.key, by: data.by, at: data.at }, ...(floor.acknowledged || [])];
  } catch (error) {
    answers.set(alarm.key, { kind: "error", text: `Refused: ${error instanceof ApiError ? error.describe() : error}` });
  }
  renderAlarms(floor);
}

function notifyButton() {
  if (!("Notification" in window)) return null;
  if (Notification.permission === "granted") return el("span", { class: "muted", text: "Browser notifications on" });
  if (Notification.permission === "denied") return el("span", { class: "muted", text: "Browser notifications blocked" });
  return el("button", {
    type: "button", class: "secondary small", id: "alarm-notify", dataset: { key: "alarm-notify" },
    onclick: () => Notification.requestPermission().then(() => { $("#alarm-notify")?.replaceWith(notifyButton() || ""); }),
  }, "Notify me");
}

// A new alarm (not heard before in this tab) sounds and notifies once; the first view
// after signing in only remembers what is already there.
function announce(open) {
  const fresh = open.filter((a) => !ctx.heard.has(a.key));
  for (const a of fresh) ctx.heard.add(a.key);
  if (ctx.first) { ctx.first = false; return; }
  if (!fresh.length) return;
  if (ctx.sound) beep();
  if ("Notification" in window && Notification.permission === "granted") {
    for (const a of fresh.slice(0, 3)) new Notification("Jackpot console", { body: a.text, tag: a.key });
  }
}

let audio;
function beep() {
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator(), gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.4);
  } catch { /* no audio: the strip and the title still say it */ }
}
