// Arena Stream: the live view of one game, shared by the scoreboard and the overlay.
//
//   import { LiveGame, setup } from "/clients/live.js";
//   const { game, lang, t } = setup();          // ?game=G&lang=es
//   const live = new LiveGame(game);
//   live.addEventListener("change", () => render(live.view));
//   live.start();
//
// It follows /ws/watch?game=G (docs/protocol.md, "Viewer protocol"): applies the
// snapshot and each delta's patch to a local copy of the view, checks that seq
// grows by exactly one, and after any drop reconnects with exponential backoff
// and resumes with ?since=<seq>&epoch=<epoch> (exactly the missed deltas, or a
// snapshot with reset). It never blanks the page on a reconnect: the last view
// stays, marked stale, until the resume is complete. It knows the resume is
// complete when the pong to the ping it sends on opening arrives: the server
// answers in order with the catch-up frames, so everything missed came first.
//
// Stale (`live.stale`, and the "stale" event): not connected, resuming, or no
// frame for two heartbeat intervals (then it also drops the socket and resumes).
// Clocks: `live.now()` estimates the server's clock (from heartbeat and pong
// times); `clockRemaining`, `sitoutRemaining` and `mountRemaining` extrapolate the
// view's figures to that moment, and freeze while stale.

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
    penalty: "Penalty", goal: "Goal",
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
    penalty: "Penal", goal: "Gol",
  },
};

export function pickLang(value) {
  return String(value || navigator.language || "en").toLowerCase().startsWith("es") ? "es" : "en";
}

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

