/* Arena Stream: the officials' handheld (docs/protocol.md). The entry module: handheld.html
 * loads it; handheld.js lists the others.
 *
 * - The device token comes from the URL fragment (#pair=… from the committee's pairing link or
 *   QR code, or #token=…; a fragment is never sent to the server) or is pasted; it is kept in
 *   localStorage like a pasted one and the fragment removed from the address bar at once.
 * - Every event is written to the outbox (IndexedDB) *before* it is sent, and resent (the
 *   same bytes) until it gets one final answer (handheld-outbox.js).
 * - /ws/device: auth → welcome → answer the ping (clock sync) → resend the outbox in order,
 *   one event at a time (handheld-device.js).
 * - /ws/watch?game=G: the game state, with watch.js's LiveGame (handheld-feed.js), kept in
 *   localStorage so a reload offline still shows it.
 * - Alerts stay on top of the page until dismissed (handheld-alerts.js).
 *
 * No build step, no dependencies. */
import { lang, setLang, t } from "./handheld.js";
import { LS, S, app, lsGet, lsSet } from "./handheld-state.js";
import { $ } from "../shared/common.js";
import { dismissAlert, loadAlerts } from "./handheld-alerts.js";
import { connectDevice, dropDevice, followNetwork } from "./handheld-device.js";
import { feedSeq, feedState, loadWatch, startFeed, stopFeed } from "./handheld-feed.js";
import { listenToOtherTabs, openOutbox, pendingEntries, pump, record } from "./handheld-outbox.js";
import { render, renderAbout, renderConn, tick, toast } from "./handheld-views.js";
import { conductSheet, drawSheet, endSheet, goalSheet, initSheets, openSheet, playerSheet, undoSheet, voidSheet } from "./handheld-sheets.js";
import { cue, diagnostics as timerState, holdWakeLock, unlockAudio } from "./handheld-timer.js";
import { describe } from "./handheld-state.js";

const params = new URLSearchParams(location.search);

// ------------------------------------------------------------------ token

function decodeToken(token) {
  try {
    const parts = token.trim().split(".");
    if (parts.length !== 3 || parts[0] !== "v1") return null;
    const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = decodeURIComponent(escape(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))));
    const claims = JSON.parse(json);
    return claims && typeof claims.sub === "string" && typeof claims.role === "string" ? claims : null;
  } catch {
    return null;
  }
}

/** #pair=… (the committee's pairing link: /handheld?game=G#pair=<token>) or #token=… in the
 * fragment, which the browser never sends to a server: keep it, and drop it from the address bar
 * (and this page's history entry) so that the token is not left visible. */
