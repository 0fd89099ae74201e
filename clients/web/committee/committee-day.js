// Section 4, run the day: every game of the event live in one view, on one /ws/watch socket
// (an `arena` subscription per arena, a `game` one for a game with no arena): score, clock,
// who is in the box, the alerts the engine raised, names from each game's `roster` frame, and
// links to each game's scoreboard, overlay and report. The socket opens at sign-in, whichever
// tab is shown: it is also what tells the console to read its ledger again ("ledger" events,
// committee-live.js).

import { WatchSocket } from "../shared/watch.js";
import { applyPatch } from "../shared/patch.js";
import { gameClock } from "../displays/live.js";
import { S, bus, t, el, keyed, swatch } from "./committee-ui.js";
import { stamp } from "./committee-live.js";
import { hcpMark } from "./committee-handicap.js";
import { $, goals, mmss } from "../shared/common.js";

const ALERTS_KEPT = 6;

const obligationNotices = (notices) => (notices || []).some((n) => String(n.type).startsWith("obligation."));
/** A delta that can change the ledger: obligations created, applied, served or withdrawn, or the game's status. */
const movesLedger = (m) => obligationNotices(m.notices)
  || (m.patch || []).some(([path]) => path === "" || path === "status");

/** Several arenas and games on one socket; a gap or a patch that can't be applied reconnects for fresh snapshots. */
class DayWatch extends WatchSocket {
  constructor(options = {}) {
    super(options);
    this.subs = [];          // [{arena} | {game}]
    this.games = {};         // game -> view
    this.rosters = {};       // game -> the last roster frame
    this.alerts = {};        // game -> [alert notices], newest first
    this.seqs = {};
    this.known = null;       // the games the service has (heartbeats' seqs): a new one may be ours
    this.opened = 0;
    this.addEventListener("connection", (e) => {
      if (e.detail !== "open") return;
      for (const sub of this.subs) this._send({ type: "subscribe", ...sub });
      if (this.opened++) this._ledger("reconnected");   // frames may have been missed meanwhile
    });
  }

  follow(sub) {
    const key = JSON.stringify(sub);
    if (this.subs.some((s) => JSON.stringify(s) === key)) return;
    this.subs.push(sub);
    if (this.connected) this._send({ type: "subscribe", ...sub });
  }

  // Every subscription goes in a frame once the socket is open (there may be none yet).
  _query() { return new URLSearchParams(); }

  _subscription() { return this.subs[0] || {}; }

  _ledger(why, game = null) { this._emit("ledger", { why, game }); }

  _keepAlerts(game, notices) {
    const fresh = (notices || []).filter((n) => n.type === "alert");
    if (!fresh.length) return;
    const known = new Set((this.alerts[game] || []).map((a) => `${a.cause}/${a.code}`));
    const add = fresh.filter((a) => !known.has(`${a.cause}/${a.code}`)).reverse();
    this.alerts[game] = [...add, ...(this.alerts[game] || [])].slice(0, ALERTS_KEPT);
  }

  _handle(m) {
    if (m.type === "heartbeat") {
      const ids = Object.keys(m.seqs || {});
      if (this.known && ids.some((id) => !this.known.has(id))) this._ledger("new_game");
      this.known = new Set(ids);
      return;
    }
    if (m.type === "snapshot") {
      if (m.reset || (!(m.game in this.games) && !S.games.some((g) => g.game === m.game))) this._ledger("snapshot", m.game);
      this.games[m.game] = m.view;
      this.seqs[m.game] = m.seq;
      this._keepAlerts(m.game, m.recent);
    } else if (m.type === "delta" && m.game in this.games) {
      if (m.seq <= this.seqs[m.game]) return;
      const result = m.seq === this.seqs[m.game] + 1 ? applyPatch(this.games[m.game], m.patch) : null;
      if (!result || !result.ok) { this._lost(); return; }
      this.games[m.game] = result.view;
      this.seqs[m.game] = m.seq;
      this._keepAlerts(m.game, m.notices);
      if (movesLedger(m)) this._ledger("delta", m.game);
    } else if (m.type === "notices" && m.game in this.games) {
      // Raised about this game by another game's event (a late card that suspends a player
      // from it), or by a committee's decision on an obligation from it.
      this._keepAlerts(m.game, m.notices);
      if (obligationNotices(m.notices)) this._ledger("notices", m.game);
    } else if (m.type === "roster" && typeof m.game === "string") {
      const before = this.rosters[m.game];
      this.rosters[m.game] = m;
      if (before && JSON.stringify({ ...before, type: 0 }) !== JSON.stringify({ ...m, type: 0 })) this._ledger("roster", m.game);
    } else {
      this._setStale();
      return;
    }
    this._setStale();
    this._emit("change", { game: m.game });
  }
}

let watch = null;
let drawPending = false;
let seen = 0;            // the day view's "as of": the last frame of a live socket

export function init() {
  bus.addEventListener("data", follow);
  bus.addEventListener("lang", draw);
  setInterval(tick, 250);
}

/** Open the day's socket (at sign-in): returned for committee-live.js to listen to. */
export function start() {
  if (watch) return watch;
  watch = new DayWatch();
  watch.addEventListener("change", () => {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => { drawPending = false; draw(); });
  });
  watch.addEventListener("stale", () => { document.body.dataset.liveStale = String(watch.stale); });
  watch.start();
  stamp($("#day-asof"), 0);
  return watch;
}

