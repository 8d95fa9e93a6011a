// The console: sign-in, the views, the live floor.

import { $, clear, el } from "./dom.js";
import { ApiError, call, get, session } from "./api.js";
import { renderLevels } from "./levels.js";
import { Live } from "./live.js";
import { renderFloor } from "./floor.js";
import { refreshForms, renderProposals, setupChanges } from "./changes.js";
import { audit, awards, followFloor } from "./records.js";
import { setZone } from "./zone.js";
import { run as reconcile, setupReconciliation } from "./reconcile.js";
import { load as loadAccounts, setupAccounts } from "./accounts.js";
import { setupPasswordSignIn } from "./signin.js";
import { load as unpaid, setupPayments } from "./payments.js";
import { setupSigns, showSigns } from "./signs.js";
import { renderInPlay, setupInPlay } from "./in_play.js";
import { setHoldsRole } from "./holds.js";
import { renderAlarms, setAlarmsRole } from "./alarms.js";
import "./alarm_sources.js";

const state = { floor: null, you: null, live: null, view: "floor", unreachable: false };

const CONNECTION = {
  connecting: ["conn-off", "Connecting…"],
  reconnecting: ["conn-bad", "Writer unreachable: reconnecting…"],
  unreachable: ["conn-bad", "Writer unreachable: reconnecting…"],
  live: ["conn-ok", "Live"],
};

function setConnection(kind) {
  const [cls, text] = CONNECTION[kind];
  const node = $("#connection");
  node.className = `conn ${cls}`;
  node.textContent = text;
  node.dataset.state = kind;
  state.unreachable = kind === "unreachable" || kind === "reconnecting";
  const banner = $("#banner");
  if (state.unreachable) {
    banner.hidden = false;
    banner.textContent = "Writer unreachable: the figures below are the last received and may be out of date. Reconnecting…";
  } else if (kind === "live") {
    banner.hidden = true;
  }
  if (state.floor) renderFloor(state.floor, { unreachable: state.unreachable });
}

function show(view) {
  state.view = view;
  for (const button of document.querySelectorAll(".tabs button")) {
    if (button.dataset.view === view) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== `view-${view}`;
  if (view === "audit") audit.load();
  if (view === "awards") awards.load();
  if (view === "journal") journal();
  if (view === "accounts") loadAccounts();
  if (view === "unpaid") unpaid();
  showSigns(view === "signs");
  if (view === "reconciliation" && !$("#rec tbody").children.length) reconcile();
}

async function journal() {
  const fields = clear($("#journal-fields"));
  try {
    const head = await get("/v1/journal/head");
    fields.append(el("dt", { text: "Entries (sequence of the head)" }), el("dd", { id: "journal-seq", text: String(head.seq) }),
      el("dt", { text: "Head hash (SHA-256, chained)" }), el("dd", {}, el("code", { id: "journal-head", text: head.head })));
  } catch (error) {
    fields.append(el("dd", { class: "error", text: error.describe ? error.describe() : String(error) }));
  }
}

// An answer where its action is: the form's own line, or the proposals' (`where`).
function report(text, kind, where = "proposals-result") {
  const node = $(`#${where}`);
  node.className = `result ${kind}`;
  node.textContent = text;
  node.scrollIntoView({ block: "nearest" });
}

function onFloor(floor) {
  state.floor = floor;
  renderFloor(floor, { unreachable: state.unreachable });
  renderLevels(floor);
  renderProposals(floor);
  refreshForms();
  renderInPlay(floor);
  renderAlarms(floor);
}

function signedIn(you, floor) {
  state.you = you;
  state.floor = { ...floor };
  setZone(floor.gaming_day?.time_zone);
  followFloor(() => state.floor);
  $("#signin").hidden = true;
  $("#app").hidden = false;
  $("#who").hidden = false;
  $("#who-name").textContent = you.display_name || you.name;
  $("#who-account").textContent = you.display_name ? `(${you.name})` : "";
  $("#who-role").textContent = you.role;
  setupAccounts(you);
  setHoldsRole(you.role);
  setAlarmsRole(you.role);
  setupChanges({
    role: you.role, name: you.name, floor: () => state.floor, report,
    changed: () => { if (state.view === "audit") audit.load(); },
  });
  audit.setup(floor);
  awards.setup(floor);
  setupReconciliation(() => state.floor);
  setupPayments(you);
  setupSigns();
  setupInPlay({ role: you.role });
  onFloor(floor);
  state.live = new Live(session.token, { onFloor, onState: setConnection, onDenied: () => signOut("Your token is no longer accepted: sign in again.") });
  show("floor");
  // Keyboard focus to the content without scrolling the header away.
  $("#main").focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

async function signOut(message) {
  state.live?.stop();
  // A session ends on the server too: its cookie is refused from then on.
  if (!session.token && session.csrf) await call("POST", "/v1/signout").catch(() => {});
  session.token = null;
  // Nothing of the floor stays on screen after signing out: reload the page.
  if (message) sessionStorage.setItem("jackpot.console.message", message);
  location.reload();
}

async function signIn(token) {
  session.token = token;
  const error = $("#signin-error");
  error.textContent = "";
  try {
    const floor = await get("/v1/floor");
    const { you, ...rest } = floor;
    signedIn(you, rest);
  } catch (e) {
    session.token = null;
    error.textContent = e instanceof ApiError && (e.status === 401 || e.status === 403)
      ? "This token is not an operator's token. Check it and try again."
      : e instanceof ApiError ? e.describe() : String(e);
    $("#token").focus();
  }
}

function start() {
  for (const button of document.querySelectorAll(".tabs button")) button.addEventListener("click", () => show(button.dataset.view));
  $("#sign-out").addEventListener("click", () => signOut());
  $("#journal-refresh").addEventListener("click", journal);
  $("#signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("#token").value.trim();
    $("#token").value = "";
    if (!token) { $("#signin-error").textContent = "Enter your token."; return; }
    signIn(token);
  });
  const message = sessionStorage.getItem("jackpot.console.message");
  if (message) {
    sessionStorage.removeItem("jackpot.console.message");
    $("#signin-error").textContent = message;
  }
  setupPasswordSignIn(signedIn);
  if (session.token) signIn(session.token);
}

start();
