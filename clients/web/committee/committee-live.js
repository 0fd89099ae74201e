// Keeping the console current, from the committee's own feed: the day view's /ws/watch socket
// (committee-day.js) is open whenever the console is signed in, whichever tab is shown, and
// says when a frame can change the ledger (a delta or a `notices` frame carrying
// `obligation.*` notices, a game's status changing, a fresh snapshot, a new game, a renamed
// player, a reconnection). Then everything is read again at once: coalesced, so a burst of
// frames costs one reload, never more than one in flight and one waiting. A tab switch and
// the page becoming visible read again too; a slow poll stays for what the socket can't see
// (another event's obligations, an event completed with nothing owed changing, a new arena).
//
// "As of HH:MM:SS" (stamp): the time the data shown was last confirmed current; marked stale
// (a warning) when the socket is down and that time is old, or when it is very old.

import { bus, t, reload } from "./committee-ui.js";

const COALESCE_MS = 150;           // frames of one moment (a game's end, a reconnection) merge
const POLL_LIVE_MS = 30000;        // the socket is up: only what it can't see
const POLL_DOWN_MS = 10000;        // the socket is down: the poll is all there is
const STALE_DOWN_MS = 25000;       // socket down and the data older than this: stale
const STALE_ANY_MS = 90000;        // whatever the socket: older than this is stale

let watch = null;
let waiting = null;                // the timer of a refresh asked for
let running = null;                // the refresh in flight
let again = false;                 // asked for while one was in flight
let poll = null;
const stamps = new Set();

/** Start keeping the console current (once signed in): `dayWatch` is the day view's socket. */
export function start(dayWatch) {
  watch = dayWatch;
  watch.addEventListener("ledger", () => refreshSoon());
  watch.addEventListener("stale", () => { schedulePoll(); drawStamps(); });
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshSoon(); });
  setInterval(drawStamps, 1000);
  bus.addEventListener("lang", drawStamps);
  schedulePoll();
}

export function socketUp() {
  return Boolean(watch && watch.connected && !watch.stale);
}

/** Read everything again soon; requests while one is in flight make one more after it. */
export function refreshSoon() {
  if (!watch) return;              // not signed in yet
  if (running) { again = true; return; }
  if (waiting) return;
  waiting = setTimeout(refreshNow, COALESCE_MS);
}

async function refreshNow() {
  waiting = null;
  running = reload().catch(() => {});   // a part that fails keeps its stamp: it goes stale
  try {
    await running;
  } finally {
    running = null;
    schedulePoll();
    if (again) { again = false; refreshSoon(); }
  }
}

function schedulePoll() {
  clearTimeout(poll);
  poll = setTimeout(() => {
    if (document.hidden) schedulePoll();   // read again when the page shows (visibilitychange)
    else refreshSoon();
  }, socketUp() ? POLL_LIVE_MS : POLL_DOWN_MS);
}

// ------------------------------------------------------------------ "as of"

/** Show on `node` that the data it labels was current at `at` (ms; 0: not yet). */
export function stamp(node, at) {
  if (!node) return;
  if (at) node.dataset.at = String(at);
  stamps.add(node);
  drawStamp(node);
}

function drawStamps() {
  for (const node of stamps) if (node.isConnected) drawStamp(node);
}

function drawStamp(node) {
  const at = Number(node.dataset.at || 0);
  const age = Date.now() - at;
  const stale = !at || age > STALE_ANY_MS || (!socketUp() && age > STALE_DOWN_MS);
  const time = at ? hhmmss(new Date(at)) : "—";
  const text = stale ? t(socketUp() ? "live_stale" : "live_down", { time }) : t("live_asof", { time });
  node.dataset.stale = String(stale);
  node.classList.toggle("stale", stale);
  node.setAttribute("role", stale ? "alert" : "status");
  if (node.textContent !== text) node.textContent = text;
}

function hhmmss(d) {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}
