// Arena Stream: following /ws/watch (docs/protocol-viewer.md, "Viewer protocol"), for every page:
// the scoreboard and the overlay (through live.js) and the handheld.
//
//   import { LiveGame } from "/clients/shared/watch.js";
//   const live = new LiveGame(game);               // options: url, token, minStale
//   live.addEventListener("change", () => render(live.view));
//   live.start();
//
// LiveGame applies the snapshot and each delta's patch (patch.js) to a local copy of the
// view, checks that seq grows by exactly one, and after any drop reconnects with
// exponential backoff and resumes with ?since=<seq>&epoch=<epoch> (exactly the missed
// deltas, or a snapshot with reset). It never blanks the page on a reconnect: the last view
// stays, marked stale, until the resume is complete. It knows the resume is complete when
// the pong to the ping it sends on opening arrives: the server answers in order with the
// catch-up frames, so everything missed came first. A patch that can't be applied (a path
// that isn't in the view) makes it resync: it drops seq and epoch and subscribes again
// without since, for a fresh snapshot (the "resync" event says which path and why).
//
// Stale (`live.stale`, and the "stale" event): not connected, resuming, or no frame for
// two heartbeat intervals (then it also drops the socket and resumes). Clocks: `live.now()`
// estimates the server's clock (from heartbeat and pong times); `clockRemaining`,
// `sitoutRemaining` and `mountRemaining` extrapolate the view's figures to that moment, and
// freeze while stale.
//
// Events: "change" (the view changed, the roster changed, or the resume completed),
// "snapshot" ({reset, reason, recent, resync}), "delta" ({seq, notices, catchUp}), "roster"
// (the game's registered names, numbers and colours), "resync" ({path, reason}), "stale",
// "connection" ("open" / "closed"), "presence" (the officials' devices), "error" (an error
// frame). LiveGames follows every game of an arena or of an event instead (LiveArena: the
// handheld's game picker; the public pages follow an event).
//
// Names: the service sends the game's roster as a whole document (a `roster` frame, after
// every snapshot and whenever a registration changes it); each replaces the one before.
// `live.roster` holds it ({home, away, players}, or null: nothing received), and roster.js's
// `playerText`, `teamText`, `teamShort` and `teamColors` say what a display shows: "#2 Ortega",
// the team's name, its short letters upper-cased, its colours with a readable ink; the raw id
// only when nothing is registered. A display's pairing token: pairing.js.

import { applyPatch } from "./patch.js";
import { rosterOf } from "./roster.js";

// ------------------------------------------------------------------ the connection

const BACKOFF_MIN = 250, BACKOFF_MAX = 8000;

/**
 * One /ws/watch socket kept up: after any drop (or two heartbeat intervals without a
 * frame, or the browser going offline) it reconnects with exponential backoff. It
 * estimates the server's clock from heartbeats and pongs, and answers `auth_required`
 * with `options.token` if it has one. What to follow, and what to do with the game's
 * frames, is a subclass's: LiveGame (one game, resumed) and LiveGames (every game of an
 * arena or an event).
 */
export class WatchSocket extends EventTarget {
  /**
   * @param {{url?: string, token?: string, minStale?: number}} options `url`: the watch
   *   endpoint (default: this page's host); `token`: sent only when the service asks for one
   *   (a service without public viewing), in a frame, never in the URL; `minStale`: never
   *   call the data stale sooner than this many ms (default: two heartbeat intervals)
   */
  constructor(options = {}) {
    super();
    this.url = options.url || `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws/watch`;
    this.token = options.token || null;
    this.minStale = options.minStale || 0;
    this.error = null;         // the last error frame (e.g. unknown_game)
    this.connected = false;
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
    this._running = false;
    this._pings = 0;           // our pings not answered yet on this socket
    this._online = () => this.reconnectNow();
    this._offline = () => { if (this._ws) this._lost(); };
  }

  start() {
    if (this._running) return this;
    this._running = true;
    this._connect();
    this._watchdog = setInterval(() => this._check(), 200);
    addEventListener("online", this._online);
    addEventListener("offline", this._offline);
    return this;
  }

  /** Close the socket for good (the page follows something else now). */
  stop() {
    this._running = false;
    clearInterval(this._watchdog);
    clearTimeout(this._timer);
    this._timer = null;
    removeEventListener("online", this._online);
    removeEventListener("offline", this._offline);
    this._close();
    this._setStale();
  }

  /** Not connected (say, the network is back): try now rather than at the end of the backoff. */
  reconnectNow() {
    if (!this._running || this.connected) return;
    if (this._ws) this._close();   // an attempt made while offline: it won't get through
    this._attempt = 0;
    this._connect();
  }

  /** The server's clock, frozen at the moment the data went stale. */
  now() {
    return (this.stale ? this.staleSince : Date.now()) + this.offset;
  }

  // ---------------------------------------------------------------- for subclasses

  /** The subscription, in the URL. */
  _query() { return new URLSearchParams(); }

  /** The same as a frame (sent on opening when we hold a token, to learn whether one is needed). */
  _subscription() { return {}; }

