// toolhost dashboard: the API client and the session-scoped credentials.
//
// Credentials live in sessionStorage only (this tab, until it closes): never localStorage,
// never cookies. Every request goes to this origin (CSP connect-src 'self').

const KEYS = { builder: "toolhost.builderKey", admin: "toolhost.adminToken" };

export const session = {
  get builderKey() { return sessionStorage.getItem(KEYS.builder) || ""; },
  set builderKey(v) { v ? sessionStorage.setItem(KEYS.builder, v) : sessionStorage.removeItem(KEYS.builder); },
  get adminToken() { return sessionStorage.getItem(KEYS.admin) || ""; },
  set adminToken(v) { v ? sessionStorage.setItem(KEYS.admin, v) : sessionStorage.removeItem(KEYS.admin); },
};

/** An error answer of the API: `{ok:false, error:{code, message, details}}` plus the status. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || "http_error";
    this.details = details;
  }
}

/**
 * Calls the API. `as` is "builder", "admin" or undefined (public). Resolves with the parsed
 * JSON body on 2xx; rejects with an ApiError otherwise.
 */
export async function api(path, { method = "GET", body, as, headers = {} } = {}) {
  const h = { Accept: "application/json", ...headers };
  if (as === "builder") h["X-Builder-Key"] = session.builderKey;
  if (as === "admin") h["X-Admin-Token"] = session.adminToken;
  if (body !== undefined) h["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (e) {
    throw new ApiError(0, "network_error", `The server could not be reached (${e.message}).`);
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) {
    const err = data && data.error ? data.error : {};
    throw new ApiError(response.status, err.code, err.message || `HTTP ${response.status}`, err.details);
  }
  return data;
}

/** Like `api`, but resolves with `{status, headers, data}` for any status (the "try it" panel,
 * the editor's test call). `body` is JSON text. */
export async function raw(path, { method = "GET", body, headers = {} } = {}) {
  const started = performance.now();
  const response = await fetch(path, {
    method,
    headers: { Accept: "application/json", ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
    body,
    credentials: "omit",
    cache: "no-store",
  });
  const text = await response.text();
  let data = text;
  try { data = JSON.parse(text); } catch { /* not JSON: keep the text */ }
  return { status: response.status, statusText: response.statusText, headers: response.headers, data, ms: Math.round(performance.now() - started) };
}

/** Whether the route exists on this server (a JSON 404 `route_not_found` means it does not). */
export function missingRoute(e) {
  return e instanceof ApiError && e.status === 404 && e.code === "route_not_found";
}