/** m:ss, rounding up so that a countdown never shows 0:00 early (like the server's text). */
export function mmss(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

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

// ------------------------------------------------------------------ patches

/** Apply one delta's patch (docs/protocol.md, "Applying a patch"); returns the view. */
export function applyPatch(view, patch) {
  for (const [path, value] of patch) {
    if (path === "") { view = value; continue; }
    const keys = path.split("."), last = keys.pop();
    let node = view;
    for (const k of keys) {
      node = Array.isArray(node) ? node.find((x) => x && x.id === k) : node?.[k];
      if (node === undefined || node === null) break;
    }
    if (node === undefined || node === null) {
      throw new Error(`patch path ${path} does not exist in the view`);
    }
    if (!Array.isArray(node)) { node[last] = value; continue; }
    const i = node.findIndex((x) => x && x.id === last);
    if (value === null) { if (i >= 0) node.splice(i, 1); }
    else if (i < 0) node.push(value);
    else node[i] = value;
  }
  return view;
}

// ------------------------------------------------------------------ the connection

const BACKOFF_MIN = 250, BACKOFF_MAX = 8000;

export class LiveGame extends EventTarget {
  /**
   * @param {string} game the game id
   * @param {{url?: string}} options `url`: the watch endpoint (default: this page's host)
   */
  constructor(game, options = {}) {
    super();
    this.game = game;
    this.url = options.url || `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws/watch`;
    this.view = null;          // the local copy of the GameView
    this.seq = 0;
    this.epoch = null;
    this.recent = [];          // the snapshot's latest notices
    this.error = null;         // the last error frame (e.g. unknown_game)
    this.connected = false;
    this.caughtUp = false;     // the resume (or the first snapshot) is complete
    this.interval = 5000;      // the heartbeat interval, from the server
    this.lastFrame = 0;        // Date.now() of the last frame received
    this.staleSince = Date.now();
    this.stale = true;
    this._offsets = [];        // estimates of server time - Date.now()
    this.offset = 0;
    this._ws = null;
    this._attempt = 0;
    this._timer = null;
    this._watchdog = null;
    this._target = null;       // resuming: the seq that, once reached, means caught up
  }

  start() {
    this._connect();
    this._watchdog = setInterval(() => this._check(), 200);
    window.addEventListener("online", () => this._reconnectNow());
    return this;
  }

  /** The server's clock, frozen at the moment the data went stale. */
  now() {
    return (this.stale ? this.staleSince : Date.now()) + this.offset;
  }

  /** Play time elapsed since the view's `clock.at` (0 unless the clock runs). */
  playElapsed() {
    const c = this.view?.clock;
    if (!c || !c.running || c.period_over) return 0;
    return Math.max(0, Math.min(c.remaining_ms, this.now() - c.at));
  }

  clockRemaining() {
    const c = this.view?.clock;
    return c ? Math.max(0, c.remaining_ms - this.playElapsed()) : 0;
  }

  playMs() {
    const c = this.view?.clock;
    return c ? c.play_ms + this.playElapsed() : 0;
  }

  /** A box trip's or a no-substitute window's play time still owed, right now. */
  sitoutRemaining(so) {
    if (!so || so.release !== "after_play") return 0;
    return Math.max(0, so.remaining_ms - this.playElapsed());
  }

  /** A mount window is wall-clock time. */
  mountRemaining(m) {
    return m ? Math.max(0, m.deadline_at - this.now()) : 0;
  }

  // ---------------------------------------------------------------- internals

  _emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }

  _setStale() {
    const stale = !this.connected || !this.caughtUp || !this.view
      || Date.now() - this.lastFrame > 2 * this.interval;
    if (stale === this.stale) return;
    if (stale) this.staleSince = Date.now();
    this.stale = stale;
    this._emit("stale", stale);
  }

  _connect() {
    clearTimeout(this._timer);
    this._timer = null;
    const q = new URLSearchParams({ game: this.game });
    if (this.epoch !== null) { q.set("since", String(this.seq)); q.set("epoch", this.epoch); }
    let ws;
    try {
      ws = new WebSocket(`${this.url}?${q}`);
    } catch (err) {
      this._scheduleReconnect();
      return;
    }
    this._ws = ws;
    this.caughtUp = false;
    this._target = null;
    ws.onopen = () => {
      if (this._ws !== ws) return;
      this.connected = true;
      this.lastFrame = Date.now();
      // Answered after any catch-up frames: its pong marks the resume complete.
      ws.send(JSON.stringify({ type: "ping", device_time: Date.now() }));
      this._emit("connection", "open");
    };
    ws.onmessage = (e) => { if (this._ws === ws) this._frame(e.data); };
    ws.onclose = () => { if (this._ws === ws) this._lost(); };
    ws.onerror = () => {};
    this._setStale();
  }

  _lost() {
    const ws = this._ws;
    this._ws = null;
    this.connected = false;
    this.caughtUp = false;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      try { ws.close(); } catch { /* already closed */ }
    }
    this._setStale();
    this._emit("connection", "closed");
    this._scheduleReconnect();
  }

  _scheduleReconnect() {
    if (this._timer !== null) return;
    const base = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this._attempt++);
    const delay = base / 2 + Math.random() * base / 2;
    this._timer = setTimeout(() => { this._timer = null; this._connect(); }, delay);
  }

  _reconnectNow() {
    if (this.connected) return;
    this._attempt = 0;
    clearTimeout(this._timer);
    this._timer = null;
    this._connect();
  }

  _check() {
    if (this.connected && Date.now() - this.lastFrame > 2 * this.interval) {
      this._lost();  // no heartbeat for two intervals: drop the socket and resume
      return;
    }
    this._setStale();
  }

  _sample(offset) {
    this._offsets.push(offset);
    if (this._offsets.length > 12) this._offsets.shift();
    // A sample is the server's time minus ours, less the frame's transit: the largest is the best.
    this.offset = Math.max(...this._offsets);
  }

  /** The resume is complete once we hold the seq the pong (or a heartbeat) vouched for. */
  _resumed() {
    if (this.caughtUp || !this.view || this._target === null || this.seq < this._target) return;
    this.caughtUp = true;
    this._target = null;
    this._attempt = 0;
    this._setStale();
    this._emit("change", { kind: "resumed" });
  }

  _frame(data) {
    const received = Date.now();
    this.lastFrame = received;
    let m;
    try { m = JSON.parse(data); } catch { return; }
    switch (m.type) {
      case "snapshot":
        if (m.game !== this.game) return;
        this.view = m.view;
        this.seq = m.seq;
        this.epoch = m.epoch;
        this.recent = m.recent || [];
        this.error = null;
        this.caughtUp = true;
        this._attempt = 0;
        this._setStale();
        this._emit("snapshot", { reset: m.reset, reason: m.reason, recent: this.recent });
        this._emit("change", { kind: "snapshot" });
        return;
      case "delta": {
        if (m.game !== this.game || !this.view || m.seq <= this.seq) return;
        if (m.seq !== this.seq + 1) { this._lost(); return; }  // a gap: resume
        try {
          this.view = applyPatch(this.view, m.patch);
        } catch (err) {
          console.warn(err);
          this.epoch = null;  // can't trust the copy: ask for a fresh snapshot
          this._lost();
          return;
        }
        this.seq = m.seq;
        this._emit("delta", { seq: m.seq, notices: m.notices, catchUp: !this.caughtUp });
        this._emit("change", { kind: "delta" });
        this._resumed();
        return;
      }
      case "heartbeat": {
        this.interval = m.interval_ms || this.interval;
        this._sample(m.server_time - received);
        const latest = m.seqs?.[this.game] ?? 0;
        if (this.caughtUp && latest > this.seq) { this._lost(); return; }  // missed something: resume
        // Resuming, and the pong hasn't come: a heartbeat that we are level with does as well.
        if (!this.caughtUp && this.view) this._target = latest;
        this._resumed();
        this._setStale();
        return;
      }
      case "pong":
        if (typeof m.device_time === "number") {
          this._sample(m.server_time - (m.device_time + received) / 2);
        }
        if (this.view && !this.caughtUp) this._target = this.seq;
        this._resumed();
        return;
      case "error":
        this.error = m;
        this._emit("error", m);
        if (m.code === "unknown_game") {
          // Nothing to follow (yet): try again later, from scratch.
          this.epoch = null;
          this._lost();
        }
        return;
      default:
    }
  }
}