  /** A parsed frame, after the common handling (clock samples, auth). */
  _handle(_frame, _received) {}

  /** A new socket is being opened / the socket is gone. */
  _opening() {}
  _closed() {}

  _isStale() {
    return !this.connected || Date.now() - this.lastFrame > this._staleAfter();
  }

  // ---------------------------------------------------------------- internals

  _emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }

  _staleAfter() { return Math.max(2 * this.interval, this.minStale); }

  _setStale() {
    const stale = this._isStale();
    if (stale === this.stale) return;
    if (stale) this.staleSince = Date.now();
    this.stale = stale;
    this._emit("stale", stale);
  }

  _send(frame) {
    try { this._ws.send(JSON.stringify(frame)); } catch { /* closing: onclose follows */ }
  }

  /** Everything the server sent before this ping's pong was sent before it: a way to know we are level. */
  _ping() {
    this._pings += 1;
    this._send({ type: "ping", device_time: Date.now() });
  }

  _connect() {
    clearTimeout(this._timer);
    this._timer = null;
    let ws;
    try {
      ws = new WebSocket(`${this.url}?${this._query()}`);
    } catch {
      this._scheduleReconnect();
      return;
    }
    this._ws = ws;
    this._pings = 0;
    this._opening();
    ws.onopen = () => {
      if (this._ws !== ws) return;
      this.connected = true;
      this.lastFrame = Date.now();
      // Already following from the URL on a public service, so this does nothing there; a
      // service without public viewing answers auth_required, and then gets the token.
      if (this.token) this._send({ type: "subscribe", ...this._subscription() });
      this._ping();
      this._emit("connection", "open");
    };
    ws.onmessage = (e) => { if (this._ws === ws) this._frame(e.data); };
    ws.onclose = () => { if (this._ws === ws) this._lost(); };
    ws.onerror = () => {};
    this._setStale();
  }

  _close() {
    const ws = this._ws;
    this._ws = null;
    this.connected = false;
    this._closed();
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      try { ws.close(); } catch { /* already closed */ }
    }
  }

  _lost() {
    this._close();
    this._setStale();
    this._emit("connection", "closed");
    if (this._running) this._scheduleReconnect();
  }

  _scheduleReconnect() {
    if (this._timer !== null) return;
    const base = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this._attempt++);
    const delay = base / 2 + Math.random() * base / 2;
    this._timer = setTimeout(() => { this._timer = null; if (this._running) this._connect(); }, delay);
  }

  _check() {
    if (this.connected && Date.now() - this.lastFrame > this._staleAfter()) {
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

  _frame(data) {
    const received = Date.now();
    this.lastFrame = received;
    let m;
    try { m = JSON.parse(data); } catch { return; }
    switch (m.type) {
      case "heartbeat":
        this.interval = m.interval_ms || this.interval;
        this._sample(m.server_time - received);
        break;
      case "pong":
        if (typeof m.device_time === "number") this._sample(m.server_time - (m.device_time + received) / 2);
        this._pings = Math.max(0, this._pings - 1);
        break;
      case "error":
        if (m.code === "auth_required" && this.token) {
          // The URL's subscription is served once we are authenticated: ping after it again.
          this._send({ type: "auth", token: this.token });
          this._ping();
          return;
        }
        this.error = m;
        this._emit("error", m);
        break;
      default:
    }
    this._handle(m, received);
  }
}

/**
 * One game: applies the snapshot and each delta's patch (patch.js) to a local copy of the
 * view, checks that seq grows by exactly one, and resumes with since/epoch after a drop.
 * A patch that can't be applied makes it resync: the position is dropped and it subscribes
 * again without since, for a fresh snapshot; the last good view stays, stale, meanwhile.
 */
export class LiveGame extends WatchSocket {
  /**
   * @param {string} game the game id
   * @param {{url?: string, token?: string, minStale?: number}} options see WatchSocket
   */
  constructor(game, options = {}) {
    super(options);
    this.game = game;
    this.view = null;          // the local copy of the GameView
    this.seq = 0;
    this.epoch = null;
    this.recent = [];          // the snapshot's latest notices
    this.presence = [];        // the officials' devices connected for the game
    this.roster = null;        // the game's registered names (a `roster` frame), or null
    this.caughtUp = false;     // the resume (or the first snapshot) is complete
    this._target = null;       // resuming: the seq that, once reached, means caught up
    this._resync = false;      // waiting for a fresh snapshot: the copy can't be trusted
  }

  /** Start from a view kept earlier (say, in localStorage): the first connection resumes from it. */
  restore({ view, seq, epoch, roster }) {
    if (!view || typeof view !== "object") return this;
    this.view = view;
    this.roster = rosterOf(roster);
    this.seq = Number(seq) || 0;
    this.epoch = typeof epoch === "string" && epoch ? epoch : null;
    return this;
  }

  /** Drop the position and subscribe again without since (docs/protocol-viewer.md, "Applying a patch"). */
  resync(why = {}) {
    console.warn(`arena: resync ${this.game} for a fresh snapshot: ${why.path ?? ""}: ${why.reason ?? ""}`);
    this.seq = 0;
    this.epoch = null;
    this._resync = true;
    this._emit("resync", why);
    this._lost();
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

  _query() {
    const q = new URLSearchParams({ game: this.game });
    if (this.epoch !== null) { q.set("since", String(this.seq)); q.set("epoch", this.epoch); }
    return q;
  }

  _subscription() { return { game: this.game }; }

  _opening() { this.caughtUp = false; this._target = null; }

  _closed() { this.caughtUp = false; }

  _isStale() { return super._isStale() || !this.caughtUp || !this.view; }

  /** The resume is complete once we hold the seq the pong (or a heartbeat) vouched for. */
  _resumed() {
    if (this.caughtUp || this._resync || !this.view || this._target === null || this.seq < this._target) return;
    this.caughtUp = true;
    this._target = null;
    this._attempt = 0;
    this._setStale();
    this._emit("change", { kind: "resumed" });
  }

  _handle(m) {
    switch (m.type) {
      case "snapshot": {
        if (m.game !== this.game) return;
        const resync = this._resync;
        this.view = m.view;
        this.seq = m.seq;
        this.epoch = m.epoch;
        this.recent = m.recent || [];
        this.error = null;
        this._resync = false;
        this.caughtUp = true;
        this._attempt = 0;
        this._setStale();
        this._emit("snapshot", { reset: m.reset, reason: m.reason, recent: this.recent, resync });
        this._emit("change", { kind: "snapshot" });
        return;
      }
      case "delta": {
        if (m.game !== this.game || !this.view || this._resync || m.seq <= this.seq) return;
        if (m.seq !== this.seq + 1) { this._lost(); return; }  // a gap: resume
        const result = applyPatch(this.view, m.patch);
        if (!result.ok) { this.resync(result); return; }       // can't trust the copy
        this.view = result.view;
        this.seq = m.seq;
        this._emit("delta", { seq: m.seq, notices: m.notices, catchUp: !this.caughtUp });
        this._emit("change", { kind: "delta" });
        this._resumed();
        return;
      }
      case "notices": {
        // About this game, raised by another game's event (a card there suspends a player
        // from this game, already begun): outside the seq order, no patch.
        if (m.game !== this.game) return;
        this.recent = [...(this.recent || []), ...(m.notices || [])].slice(-12);
        this._emit("notices", { notices: m.notices || [] });
        return;
      }
      case "heartbeat": {
        const latest = m.seqs?.[this.game] ?? 0;
        if (this.caughtUp && latest > this.seq) { this._lost(); return; }  // missed something: resume
        // Resuming, and the pong hasn't come: a heartbeat that we are level with does as well.
        if (!this.caughtUp && this.view) this._target = latest;
        this._resumed();
        this._setStale();
        return;
      }
      case "pong":
        if (this._pings === 0 && this.view && !this.caughtUp) this._target = this.seq;
        this._resumed();
        return;
      case "presence":
        if (m.game !== this.game) return;
        this.presence = m.devices || [];
        this._emit("presence", this.presence);
        return;
      case "roster":
        // A whole document: it replaces the one before (a later registration, or a snapshot's).
        if (m.game !== this.game) return;
        this.roster = rosterOf(m);
        this._emit("roster", this.roster);
        if (this.view) this._emit("change", { kind: "roster" });
        return;
      case "error":
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

/**
 * Every game of an arena, as the service sets them up: `arena.games` maps each game's id
 * to its view (a snapshot each, then its deltas). An arena subscription has no `since`:
 * after a drop, a gap or a patch that can't be applied, the reconnection brings a fresh
 * snapshot of every game.
 */
/**
 * Every game of a topic on one socket: an arena (`{arena}`, the handheld's game picker) or a
 * tournament event (`{event}`, the public pages): a snapshot of each game, then its deltas in
 * seq order; a gap or a patch that can't be applied drops the socket for fresh snapshots.
 */
export class LiveGames extends WatchSocket {
  constructor(topic, options = {}) {
    super(options);
    this.topic = topic;
    this.games = {};
    this.rosters = {};         // each game's roster (a `roster` frame), by game id
    this._seqs = {};
  }

  _query() { return new URLSearchParams(this.topic); }

  _subscription() { return { ...this.topic }; }

  _handle(m) {
    if (m.type === "roster" && typeof m.game === "string") {
      this.rosters[m.game] = rosterOf(m);
    } else if (m.type === "snapshot") {
      this.games[m.game] = m.view;
      this._seqs[m.game] = m.seq;
    } else if (m.type === "delta" && m.game in this.games && m.seq > this._seqs[m.game]) {
      const result = m.seq === this._seqs[m.game] + 1 ? applyPatch(this.games[m.game], m.patch) : null;
      if (!result || !result.ok) { this._lost(); return; }
      this.games[m.game] = result.view;
      this._seqs[m.game] = m.seq;
    } else {
      this._setStale();
      return;
    }
    this._setStale();
    this._emit("change", { game: m.game });
  }
}

/** Every game of an arena (the handheld's game picker). */
export class LiveArena extends LiveGames {
  constructor(arena, options = {}) {
    super({ arena }, options);
    this.arena = arena;
  }
}
