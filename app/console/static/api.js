// The operator API: signed in by name and password, the session's cookie (HttpOnly: this
// script never sees it) goes with each call and its CSRF token with each change; signed in
// by a token, the token from this tab's sessionStorage, sent as a header only.

const KEY = "jackpot.console.token";

export const session = {
  csrf: null, // the session's CSRF token (docs/api.md "Sign-in and sessions"), kept in memory
  get token() { return sessionStorage.getItem(KEY); },
  set token(value) {
    if (value) sessionStorage.setItem(KEY, value); else sessionStorage.removeItem(KEY);
  },
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
  // "seed: ... ; reason: ..." from problem+json's errors, or its detail.
  describe() {
    if (this.status === 0) return "The writer is unreachable: nothing was sent or changed. Try again when the connection is back.";
    const errors = this.problem?.errors;
    if (Array.isArray(errors) && errors.length) {
      return errors.map((e) => `${(e.loc || []).filter((p) => p !== "body" && p !== "query").join(".")}: ${e.msg}`).join("; ");
    }
    return this.problem?.detail || this.message;
  }
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== "" && v !== null) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export async function call(method, path, { body, params, raw } = {}) {
  const headers = {};
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  else if (session.csrf && method !== "GET") headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let answer;
  try {
    answer = await fetch(path + query(params), {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store", credentials: session.token ? "omit" : "same-origin",
    });
  } catch {
    throw new ApiError(0, null);
  }
  if (!answer.ok) {
    let problem = null;
    try { problem = await answer.json(); } catch { /* not JSON */ }
    throw new ApiError(answer.status, problem);
  }
  if (raw) return answer;
  return { status: answer.status, data: await answer.json() };
}

export const get = (path, params) => call("GET", path, { params }).then((a) => a.data);

// The API's own CSV, saved under `filename` (the token goes as a header, so the browser
// cannot fetch it by itself from a link).
export async function downloadCsv(path, params, filename) {
  const answer = await call("GET", path, { params: { ...params, format: "csv" }, raw: true });
  const blob = await answer.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function path(...parts) {
  return "/" + parts.map((p) => encodeURIComponent(p)).join("/");
}