/** Follow every arena (and every arena-less game) of the event's games. */
function follow() {
  if (watch) for (const g of S.games) watch.follow(g.arena ? { arena: g.arena } : { game: g.game });
  draw();
}

function nameOf(roster, side, id) {
  const entry = roster?.[side];
  return entry && entry.team === id ? entry : null;
}

function playerText(roster, id) {
  const p = roster?.players?.[id];
  if (!p) return id;
  return p.number === null || p.number === undefined ? p.name : `#${p.number} ${p.name}`;
}

/** Every game's tile: one whose game, roster, alerts and words are as they were stays as it is. */
function draw() {
  const ids = S.games.map((g) => g.game);
  $("#day-empty").hidden = ids.length > 0;
  keyed($("#day-games"), ids.map((id) => {
    const v = watch?.games[id];
    const roster = watch?.rosters[id];
    const status = S.games.find((g) => g.game === id)?.status;
    return { key: id, sig: JSON.stringify([S.lang, status, v, roster, watch?.alerts[id]]), make: () => tile(id, v, roster) };
  }));
  tick();
}

function tile(id, v, roster) {
  const row = S.games.find((g) => g.game === id);
  const links = el("p", { class: "links" },
    el("a", { href: `/scoreboard?game=${encodeURIComponent(id)}&lang=${S.lang}`, target: "_blank", "data-link": "scoreboard", text: t("day_scoreboard") }), " · ",
    el("a", { href: `/overlay?game=${encodeURIComponent(id)}&lang=${S.lang}`, target: "_blank", "data-link": "overlay", text: t("day_overlay") }), " · ",
    el("a", { href: `/games/${encodeURIComponent(id)}/report?lang=${S.lang}`, target: "_blank", "data-link": "report", text: t("day_report") }));
  if (!v) {
    return el("article", { class: "card live-game", "data-game": id, "data-status": row?.status || "" },
      el("h3", { text: id }), el("p", { class: "muted", text: t("connecting") }), links);
  }
  const side = (s) => {
    const entry = nameOf(roster, s, v.teams[s].team);
    const kit = (roster && roster.kits && roster.kits[s]) || (entry && entry.colors);  // this game's kit first
    return el("div", { class: `side ${s}`, style: kit ? `--c1:${kit.primary};--c2:${kit.secondary}` : "" },
      kit ? swatch(kit) : "",
      el("span", { class: "tname", text: entry ? entry.name : v.teams[s].team }),
      el("span", { class: "score", "data-score": s, text: goals(v.score[s]) }), hcpMark(v.goals_on_handicap, s));
  };
  const boxRows = v.players.filter((p) => p.box || p.sent_off || p.suspended || p.no_sub).map((p) => {
    const what = p.box ? t("day_in_box") : p.sent_off ? t("day_sent_off") : p.suspended ? t("day_suspended") : t("day_no_sub");
    const so = p.box || p.no_sub;
    return el("li", { "data-player": p.id, "data-so": so && so.release === "after_play" ? String(so.remaining_ms) : "" },
      el("b", { text: playerText(roster, p.id) }), ` · ${what}`,
      so ? el("span", { class: "owed", text: ` ${mmss(so.remaining_ms)}` }) : "",
      el("span", { class: "clause", text: ` ${so ? so.clause : ""}` }));
  });
  const alerts = (watch.alerts[id] || []).map((a) => el("li", { class: "alert", "data-code": a.code },
    (a.text && (a.text[S.lang] || a.text.en)) || a.code));
  const c = v.clock;
  return el("article", { class: "card live-game", "data-game": id, "data-status": v.status },
    el("header", {}, el("span", { class: "muted", text: `${id}${v.arena ? ` · ${v.arena}` : ""}` }),
      el("span", { class: `status s-${v.status}`, text: t(`status_${v.status}`) })),
    el("div", { class: "scoreline" }, side("home"),
      el("div", { class: "clock" },
        el("span", { class: "time", "data-clock": id, text: gameClock(c.remaining_ms, c.running) }),
        el("span", { class: "period", text: v.status === "ended" ? t("day_final") : t("day_period", { n: c.period, of: c.periods }) })),
      side("away")),
    el("div", { class: "box" }, el("h4", { text: t("day_box") }),
      boxRows.length ? el("ul", {}, ...boxRows) : el("p", { class: "muted", text: t("day_box_empty") })),
    alerts.length ? el("div", { class: "alerts" }, el("h4", { text: t("day_alerts") }), el("ul", {}, ...alerts)) : "",
    (v.carried || []).length ? el("p", { class: "muted", text: `${t("day_carried")}: ${v.carried.map((x) => `${playerText(roster, x.player)} (${t(`ob_${x.kind}`)})`).join(", ")}` }) : "",
    links);
}

/** The clocks count down between frames (from the view's clock.at and the server's time). */
function tick() {
  if (!watch) return;
  if (watch.connected && !watch.stale && watch.lastFrame !== seen) {
    seen = watch.lastFrame;
    stamp($("#day-asof"), seen);
  }
  const now = watch.now();
  for (const [id, v] of Object.entries(watch.games)) {
    const node = document.querySelector(`[data-clock="${CSS.escape(id)}"]`);
    if (!node) continue;
    const c = v.clock;
    const run = c.running && !c.period_over && !watch.stale ? Math.max(0, Math.min(c.remaining_ms, now - c.at)) : 0;
    const text = gameClock(c.remaining_ms - run, c.running);
    if (node.textContent !== text) node.textContent = text;
    node.dataset.running = String(c.running);
  }
}
