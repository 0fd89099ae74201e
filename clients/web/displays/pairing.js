// Arena Stream: a display's or a handheld's pairing token, as the committee's pairing link
// carries it (`#pair=<token>` in the address's fragment, which a browser never sends to a
// server): kept in localStorage, and the fragment taken out of the address bar at once.

const DISPLAY_TOKEN = "arena.display.token";

/**
 * A display's token (for a service without public viewing): the committee's pairing link
 * (/scoreboard?game=G#pair=<token>) carries it in the fragment, which a browser never sends
 * to a server. It is kept in localStorage and the fragment taken out of the address bar at
 * once; later loads use the kept one. Null when there is none.
 */
export function displayToken() {
  return pairedToken(DISPLAY_TOKEN);
}

/** A pairing link's token (`#pair=<token>`), kept under `key`; else the one kept; or null. */
export function pairedToken(key) {
  const frag = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (frag.has("pair")) {
    const token = frag.get("pair");
    frag.delete("pair");
    const rest = frag.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
    try { if (token) localStorage.setItem(key, token); } catch { /* private mode */ }
    if (token) return token;
  }
  try { return localStorage.getItem(key); } catch { return null; }
}

