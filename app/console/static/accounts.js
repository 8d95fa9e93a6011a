// The Accounts view: operators (supervisors manage them), open sessions, tokens, and the
// sign-in log (supervisors and auditors). Every change is one API call (docs/api.md
// "Accounts", "Sign-in and sessions", "Tokens"); the view reloads after it.

import { $, clear, el, when } from "./dom.js";
import { ApiError, call, get, path } from "./api.js";

const state = { you: null };
const ROLES = ["operator", "supervisor", "auditor"];

function report(text, kind) {
  const node = $("#accounts-result");
  node.className = `result ${kind}`;
  node.textContent = text;
}

async function act(what, method, target, body) {
  try {
    const { status } = await call(method, target, { body });
    report(status === 202 ? `${what}: waiting for a second supervisor.` : `${what}: done.`, "ok");
  } catch (error) {
    report(`${what}: ${error instanceof ApiError ? error.describe() : String(error)}`, "error");
  }
  await load();
}

function askReason(what) {
  const reason = prompt(`${what}: why? (kept in the audit log)`);
  return reason && reason.trim() ? reason.trim() : null;
}

function accountActions(account) {
  const base = path("v1", "accounts", account.name);
  const buttons = [];
  if (account.active) {
    buttons.push(el("button", { type: "button", class: "small danger", text: "Disable",
      "aria-label": `Disable ${account.name}`,
      onclick: () => { const r = askReason(`Disable ${account.name}`); if (r) act(`Disable ${account.name}`, "POST", `${base}/disable`, { reason: r }); } }));
  } else {
    buttons.push(el("button", { type: "button", class: "small secondary", text: "Enable",
      "aria-label": `Enable ${account.name}`,
      onclick: () => { const r = askReason(`Enable ${account.name}`); if (r) act(`Enable ${account.name}`, "POST", `${base}/enable`, { reason: r }); } }));
  }
  const role = el("select", { "aria-label": `Role of ${account.name}` },
    ROLES.map((r) => el("option", { value: r, text: r, selected: r === account.role })));
  role.addEventListener("change", () => act(`${account.name} becomes ${role.value}`, "POST", `${base}/role`, { role: role.value }));
  buttons.push(role);
  // A password is typed into a password field, never a prompt that shows it.
  const passwordForm = el("form", { class: "actions", hidden: true, novalidate: true },
    el("input", { type: "password", name: "password", autocomplete: "new-password",
      "aria-label": `New password for ${account.name} (at least 12 characters)`, placeholder: "new password" }),
    el("button", { type: "submit", class: "small", text: "Save" }));
  passwordForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const password = new FormData(passwordForm).get("password");
    if (password) act(`Password of ${account.name}`, "POST", `${base}/password`, { password });
  });
  buttons.push(el("button", { type: "button", class: "small secondary", text: "Set password",
    "aria-label": `Set the password of ${account.name}`, title: "Every session of the account ends",
    onclick: () => { passwordForm.hidden = false; passwordForm.querySelector("input").focus(); } }));
  buttons.push(passwordForm);
  if (account.pending_role) {
    buttons.push(el("button", { type: "button", class: "small", text: `Approve ${account.pending_role}`,
      disabled: account.pending_by === state.you.name,
      title: account.pending_by === state.you.name ? "A different supervisor must approve your grant" : "",
      onclick: () => act(`Approve ${account.name} as ${account.pending_role}`, "POST", `${base}/role/approve`) }));
    buttons.push(el("button", { type: "button", class: "small secondary", text: "Reject",
      onclick: () => act(`Reject ${account.pending_role} for ${account.name}`, "POST", `${base}/role/reject`) }));
  }
  return el("div", { class: "actions" }, buttons);
}

function renderAccounts(accounts) {
  const body = clear($("#accounts tbody"));
  for (const a of accounts) {
    const role = a.pending_role ? `${a.role} (${a.pending_role} pending, by ${a.pending_by})` : a.role;
    body.append(el("tr", { dataset: { account: a.name } },
      el("td", {}, el("code", { text: a.name })), el("td", { text: a.display_name }), el("td", { text: role }),
      el("td", { text: a.active ? "active" : "disabled" }), el("td", { text: a.has_password ? "set" : "none" }),
      el("td", {}, accountActions(a))));
  }
}