function tokenFromFragment() {
  const frag = new URLSearchParams(location.hash.replace(/^#/, ""));
  const token = frag.get("pair") || frag.get("token");
  if (!frag.has("pair") && !frag.has("token")) return null;
  frag.delete("pair");
  frag.delete("token");
  const rest = frag.toString();
  history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  return token || null;
}

function signInError() {
  const e = $("#signin-error");
  e.textContent = t("signin_bad");
  e.hidden = false;
}

async function signIn(token) {
  const claims = decodeToken(token);
  if (!claims) return;
  lsSet(LS.token, token);
  S.token = token;
  S.claims = claims;
  S.device = claims.sub;
  S.role = claims.role;
  S.arena = claims.arena || null;
  S.game = claims.game || params.get("game") || (claims.arena ? lsGet(LS.game) : null) || null;
  S.dev.denied = null;
  if (S.game) loadWatch();
  loadAlerts();
  render();
  try {
    await openOutbox();
  } catch (err) {
    toast("IndexedDB: " + err);
  }
  connectDevice();
  startFeed();
}

function signOut() {
  lsSet(LS.token, null);
  dropDevice();
  stopFeed();
  clearTimeout(S.dev.retryTimer);
  Object.assign(S, { token: null, claims: null, device: null, role: null, game: null, arena: null, view: null,
    notices: [], entries: [], arenaGames: {}, alerts: [], dismissed: [], presence: [] });
  S.dev.state = "idle";
  render();
}

// ------------------------------------------------------------------ taps

async function onTap(ev) {
  const el = ev.target.closest("[data-act]");
  if (!el || el.closest("#sheet")) return;
  const act = el.dataset.act;
  switch (act) {
    case "lang":
      setLang(lang === "es" ? "en" : "es");
      lsSet(LS.lang, lang);
      params.set("lang", lang);
      history.replaceState(null, "", location.pathname + "?" + params + location.hash);
      if (S.sheet) drawSheet();
      render();
      break;
    case "signin": {
      const token = $("#token-input").value.trim();
      if (!decodeToken(token)) { signInError(); break; }
      $("#token-input").value = "";
      signIn(token);
      break;
    }
    case "signout": {
      const n = pendingEntries().length;
      if (n && !confirm(t("sign_out_pending", { n, device: S.device }))) break;
      signOut();
      break;
    }
    case "pick-game":
      S.game = el.dataset.game;
      lsSet(LS.game, S.game);
      loadWatch();
      loadAlerts();
      startFeed();
      render();
      break;
    case "dismiss-alert": dismissAlert(el.dataset.key); break;
    case "player": S.actionAt = Date.now(); openSheet(playerSheet(el.dataset.player)); break;
    case "whistle": await record("whistle", {}); break;
    case "goal": S.actionAt = Date.now(); openSheet(goalSheet(null, null)); break;
    case "void": openSheet(voidSheet()); break;
    case "undo": openSheet(undoSheet()); break;
    case "conn-detail": S.connOpen = !S.connOpen; renderConn(); break;
    case "name-conduct": {
      const target = el.dataset.target;
      const own = S.entries.find((e) => `${e.device}/${e.id}` === target || (e.ack && e.ack.log_id === target));
      const n = S.notices.find((x) => x.cause === target && x.text);
      const label = own ? describe(JSON.parse(own.body)) : n ? (lang === "es" ? n.text.es : n.text.en) : target;
      openSheet(conductSheet(target, label));
      break;
    }
    case "end": S.actionAt = Date.now(); openSheet(endSheet()); break;
    case "clock.start": await record("clock.start", {}); break;
    case "clock.stop": await record("clock.stop", {}); break;
    case "horn": cue("horn"); await record("horn", {}); break;
    case "horn-split": await record("horn", { split: true }); break;
    default: break;
  }
}

// ------------------------------------------------------------------ start

async function registerWorker() {
  if (!("serviceWorker" in navigator)) return;
  try {
    await navigator.serviceWorker.register("/clients/sw.js", { scope: "/clients/" });
    await navigator.serviceWorker.ready;
    const mark = () => { if (navigator.serviceWorker.controller) document.body.dataset.offlineReady = "yes"; };
    mark();
    navigator.serviceWorker.addEventListener("controllerchange", mark);
  } catch { /* no offline shell: the page still works online */ }
}

function start() {
  Object.assign(app, { render, renderConn, renderAbout, toast, pump });
  document.addEventListener("click", onTap);
  document.addEventListener("pointerdown", unlockAudio, { passive: true });
  // The game screen fills what the header (alerts included) and the action bar leave.
  const top = $("#top");
  const sizeTop = () => document.documentElement.style.setProperty("--top-h", top.offsetHeight + "px");
  if ("ResizeObserver" in self) new ResizeObserver(sizeTop).observe(top);
  sizeTop();
  addEventListener("resize", () => render());  // the earlier events shown fit the room again
  initSheets();
  $("#toast").addEventListener("click", () => { $("#toast").hidden = true; });
  listenToOtherTabs();
  followNetwork();

  // A token in the fragment is stored as a pasted one is (it replaces the one kept before).
  const paired = tokenFromFragment();
  const token = paired || lsGet(LS.token);
  if (params.get("lang")) lsSet(LS.lang, lang);
  render();
  if (token && decodeToken(token)) signIn(token);
  else if (token) signInError();
  registerWorker();
  setInterval(tick, 500);
  // Back online after a long sleep, or the tab shown again: try at once.
  document.addEventListener("visibilitychange", () => {
    holdWakeLock();
    if (document.visibilityState !== "visible") return;
    connectDevice();
    if (S.live) S.live.reconnectNow();
    pump();
  });
  // A read-only look for diagnostics and tests (never the token).
  window.arenaHandheld = {
    pending: () => pendingEntries().length,
    entries: () => S.entries.map((e) => ({ id: e.id, type: e.type, state: e.state, seq: e.ack ? e.ack.seq : null,
      log_id: e.ack ? e.ack.log_id : null, tries: e.tries, error: e.error || null })),
    device: () => ({ state: S.dev.state, ready: S.dev.ready, rtt: S.dev.rtt }),
    feed: () => ({ state: feedState(), seq: feedSeq() }),
    alerts: () => S.alerts.map((a) => ({ code: a.code, cause: a.cause, key: a.key })),
    timer: () => timerState(),
  };
}

// The service worker's scope is /clients/: the page at /handheld forwards there (search and
// fragment kept) so that it opens offline too.
if (location.pathname === "/handheld" && "serviceWorker" in navigator) {
  location.replace("/clients/handheld.html" + location.search + location.hash);
} else {
  start();
}
