// Arena Stream handheld: the device socket (/ws/device, docs/protocol-device.md, "Device protocol").
// auth → welcome → answer the server's ping (clock sync) → ready: the outbox is resent in
// order, one event at a time, each waiting for its one answer (an ack or an error).
// Reconnects with backoff after any drop; a refused token (bad, expired, revoked) stops it.
//
// Offline is known from evidence, not from navigator.onLine alone (a browser may say it is
// online with no network at all, and a reload offline may not change its mind): a socket that
// closes before it ever opened, or a drop, is followed by a probe of /healthz; a probe that
// fails (no answer) means offline, an answer means the service is there and the socket will
// be tried again. While offline the socket is tried every two seconds, quietly.
import { S, app, isOffline } from "./handheld-state.js";

const OFFLINE_RETRY_MS = 2000;
const PROBE_TIMEOUT_MS = 4000;

function setOffline(value) {
  if (S.net.offline === value) return;
  S.net.offline = value;
  if (!S.dev.ws && !S.dev.denied && S.token) S.dev.state = value ? "offline" : "retry";
  app.renderConn();
}

/** Ask the service's liveness route (never cached): did anything answer? */
export async function probe() {
  if (S.net.probing) return S.net.probing;
  S.net.probing = (async () => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), PROBE_TIMEOUT_MS);
    try {
      await fetch("/healthz?probe=" + Date.now(), { cache: "no-store", signal: ctl.signal });
      setOffline(false);
      return true;
    } catch {
      setOffline(true);
      return false;
    } finally {
      clearTimeout(timer);
      S.net.probing = null;
    }
  })();
  return S.net.probing;
}

function wsUrl(path) {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
}

const send = (ws, frame) => { try { ws.send(JSON.stringify(frame)); } catch { /* closing */ } };

export function connectDevice(force) {
  if (!S.token || S.dev.ws || S.dev.denied) return;
  clearTimeout(S.dev.retryTimer);
  let ws;
  try { ws = new WebSocket(wsUrl("/ws/device")); } catch { scheduleDevice(); return; }
  // Known offline: the attempt is quiet (the pill stays "offline" until a socket opens).
  Object.assign(S.dev, { ws, state: isOffline() ? "offline" : "connecting", ready: false, welcome: null,
    opened: Date.now(), didOpen: false });
  ws.onopen = () => {
    if (ws !== S.dev.ws) return;
    S.dev.didOpen = true;
    setOffline(false);
    if (S.dev.state === "offline") S.dev.state = "connecting";
    send(ws, { type: "auth", token: S.token });
  };
  ws.onmessage = (ev) => onDeviceFrame(ws, ev.data);
  ws.onclose = () => onDeviceClosed(ws);
  ws.onerror = () => { /* onclose follows */ };
  app.renderConn();
}

function onDeviceFrame(ws, data) {
  if (ws !== S.dev.ws) return;
  let msg;
  try { msg = JSON.parse(data); } catch { return; }
  S.dev.lastHeard = Date.now();
  switch (msg.type) {
    case "welcome":
      S.dev.welcome = msg;
      S.dev.state = "syncing";
      S.dev.attempt = 0;
      if (!S.offsetFromDevice) S.offset = msg.server_time - Date.now();
      // The server pings right after welcome: answer it before resending (clock sync).
      S.dev.syncTimer = setTimeout(() => markReady(ws), 1500);
      break;
    case "ping":
      send(ws, { type: "pong", server_time: msg.server_time, device_time: Date.now() });
      if (S.dev.welcome && !S.dev.ready) markReady(ws);
      break;
    case "pong":
      if (typeof msg.device_time === "number") {
        const rtt = Date.now() - msg.device_time;
        if (rtt >= 0 && rtt < 5000 && (S.dev.rtt == null || rtt <= S.dev.rtt * 2)) {
          S.offset = msg.server_time + rtt / 2 - Date.now();
          S.offsetFromDevice = true;
        }
        S.dev.rtt = rtt;
      }
      break;
    case "ack":
    case "error":
      if (msg.type === "error" && !S.dev.welcome) { authRefused(msg); break; }
      if (S.dev.waiter && (msg.id === S.dev.waiter.id || msg.id == null)) {
        const w = S.dev.waiter;
        S.dev.waiter = null;
        w.resolve(msg);
      }
      break;
    default:
      break;
  }
  app.renderConn();
}

