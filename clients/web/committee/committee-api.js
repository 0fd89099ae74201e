// The committee console's HTTP client: the token (pasted once, kept in localStorage, sent
// only as `Authorization: Bearer`, never in a URL), JSON calls, file downloads that need
// the token (fetched with the header and saved as a Blob), and the API's refusals.

const KEY = "arena.committee.token";

export const session = { token: "", claims: null };

/** The claims of a `v1.<payload>.<signature>` token (read, not verified: the service does that). */
export function claimsOf(token) {
  const part = String(token || "").split(".")[1];
  if (!part) return null;
  try {
    const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(b64 + "===".slice((b64.length + 3) % 4)), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === "object" ? claims : null;
  } catch {
    return null;
  }
}

export function restore() {
  const token = localStorage.getItem(KEY) || "";
  session.token = token;
  session.claims = token ? claimsOf(token) : null;
  return session.claims;
}

export function signIn(token) {
  session.token = token.trim();
  session.claims = claimsOf(session.token);
  localStorage.setItem(KEY, session.token);
}

export function signOut() {
  session.token = "";
  session.claims = null;
  localStorage.removeItem(KEY);
}

/** A refusal: the HTTP status and the API's `code`, `detail`, `clause` (and `rows` for a CSV). */
export class ApiError extends Error {
  constructor(status, body) {
    const b = body && typeof body === "object" ? body : { detail: String(body || "").trim() };
    const code = b.code || { 401: "unauthorized", 403: "forbidden", 404: "not_found", 413: "too_large",
      415: "unsupported_media" }[status] || `http_${status}`;
    super(b.detail || code);
    this.status = status;
    this.code = code;
    this.detail = b.detail || "";
    this.clause = b.clause || null;
    this.body = b;
  }
}

/** An event id made here, so that a retry of the same action is the same event. */
export function newId(prefix = "c") {
  const rnd = crypto.getRandomValues(new Uint8Array(6));
  return `${prefix}-${Date.now().toString(36)}-${Array.from(rnd, (x) => x.toString(16).padStart(2, "0")).join("")}`;
}

function headers(extra = {}) {
  return session.token ? { Authorization: `Bearer ${session.token}`, ...extra } : extra;
}

async function parse(res) {
  const text = await res.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return text; }
}

/**
 * Call the API. `body`: an object (sent as JSON), or `{raw, type}` for a file. Answers the parsed
 * body; throws ApiError for any status >= 400. A 503 (nothing stored, or the store's answer lost)
 * is retried with the same body (same event id) a few times before it is shown.
 */
export async function api(method, path, body = undefined) {
  let init = { method, headers: headers() };
  if (body && body.raw !== undefined) init = { method, headers: headers({ "Content-Type": body.type }), body: body.raw };
  else if (body !== undefined) init = { method, headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) };
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      if (attempt < 3) { await sleep(400 * 2 ** attempt); continue; }
      throw new ApiError(0, { code: "offline", detail: String(err.message || err) });
    }
    const parsed = await parse(res);
    if (res.status === 503 && attempt < 3) { await sleep(400 * 2 ** attempt); continue; }
    if (res.status >= 400) throw new ApiError(res.status, parsed);
    return parsed;
  }
}

/** POST an event route: the body gets an `id` (kept across retries) unless it has one. */
export function submit(path, fields, prefix = "c") {
  return api("POST", path, { id: newId(prefix), ...fields });
}

/** Fetch a file that needs the token, and save it (the token never goes in a link). */
export async function download(path, filename) {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw new ApiError(res.status, await parse(res));
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return blob;
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
