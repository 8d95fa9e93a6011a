// Signing in with a name and a password: the server sets the session's cookie (HttpOnly)
// and answers who signed in with the CSRF token its changes carry. A reload finds the
// session again (`GET /v1/session`).

import { $ } from "./dom.js";
import { ApiError, call, get, session } from "./api.js";

async function enter(you, signedIn) {
  session.csrf = you.csrf_token;
  const { you: _, ...floor } = await get("/v1/floor");
  signedIn(you, floor);
}

export function setupPasswordSignIn(signedIn) {
  const form = $("#password-form");
  const error = $("#password-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const name = $("#signin-name").value.trim();
    const password = $("#signin-password").value;
    $("#signin-password").value = "";
    if (!name || !password) { error.textContent = "Enter your name and your password."; return; }
    try {
      const { data } = await call("POST", "/v1/signin", { body: { name, password } });
      await enter(data, signedIn);
    } catch (e) {
      error.textContent = e instanceof ApiError && e.status === 401
        ? "The name or the password is not right."
        : e instanceof ApiError ? e.describe() : String(e);
      $("#signin-password").focus();
    }
  });
  if (session.token) return;
  // A session already open in this browser (a reload): straight in.
  get("/v1/session").then((you) => {
    if (you.via === "session") return enter(you, signedIn);
    return undefined;
  }).catch(() => { $("#signin-name").focus(); });
}
