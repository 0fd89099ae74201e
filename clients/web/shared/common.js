// Arena Stream pages: the few helpers every page uses (the scoreboard, the overlay and its
// control page, the committee's console, the handheld), written once and imported.

/** The first element that matches a CSS selector, in the document or under `root`. */
export const $ = (sel, root = document) => root.querySelector(sel);

/** The element with this id. */
export const byId = (id) => document.getElementById(id);

/** m:ss, rounding up so that a countdown never shows 0:00 early (like the server's text). */
export function mmss(ms) {
  const s = Math.max(0, Math.ceil((ms || 0) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** "es" for a language tag in Spanish ("es", "es-AR"), else "en"; "en" when there is none. */
export function pickLang(value) {
  return String(value || "en").toLowerCase().startsWith("es") ? "es" : "en";
}

/** A score as people write it (goals on handicap may be half goals): 5.5 → "5½", 0.5 → "½",
 * 4 → "4". The server's texts say it the same way (stream.rules.text.half). */
export function goals(x) {
  const n = Number(x) || 0;
  const whole = Math.trunc(n);
  return n === whole ? String(whole) : `${whole || ""}½`;
}
