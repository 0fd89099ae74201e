// Arena Stream: the live view of one game, shared by the scoreboard and the overlay.
//
//   import { LiveGame, setup } from "/clients/displays/live.js";
//   const { game, lang, t } = setup();          // ?game=G&lang=es
//   const live = new LiveGame(game);
//   live.addEventListener("change", () => render(live.view));
//   live.start();
//
// This module holds what the displays share: their words in English and Spanish, the
// page's settings from its URL, and formatting. The connection (LiveGame: snapshot,
// patches, seq checks, reconnect and resume, stale, the server's clock) is watch.js's,
// re-exported here; the handheld imports it from there too, and every page applies
// patches with patch.js.

export { LiveArena, LiveGame, WatchSocket } from "../shared/watch.js";
import { mmss, pickLang } from "../shared/common.js";

// ------------------------------------------------------------------ strings

export const DICT = {
  en: {
    period: "Period", periodOf: "Period {n} of {of}", overtime: "Overtime", final: "Final",
    notStarted: "Not started", periodEnd: "End of period {n}", halftime: "Half time",
    running: "Clock running", stopped: "Clock stopped",
    home: "Home", away: "Away",
    box: "Penalty box", boxEmpty: "No one in the penalty box",
    playOwed: "play time owed", returnsNext: "returns at next stoppage",
    sentOff: "Sent off", noSub: "no substitute", subNext: "substitute at next stoppage",
    subAllowed: "substitute allowed", suspended: "Suspended for this game",
    mount: "Mount replacement", mountExpired: "mount time expired",
    short: "Playing short", onField: "{n} on the field", full: "Full strength",
    carried: "Carried into this game", carriedFrom: "from {game}",
    kind_sit_out: "starts in the box", kind_suspension: "suspended", kind_yellow_status: "starts on a yellow",
    live: "Live", connecting: "Connecting…", reconnecting: "Reconnecting… showing the last update",
    offline: "Connection lost: showing the last update",
    noGame: "Add the game to the address: {example}", unknownGame: "No game “{game}” has been set up yet.",
    yellowCard: "Yellow card", secondYellow: "Second yellow", thirdYellow: "Third yellow",
    yellowCards: "{n} yellow cards", redCard: "Red card", toBox: "To the penalty box",
    released: "Back in play", eligible: "Returns at next stoppage", subAllowedTitle: "Substitute allowed",
    mountOpen: "Mount replacement", mountLate: "Mount time expired", sentOffTitle: "Sent off",
    penalty: "Penalty", goal: "Goal", onHandicap: "incl. {n} on handicap",
  },
  es: {
    period: "Período", periodOf: "Período {n} de {of}", overtime: "Tiempo suplementario", final: "Final",
    notStarted: "Sin comenzar", periodEnd: "Fin del período {n}", halftime: "Entretiempo",
    running: "Reloj en marcha", stopped: "Reloj detenido",
    home: "Local", away: "Visitante",
    box: "Área de castigo", boxEmpty: "Nadie en el área de castigo",
    playOwed: "tiempo de juego debido", returnsNext: "vuelve en la próxima detención",
    sentOff: "Expulsado", noSub: "sin sustituto", subNext: "sustituto en la próxima detención",
    subAllowed: "sustituto permitido", suspended: "Suspendido para este partido",
    mount: "Reemplazo de caballo", mountExpired: "venció el tiempo del caballo",
    short: "Con uno menos", onField: "{n} en la cancha", full: "Completo",
    carried: "Sanciones trasladadas a este partido", carriedFrom: "de {game}",
    kind_sit_out: "empieza en el área", kind_suspension: "suspendido", kind_yellow_status: "empieza con amarilla",
    live: "En vivo", connecting: "Conectando…", reconnecting: "Reconectando… se muestra la última actualización",
    offline: "Sin conexión: se muestra la última actualización",
    noGame: "Agregue el partido a la dirección: {example}", unknownGame: "Todavía no se preparó el partido “{game}”.",
    yellowCard: "Tarjeta amarilla", secondYellow: "Segunda amarilla", thirdYellow: "Tercera amarilla",
    yellowCards: "{n} tarjetas amarillas", redCard: "Tarjeta roja", toBox: "Al área de castigo",
    released: "Vuelve al juego", eligible: "Vuelve en la próxima detención", subAllowedTitle: "Sustituto permitido",
    mountOpen: "Reemplazo de caballo", mountLate: "Venció el tiempo del caballo", sentOffTitle: "Expulsado",
    penalty: "Penal", goal: "Gol", onHandicap: "incl. {n} de hándicap",
  },
};

export function translator(lang) {
  const table = DICT[lang] || DICT.en;
  return (key, vars = {}) => String(table[key] ?? DICT.en[key] ?? key)
    .replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

/** The page's settings from its URL: game, lang, a translator, and the raw parameters. */
export function setup(search = location.search) {
  const params = new URLSearchParams(search);
  const lang = pickLang(params.get("lang") || "en");
  document.documentElement.lang = lang;
  return { params, game: params.get("game") || "", lang, t: translator(lang) };
}

// ------------------------------------------------------------------ formatting

/** The game clock: m:ss, and tenths in the last minute while it runs. */
export function gameClock(ms, running) {
  if (running && ms < 60000 && ms > 0) {
    const tenths = Math.ceil(ms / 100);
    return `${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  return mmss(ms);
}

/** "aiken-arena" -> "Aiken Arena": ids made readable. */
export function label(id) {
  return String(id || "").replace(/[-_]+/g, " ").replace(/\b\p{L}/gu, (c) => c.toUpperCase());
}

/** A notice's display text split into its sentence and its citation ("Rule 14 · …"). */
export function splitCitation(text) {
  const m = /^(.*?)[.\s]*\(([^()]*)\)\.?\s*$/s.exec(text || "");
  return m ? { sentence: m[1], citation: m[2] } : { sentence: text || "", citation: "" };
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-") || k === "id" || k === "title" || k === "role" || k.startsWith("aria-")) {
      node.setAttribute(k, v === true ? "" : String(v));
    } else node[k] = v;
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) {
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
