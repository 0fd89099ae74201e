// Arena Stream handheld: the page's state, what it keeps in localStorage, the DOM and time
// helpers every module uses, and the game and this device's events described in words.
import { L, lang, t, cardName, conductLabel, stripCitation } from "./handheld.js";
import { playerText, teamColors, teamShort, teamText } from "../shared/roster.js";

export const LS = {
  token: "arena.handheld.token",
  lang: "arena.handheld.lang",
  game: "arena.handheld.game",
  watch: (game) => "arena.handheld.watch." + game,
  alerts: (game) => "arena.handheld.alerts." + game,
};

export const S = {
  token: null, claims: null, device: null, role: null, game: null, arena: null,
  view: null, notices: [], arenaGames: {}, arenaRosters: {}, presence: [],
  roster: null,                      // the game's registered names, numbers, colours (watch.js), or null
  live: null,                        // the feed: watch.js's LiveGame (or LiveArena, to pick a game)
  alerts: [], dismissed: [],         // alerts shown until dismissed; the keys of dismissed ones
  entries: [],                       // this device's outbox, oldest first
  offset: 0, offsetFromDevice: false, // server clock − device clock, ms
  dev: { ws: null, state: "idle", ready: false, welcome: null, waiter: null, attempt: 0,
         lastHeard: 0, rtt: null, opened: 0, retryTimer: 0, syncTimer: 0, denied: null, lastPing: 0 },
  feed: { error: null },
  net: { offline: false, probing: null }, // offline as the probes found it (not navigator.onLine alone)
  pumping: false, pumpAgain: false,
  sheet: null, actionAt: null,
};

/** What a module asks of one that imports it (the screens, the outbox's pump): the entry
 * module fills these in, so that no two modules import each other. */
export const app = {
  render() {}, renderConn() {}, renderAbout() {}, toast() {}, pump() {},
};

export function lsGet(key) { try { return localStorage.getItem(key); } catch { return null; } }
export function lsSet(key, value) {
  try { if (value == null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* full */ }
}

// ------------------------------------------------------------------ DOM

export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid == null || kid === false) continue;
    el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