function markReady(ws) {
  if (ws !== S.dev.ws || S.dev.ready) return;
  clearTimeout(S.dev.syncTimer);
  S.dev.ready = true;
  S.dev.state = "online";
  S.dev.lastPing = Date.now();
  send(ws, { type: "ping", device_time: Date.now() });
  app.renderConn();
  app.pump();
}

function authRefused(msg) {
  if (msg.code === "too_many_connections") { S.dev.attempt = Math.max(S.dev.attempt, 4); return; }
  S.dev.denied = msg;                    // a bad, expired or revoked token: no point retrying
  S.dev.state = "denied";
}

function onDeviceClosed(ws) {
  if (ws !== S.dev.ws) return;
  clearTimeout(S.dev.syncTimer);
  const waiter = S.dev.waiter;
  Object.assign(S.dev, { ws: null, ready: false, welcome: null, waiter: null });
  if (waiter) waiter.reject(new Error("connection lost"));
  if (!S.dev.denied) {
    S.dev.state = isOffline() ? "offline" : "retry";
    scheduleDevice();
    // Why did it close? A probe tells a dead network from a service that is restarting.
    probe().then((up) => {
      if (S.dev.ws || S.dev.denied) return;
      S.dev.state = up ? "retry" : "offline";
      if (!up) {                         // try again soon: the network may come back any moment
        clearTimeout(S.dev.retryTimer);
        S.dev.retryTimer = setTimeout(() => connectDevice(), OFFLINE_RETRY_MS);
      }
      app.renderConn();
    });
  }
  app.renderConn();
}

export function dropDevice() {
  const ws = S.dev.ws;
  if (!ws) return;
  onDeviceClosed(ws);
  try { ws.close(); } catch { /* already gone */ }
}

function scheduleDevice() {
  clearTimeout(S.dev.retryTimer);
  const delay = isOffline() ? OFFLINE_RETRY_MS : Math.min(10000, 500 * 2 ** S.dev.attempt++);
  S.dev.retryTimer = setTimeout(() => connectDevice(), delay);
}

/** Send one outbox entry (its exact bytes) and wait for its one answer: an ack or an error. */
export function sendAndWait(entry) {
  const ws = S.dev.ws;
  return new Promise((resolve, reject) => {
    if (!ws || !S.dev.ready) { reject(new Error("not connected")); return; }
    const timer = setTimeout(() => {
      if (S.dev.waiter && S.dev.waiter.id === entry.id) S.dev.waiter = null;
      reject(new Error("no answer"));
      dropDevice();                       // a stuck socket: start over
    }, 15000);
    S.dev.waiter = {
      id: entry.id,
      resolve: (msg) => { clearTimeout(timer); resolve(msg); },
      reject: (err) => { clearTimeout(timer); reject(err); },
    };
    try {
      ws.send('{"type":"send","event":' + entry.body + "}");
    } catch (err) {
      S.dev.waiter = null;
      clearTimeout(timer);
      reject(err);
    }
  });
}

/** Called twice a second: a socket that says nothing for 15 s is dead even if the browser
 * hasn't noticed, and one silent for 6.5 s has the network probed; an idle one is pinged now
 * and then (it keeps the round trip fresh). */
export function deviceWatchdog() {
  const now = Date.now();
  const d = S.dev;
  if (!d.ws) return;
  if (!d.welcome && now - d.opened > 10000) dropDevice();
  else if (d.welcome && now - d.lastHeard > 15000) dropDevice();
  else if (d.welcome && now - d.lastHeard > 6500 && now - (S.net.lastProbe || 0) > 3000) {
    // Silent for longer than a ping's round trip: is the network still there? (A dead network
    // often says nothing at all: no close, no offline event.)
    S.net.lastProbe = now;
    const ws = d.ws;
    probe().then((up) => { if (!up && S.dev.ws === ws) dropDevice(); });
  }
  else if (d.ready && now - d.lastPing > 5000 && now - d.lastHeard > 4000) {
    d.lastPing = now;
    send(d.ws, { type: "ping", device_time: now });
  }
}

/** The browser's online and offline events: drop at once, and try again at once. */
export function followNetwork() {
  addEventListener("offline", () => { S.net.offline = true; dropDevice(); S.dev.state = "offline"; app.renderConn(); });
  addEventListener("online", () => { S.dev.attempt = 0; S.net.offline = false; connectDevice(); });
}
