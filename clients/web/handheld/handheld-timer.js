// Arena Stream handheld: what a dedicated polo timer does, on the timekeeper's view. A warning
// 30 s before the period ends; "Time!" and the horn's sound when it has run out; the interval
// between periods counted down (the view's clock.interval: {started_at, ms, ends_at}) and its
// end called; a reminder when the clock has stayed stopped after a whistle longer than a set
// time (a setting, 30 s unless changed); the screen kept awake while the game is live (the
// Screen Wake Lock, taken again when the page is shown again).
import { t } from "./handheld.js";
import { S, clockFigures, esc, isTimekeeper, lsGet, lsSet, serverNow, setHTML } from "./handheld-state.js";
import { $, mmss } from "../shared/common.js";

const WARN_MS = 30000;
const REMIND_KEY = "arena.handheld.stopRemind";
export const REMIND_DEFAULT_S = 30;

const T = {
  running: null,        // the clock as last seen (null: not seen yet)
  stopKey: null,        // the stop being watched: its period and moment
  stoppedAt: 0,         // Date.now() when this handheld saw the clock stop
  cued: new Set(),      // the cues already given (sound, vibration): once each
  sounds: [],           // every cue given, for diagnostics and tests
  wake: { sentinel: null, state: "off", requests: 0, pending: false },
};

export function remindSeconds() {
  const n = Number(lsGet(REMIND_KEY));
  return Number.isFinite(n) && n >= 5 && n <= 600 ? n : REMIND_DEFAULT_S;
}

// ------------------------------------------------------------------ sound and vibration

let actx = null;
/** The first tap unlocks the page's audio (browsers allow sound only after one). */
export function unlockAudio() {
  try {
    if (!actx && (self.AudioContext || self.webkitAudioContext)) actx = new (self.AudioContext || self.webkitAudioContext)();
    if (actx && actx.state === "suspended") actx.resume();
  } catch { /* no audio: the cue is visual only */ }
}

function tone(freqs, seconds, type) {
  if (!actx || actx.state !== "running") return;
  const now = actx.currentTime;
  const gain = actx.createGain();
  gain.gain.setValueAtTime(0.0001, now);
  gain.gain.exponentialRampToValueAtTime(0.35, now + 0.03);
  gain.gain.setValueAtTime(0.35, now + seconds - 0.08);
  gain.gain.exponentialRampToValueAtTime(0.0001, now + seconds);
  gain.connect(actx.destination);
  for (const f of freqs) {
    const o = actx.createOscillator();
    o.type = type;
    o.frequency.value = f;
    o.connect(gain);
    o.start(now);
    o.stop(now + seconds);
  }
}

/** A cue: "warn" (30 s left), "horn" (time up, or the Horn tapped), "interval" (the break is
 * over), "stopped" (the clock stayed stopped too long). */
export function cue(kind) {
  T.sounds.push({ kind, at: Date.now() });
  if (kind === "horn") tone([233, 294, 349], 1.6, "sawtooth");
  else tone([880], kind === "warn" ? 0.25 : 0.5, "square");
  const pattern = { warn: [150, 100, 150], horn: [600], interval: [300, 150, 300], stopped: [200, 120, 200] }[kind];
  try { if (navigator.vibrate && pattern) navigator.vibrate(pattern); } catch { /* no vibration */ }
}

function cueOnce(key, kind) {
  if (T.cued.has(key)) return;
  T.cued.add(key);
  cue(kind);
}

// ------------------------------------------------------------------ what the timer shows

/** The timer's state now: which of its panels shows, and with what. */
function figures() {
  const v = S.view;
  const c = clockFigures();
  if (!v || !c || v.status !== "live") return null;
  const period = c.period;
  if (c.interval && !c.running) {
    const left = c.interval.ends_at - serverNow();
    return left > 0 ? { kind: "interval", left, period } : { kind: "interval_over", over: -left, period };
  }
  if (c.period_over) return null;
  if (c.left <= 0) return { kind: "time", period };
  if (c.running && c.left <= WARN_MS) return { kind: "warn", left: c.left, period };
  if (!c.running && T.stoppedAt) {
    const stopped = Date.now() - T.stoppedAt;
    if (stopped >= remindSeconds() * 1000) return { kind: "stopped", stopped, period };
  }
  return null;
}

/** Follow the clock: when it stops in a period, the reminder starts counting. */
function observe() {
  const c = S.view && S.view.clock;
  if (!c) { T.running = null; return; }
  if (c.running) { T.stoppedAt = 0; T.stopKey = null; }
  else if (!c.period_over && S.view.status === "live") {
    const key = `${c.period}:${c.remaining_ms}`;    // one stop: its period and the time left
    if (T.stopKey !== key) { T.stopKey = key; T.stoppedAt = Date.now(); }
  } else { T.stoppedAt = 0; T.stopKey = null; }
  T.running = c.running;
}

