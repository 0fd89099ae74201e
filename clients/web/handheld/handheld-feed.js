// Arena Stream handheld: the game state. The feed is watch.js's LiveGame, the scoreboard's
// own connection: snapshot, deltas patched with patch.js, seq checked, resumed with
// since/epoch after any drop, resynced (a fresh snapshot) when a patch can't be applied.
// This module keeps the view in localStorage, so a reload offline still shows the last
// state and the next connection resumes from it, and it gathers the game's notices (the
// feed list, the void sheet) and alerts. A token for an arena first follows the arena
// (LiveArena) to pick a game.
import { LiveArena, LiveGame } from "../shared/watch.js";
import { LS, S, app, isOffline, lsGet, lsSet } from "./handheld-state.js";
import { addAlerts } from "./handheld-alerts.js";

// Two missed heartbeats make the feed stale (docs/protocol-viewer.md), but never under 2.5 s: a
// busy phone or server should not freeze the clock for a hiccup.
const MIN_STALE_MS = 2500;

let kept = null;     // the position loaded from localStorage, resumed from by the next feed

/** The game's last state kept on this handheld (after a reload, or offline). */
export function loadWatch() {
  S.view = null;
  S.notices = [];
  S.roster = null;
  kept = null;
  try {
    const saved = JSON.parse((S.game && lsGet(LS.watch(S.game))) || "null");
    if (saved && saved.view) {
      Object.assign(S, { view: saved.view, notices: saved.notices || [], roster: saved.roster || null });
      kept = saved;
    }
  } catch { /* ignore a damaged copy */ }
}

function saveWatch(live) {
  if (!S.game || live !== S.live) return;
  lsSet(LS.watch(S.game), JSON.stringify({ view: S.view, seq: live.seq, epoch: live.epoch, notices: S.notices,
    roster: S.roster }));
}

/** Follow the game (or, without one, the arena): the feed is restarted for it. */
export function startFeed() {
  stopFeed();
  if (!S.game && !S.arena) return;
  const options = { token: S.token, minStale: MIN_STALE_MS };
  const live = S.game ? followGame(new LiveGame(S.game, options)) : followArena(new LiveArena(S.arena, options));
  S.live = live;
  live.addEventListener("stale", () => app.renderConn());
  live.addEventListener("connection", () => app.renderConn());
  live.addEventListener("error", (e) => { S.feed.error = e.detail; });
  live.start();
}

export function stopFeed() {
  if (S.live) S.live.stop();
  S.live = null;
}

function followGame(live) {
  if (kept && S.view) live.restore({ view: S.view, seq: kept.seq, epoch: kept.epoch, roster: S.roster });
  kept = null;
  live.addEventListener("snapshot", (e) => {
    const { reset, resync, recent } = e.detail;
    if (reset || resync || !S.notices.length) S.notices = (recent || []).slice(-60);
    addAlerts(recent, live.game);
  });
  live.addEventListener("delta", (e) => {
    const { notices } = e.detail;
    if (notices && notices.length) S.notices = S.notices.concat(notices).slice(-60);
    addAlerts(notices, live.game);
  });
  // Notices about this game raised by another game's event (a late card there that
  // suspends a player from this game): in the feed, and the alert on top of the page.
  live.addEventListener("notices", (e) => {
    const { notices } = e.detail;
    S.notices = S.notices.concat(notices).slice(-60);
    addAlerts(notices, live.game);
    app.render();
  });
  // The names, numbers and colours: each roster frame replaces the one before (watch.js).
  live.addEventListener("roster", () => {
    S.roster = live.roster;
    if (!live.view) app.render();
  });
  live.addEventListener("change", () => {
    S.view = live.view;
    S.roster = live.roster;
    saveWatch(live);
    app.render();
  });
  // The copy can't be trusted: keep showing it (stale) until the fresh snapshot, but never
  // resume from it again, even after a reload.
  live.addEventListener("resync", () => { saveWatch(live); app.renderConn(); });
  live.addEventListener("presence", (e) => { S.presence = e.detail; app.renderAbout(); });
  return live;
}

function followArena(live) {
  live.addEventListener("change", () => { S.arenaGames = live.games; S.arenaRosters = live.rosters; app.render(); });
  return live;
}

/** The feed as the connection pill says it: live, stale (showing the last state), connecting, offline. */
export function feedState() {
  const live = S.live;
  if (!live) return "idle";
  if (!live.stale) return "live";
  if (!live.connected && isOffline()) return "offline";
  return S.game && S.view ? "stale" : "connecting";
}

/** The feed's position, for diagnostics and tests. */
export const feedSeq = () => (S.live && S.live.seq) || 0;