function renderSessions(sessions) {
  const body = clear($("#sessions tbody"));
  for (const s of sessions) {
    body.append(el("tr", { dataset: { session: s.id } },
      el("td", { text: s.account }), el("td", { text: s.address || "—" }), el("td", {}, when(s.created_at)),
      el("td", {}, when(s.last_seen_at)), el("td", {}, when(s.expires_at)),
      el("td", {}, el("button", { type: "button", class: "small secondary", text: "End",
        "aria-label": `End the session of ${s.account}`,
        onclick: () => act(`End a session of ${s.account}`, "POST", `${path("v1", "sessions", s.id)}/end`) }))));
  }
}

function renderTokens(tokens) {
  const body = clear($("#tokens tbody"));
  for (const t of tokens) {
    const stateText = t.revoked_at ? "revoked" : t.expires_at && new Date(t.expires_at) <= new Date() ? "expired" : "working";
    body.append(el("tr", { dataset: { token: t.id } },
      el("td", { text: t.account }), el("td", { text: t.name }), el("td", {}, when(t.created_at)),
      el("td", {}, t.expires_at ? when(t.expires_at) : el("span", { text: "never" })), el("td", { text: stateText }),
      el("td", {}, t.revoked_at ? null : el("button", { type: "button", class: "small secondary", text: "Revoke",
        "aria-label": `Revoke the token ${t.name}`,
        onclick: () => act(`Revoke ${t.name}`, "POST", `${path("v1", "tokens", t.id)}/revoke`) }))));
  }
}

function renderSignins(signins) {
  const body = clear($("#signins tbody"));
  for (const e of [...signins].reverse()) {
    body.append(el("tr", { class: e.event === "failure" || e.event === "lockout" ? "warn" : "" },
      el("td", {}, when(e.at)), el("td", { text: e.event }), el("td", { text: e.name || "—" }),
      el("td", { text: e.address || "—" }), el("td", { text: e.detail || (e.until ? `until ${e.until}` : "") })));
  }
}

export async function load() {
  if (!state.you) return;
  const supervisor = state.you.role === "supervisor";
  try {
    const jobs = [get("/v1/tokens").then((a) => renderTokens(a.tokens))];
    if (supervisor) {
      jobs.push(get("/v1/accounts").then((a) => renderAccounts(a.accounts)));
      jobs.push(get("/v1/sessions").then((a) => renderSessions(a.sessions)));
    }
    if (supervisor || state.you.role === "auditor") {
      // The latest page: the log is oldest first, so ask for its total, then its end.
      const first = await get("/v1/signins", { limit: 1 });
      jobs.push(get("/v1/signins", { limit: 50, offset: Math.max(0, first.total - 50) }).then((a) => renderSignins(a.signins)));
    }
    await Promise.all(jobs);
  } catch (error) {
    report(error instanceof ApiError ? error.describe() : String(error), "error");
  }
}

export function setupAccounts(you) {
  state.you = you;
  const supervisor = you.role === "supervisor";
  $("#accounts-card").hidden = !supervisor;
  $("#sessions-card").hidden = !supervisor;
  $("#unlock").hidden = !supervisor;
  $("#signins-card").hidden = !(supervisor || you.role === "auditor");
  $("#account-create").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = Object.fromEntries(new FormData(form));
    await act(`Create ${body.name}`, "POST", "/v1/accounts", body);
    if ($("#accounts-result").classList.contains("ok")) form.reset();
  });
  $("#token-create").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const data = new FormData(form);
    const note = $("#token-made");
    try {
      const { data: made } = await call("POST", "/v1/tokens", { body: { name: data.get("name"), days: Number(data.get("days")) } });
      note.hidden = false;
      clear(note).append("Your new token, shown this once: copy it now. ", el("code", { id: "token-value", text: made.token }));
      form.reset();
      report(`Token ${made.name}: made.`, "ok");
    } catch (error) {
      report(`New token: ${error instanceof ApiError ? error.describe() : String(error)}`, "error");
    }
    await load();
  });
  $("#unlock").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = new FormData(event.target).get("name");
    if (name) await act(`Unlock ${name}`, "POST", "/v1/signins/unlock", { name });
  });
}