function draw() {
  const el = $("#tk-timer");
  if (!el) return;
  const f = isTimekeeper() ? figures() : null;
  document.body.dataset.timer = f ? f.kind : "";
  if (!f) { setHTML(el, ""); return; }
  const n = f.period;
  let html = "";
  if (f.kind === "warn") {
    cueOnce(`warn:${n}`, "warn");
    html = `<div class="tkcue warn" data-tk="warn" role="alert"><b>${esc(t("warn30"))}</b><span class="tk-count">${esc(mmss(f.left))}</span></div>`;
  } else if (f.kind === "time") {
    cueOnce(`time:${n}`, "horn");
    html = `<div class="tkcue time" data-tk="time" role="alert"><b>${esc(t("time_up"))}</b></div>`;
  } else if (f.kind === "interval") {
    html = `<div class="tkcue interval" data-tk="interval"><b>${esc(t("interval", { n: n + 1 }))}</b><span class="tk-count">${esc(mmss(f.left))}</span></div>`;
  } else if (f.kind === "interval_over") {
    cueOnce(`interval:${n}`, "interval");
    html = `<div class="tkcue over" data-tk="interval-over" role="alert"><b>${esc(t("interval_over", { n: n + 1 }))}</b><span class="tk-count">+${esc(mmss(f.over))}</span></div>`;
  } else if (f.kind === "stopped") {
    cueOnce(`stopped:${T.stopKey}`, "stopped");
    html = `<div class="tkcue stopped" data-tk="stopped" role="alert"><b>${esc(t("stopped_long", { t: mmss(f.stopped) }))}</b></div>`;
  }
  setHTML(el, html);
  // The button the moment calls for stands out: the Horn at time, Start after the break.
  const horn = document.querySelector("#tk [data-act=horn]");
  if (horn) horn.classList.toggle("suggest", f.kind === "time");
}

/** The timer's settings: the reminder's delay (kept on this handheld). */
export function renderSettings() {
  const el = $("#tk-settings");
  if (!el || (el.dataset.lang === document.documentElement.lang && el.firstChild)) return;
  el.dataset.lang = document.documentElement.lang;
  el.innerHTML = `<details class="tk-settings-box"><summary>${esc(t("tk_settings"))}</summary>
    <label class="field"><span>${esc(t("stop_remind"))}</span>
      <input type="number" id="stop-remind" min="5" max="600" step="5" inputmode="numeric" value="${remindSeconds()}"></label></details>`;
  el.querySelector("#stop-remind").addEventListener("change", (ev) => {
    const n = Math.round(Number(ev.target.value));
    if (Number.isFinite(n) && n >= 5 && n <= 600) lsSet(REMIND_KEY, String(n));
    ev.target.value = String(remindSeconds());
    draw();
  });
}

// ------------------------------------------------------------------ the screen kept awake

/** Held while the game is live and the page is shown; the browser lets it go when the page is
 * hidden, so it is asked for again when the page is shown again. */
export async function holdWakeLock() {
  const w = T.wake;
  const want = !!(S.view && S.view.status === "live") && document.visibilityState === "visible" && !!S.claims;
  if (!("wakeLock" in navigator)) { w.state = "unsupported"; return; }
  if (want && !w.sentinel && !w.pending) {
    w.pending = true;
    w.requests += 1;
    try {
      const sentinel = await navigator.wakeLock.request("screen");
      w.sentinel = sentinel;
      w.state = "held";
      sentinel.addEventListener("release", () => {
        if (w.sentinel === sentinel) { w.sentinel = null; w.state = "released"; }
        document.body.dataset.wakeLock = w.state;
      });
    } catch {
      w.state = "refused";              // e.g. battery saver: the page works on
    } finally {
      w.pending = false;
    }
  } else if (!want && w.sentinel) {
    const s = w.sentinel;
    w.sentinel = null;
    w.state = "released";
    try { await s.release(); } catch { /* already released */ }
  }
  document.body.dataset.wakeLock = w.state;
}

// ------------------------------------------------------------------ hooks

export function render() { observe(); draw(); holdWakeLock(); }
export function tick() { draw(); }
export const diagnostics = () => ({ sounds: T.sounds.map((s) => s.kind), wakeLock: T.wake.state, wakeRequests: T.wake.requests,
  remind: remindSeconds() });