export function esc(s) {
  return String(s ?? "").replace(/[&<>\x22\x27]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

/** Replace an element's content only when it changed (a tap in progress survives). */
export function setHTML(el, html) {
  if (el && el.__html !== html) { el.innerHTML = html; el.__html = html; }
}

// ------------------------------------------------------------------ time

export function hhmmss(at) {
  return new Date(at).toLocaleTimeString(lang === "es" ? "es" : "en-GB", { hour12: false });
}
/** The server's clock: from this device's clock sync, else from the feed's. */
export const serverNow = () => Date.now() + (S.offsetFromDevice || !S.live ? S.offset : S.live.offset);
export const ago = (ms) => t("ago", { s: Math.max(0, Math.round((Date.now() - ms) / 1000)) });
/** The game clock now: run from `clock.at` while it runs, held while the feed is stale. */
export function clockFigures() {
  const c = S.view && S.view.clock;
  if (!c) return null;
  const stale = !S.live || S.live.stale;
  const run = c.running && !stale;
  const remaining = run ? Math.max(0, c.remaining_ms - (serverNow() - c.at)) : c.remaining_ms;
  return { ...c, left: remaining, stale };
}

// ------------------------------------------------------------------ the game

export const player = (pid) => (S.view && S.view.players ? S.view.players.find((p) => p.id === pid) : null);
const teamId = (side) => (S.view && S.view.teams && S.view.teams[side] ? S.view.teams[side].team : null);
/** A team by its registered name (else its id; no game state: "Home" / "Away"). */
export const teamName = (side) => (teamId(side) ? teamText(S.roster, side, teamId(side)) : t(side));
/** The score line's letters: the registered short ones, upper-case, else the id. */
export const teamLetters = (side) => teamShort(S.roster, side, teamId(side)) || teamId(side) || t(side);
export const teamColours = (side) => teamColors(S.roster, side, teamId(side));
/** A player as the handheld shows him: "#2 Ortega", or his id when he is not registered. */
export const who = (pid) => playerText(S.roster, pid);
/** The registered number and name apart ({number, name}), or null. */
export const registered = (pid) => (S.roster && pid && S.roster.players[pid]) || null;
export const sideOf = (pid) => { const p = player(pid); return p ? p.side : null; };
/** Is the network known to be down? The browser says so, or the last probe got no answer. */
export const isOffline = () => navigator.onLine === false || S.net.offline;
export const isOfficial = () => S.role === "umpire" || S.role === "referee" || S.role === "admin";
export const isTimekeeper = () => S.role === "timekeeper" || S.role === "admin";

// ------------------------------------------------------------------ events in words

export function describe(ev) {
  const pen = ev.penalty != null && ev.penalty !== "" ? t("with_penalty", { p: ev.penalty }) : "";
  switch (ev.type) {
    case "whistle": return t("whistle_ev");
    case "clock.start": return t("clock_start_ev");
    case "clock.stop": return t("clock_stop_ev");
    case "horn": return ev.split ? t("split_ev") : t("horn_ev");
    case "game.end": return t("game_end_ev") + (ev.shootout ? " (shootout)" : "");
    case "goal": return t("goal_ev", {
      team: teamName(ev.team), who: ev.player ? " · " + who(ev.player) : "", pts: t("pt", { n: ev.points || 1 }) });
    case "card": {
      // The conduct: chosen at recording, or named later (card.amended), or not yet.
      const named = ev.conduct || namedConduct(ev.game, logIdOf(ev));
      return t("card_ev", {
        card: cardName(ev.color, ev.count || 1), player: ev.player ? who(ev.player) : (ev.official ? `${teamName(ev.official.team)} ${ev.official.role}` : ""),
        conduct: named ? conductLabel(named) : t("no_conduct") }) + pen;
    }
    case "card.amended": return t("amended_ev", { conduct: conductLabel(ev.conduct), what: labelOf(ev.target) });
    case "box.left_early": return t("box_ev", { player: who(ev.player) }) + pen;
    case "arena.left": return t("arena_ev", { player: who(ev.player) }) + pen;
    case "substitution": return t("sub_ev", { team: teamName(ev.team), in: who(ev.in), out: who(ev.out) });
    case "mount.removed": return t("mount_removed_ev", {
      why: ev.reason === "abuse" ? t("mount_abuse") : t("mount_unfit"), player: who(ev.player) }) + pen;
    case "mount.replaced": return t("mount_replaced_ev", { player: who(ev.player) });
    case "postgame.card": return t("postgame_ev", {
      level: ev.level === "red" ? t("pg_red") : ev.level === "3y" ? t("pg_3y") : t("pg_2y"), player: who(ev.player) });
    case "void": return t("void_ev", { what: labelOf(ev.target) });
    default: return ev.type;
  }
}

/** An event of this device's log id: "<device>/<id>", known before the ack (docs/protocol-device.md). */
export const logIdOf = (ev) => `${S.device}/${ev.id}`;
export const entryLogId = (e) => (e.ack && e.ack.log_id) || `${e.device || S.device}/${e.id}`;

/** The conduct a card was named for after it was recorded (this device's card.amended, the
 * feed's conduct.named), the latest one; null if none. */
export function namedConduct(game, logId) {
  let best = null;
  for (const e of S.entries) {
    if (e.type !== "card.amended" || e.state === "refused" || (game && e.game !== game)) continue;
    const ev = JSON.parse(e.body);
    if (ev.target === logId && (!best || ev.at >= best.at)) best = { at: ev.at, conduct: ev.conduct };
  }
  for (const n of S.notices) {
    if (n.type === "conduct.named" && n.target === logId && (!best || n.at > best.at)) best = { at: n.at, conduct: n.conduct };
  }
  return best ? best.conduct : null;
}

/** Cards of this device not yet acked (queued or sent), for a player: shown on his tile. */
export function pendingCards(pid) {
  return S.entries.filter((e) => e.type === "card" && (e.state === "queued" || e.state === "sent") && e.game === S.game
    && JSON.parse(e.body).player === pid).map((e) => ({ entry: e, ev: JSON.parse(e.body) }));
}

/** This device's last event in this game that can be undone (a void of it): not a void, not
 * refused, not voided already. Queued ones too: their log id is known, and the void follows
 * them in the outbox. */
export function lastUndoable() {
  const voided = voidedTargets();
  for (const e of S.entries.filter((x) => x.game === S.game).reverse()) {
    if (e.state === "refused" || e.type === "void") continue;
    const logId = entryLogId(e);
    if (voided.has(logId) || pendingVoids().has(logId)) continue;
    if (S.role === "timekeeper" && !["clock.start", "clock.stop", "horn"].includes(e.type)) continue;
    const ev = JSON.parse(e.body);
    return { logId, label: describe(ev), at: ev.at, own: true, entry: e };
  }
  return null;
}

/** Targets of this device's voids not answered yet. */
function pendingVoids() {
  const out = new Set();
  for (const e of S.entries) if (e.type === "void" && (e.state === "queued" || e.state === "sent")) out.add(JSON.parse(e.body).target);
  return out;
}

/** What a log id refers to, in words: one of this device's events, or a notice it caused. */
function labelOf(logId) {
  const own = S.entries.find((e) => entryLogId(e) === logId);
  if (own) return describe(JSON.parse(own.body));
  const n = S.notices.find((x) => x.cause === logId && x.text);
  return n ? stripCitation(L([n.text.en, n.text.es])) : logId;
}

export function voidedTargets() {
  const out = new Set();
  for (const n of S.notices) if (n.type === "correction" && n.reason === "void" && n.target) out.add(n.target);
  for (const e of S.entries) {
    if (e.type === "void" && e.state === "acked") out.add(JSON.parse(e.body).target);
  }
  return out;
}

/** Recent events that could be voided: this device's acked ones and the feed's causes. */
export function recentEvents() {
  const voided = voidedTargets();
  const items = [];
  const seen = new Set();
  const clockOnly = S.role === "timekeeper";
  for (const e of S.entries) {
    if (e.state !== "acked" || !e.ack || e.type === "void" || e.game !== S.game) continue;
    if (clockOnly && !["clock.start", "clock.stop", "horn"].includes(e.type)) continue;
    seen.add(e.ack.log_id);
    if (voided.has(e.ack.log_id)) continue;
    items.push({ logId: e.ack.log_id, label: describe(JSON.parse(e.body)), at: e.ack.at, own: true });
  }
  // Other devices' events, each named by its first notice (the card, the goal, …).
  for (const n of S.notices) {
    if (!n.cause || !n.text || seen.has(n.cause) || n.cause.startsWith("admin/")) continue;
    if (["correction", "rejected", "game.ready", "alert"].includes(n.type) || n.type.startsWith("obligation.")) continue;
    if (clockOnly && n.type !== "clock") continue;
    seen.add(n.cause);
    if (voided.has(n.cause)) continue;
    items.push({ logId: n.cause, label: stripCitation(L([n.text.en, n.text.es])), at: n.at, own: false });
  }
  return items.sort((a, b) => b.at - a.at).slice(0, 12);
}
