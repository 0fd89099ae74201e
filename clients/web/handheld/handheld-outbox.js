// Arena Stream handheld: the outbox. Every event is written to IndexedDB *before* it is
// sent, with its id and its serialized bytes, and resent (the same bytes) until it gets one
// final answer: an ack (stored) or a refusal (an error without retry). `retry: true` means
// nothing was stored: the same event again, after a pause. One sender per device across
// this browser's tabs (a Web Lock), which tell each other of changes (a BroadcastChannel).
import { reasonText, t } from "./handheld.js";
import { S, app, describe } from "./handheld-state.js";
import { addAlerts } from "./handheld-alerts.js";
import { sendAndWait } from "./handheld-device.js";

let db = null;
const bc = "BroadcastChannel" in self ? new BroadcastChannel("arena-handheld") : null;

function openDB() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open("arena-handheld", 1);
    req.onupgradeneeded = () => {
      const store = req.result.createObjectStore("outbox", { keyPath: "n", autoIncrement: true });
      store.createIndex("device", "device");
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Write an entry and wait until the transaction is committed (durable). */
function dbPut(entry) {
  return new Promise((resolve, reject) => {
    let tx;
    try { tx = db.transaction("outbox", "readwrite", { durability: "strict" }); }
    catch { tx = db.transaction("outbox", "readwrite"); }
    const req = tx.objectStore("outbox").put(entry);
    let key;
    req.onsuccess = () => { key = req.result; };
    tx.oncomplete = () => resolve(key);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

function dbAll(device) {
  return new Promise((resolve, reject) => {
    const req = db.transaction("outbox").objectStore("outbox").index("device").getAll(device);
    req.onsuccess = () => resolve(req.result.sort((a, b) => a.n - b.n));
    req.onerror = () => reject(req.error);
  });
}

function dbDelete(keys) {
  return new Promise((resolve, reject) => {
    const tx = db.transaction("outbox", "readwrite");
    for (const k of keys) tx.objectStore("outbox").delete(k);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
}

/** Open this device's outbox (after sign-in): drop answered entries over three days old, load the rest. */
export async function openOutbox() {
  db = db || (await openDB());
  const old = Date.now() - 3 * 86400000;
  const done = (await dbAll(S.device)).filter((e) => (e.state === "acked" || e.state === "refused") && e.created < old);
  if (done.length) await dbDelete(done.map((e) => e.n));
  await reloadEntries();
}

async function reloadEntries() {
  if (!db || !S.device) return;
  S.entries = await dbAll(S.device);
  app.render();
}

/** Another tab of this browser changed the outbox of this device: read it again. */
export function listenToOtherTabs() {
  if (bc) bc.onmessage = (m) => { if (m.data && m.data.kind === "outbox" && m.data.device === S.device) reloadEntries(); };
}

function keepEntry(entry) {
  const i = S.entries.findIndex((e) => e.n === entry.n);
  if (i >= 0) S.entries[i] = entry; else S.entries.push(entry);
}

async function saveEntry(entry) {
  entry.n = await dbPut(entry);
  keepEntry(entry);
  if (bc) bc.postMessage({ kind: "outbox", device: S.device });
  app.render();
  return entry;
}

function newId() {
  const b = new Uint8Array(10);
  crypto.getRandomValues(b);     // works without a secure context, unlike randomUUID
  return "hh-" + Date.now().toString(36) + "-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** When the current action started: the tap on the player or on the action, if recent. */
function actionMoment() {
  const at = S.actionAt;
  S.actionAt = null;
  return at && Date.now() - at < 60000 ? at : Date.now();
}

/** Record an event: into the outbox first (durably), then to the server. */
export async function record(type, fields) {
  if (!db) { app.toast("IndexedDB unavailable: nothing recorded", "bad"); return null; }
  const event = { id: newId(), type, game: S.game, at: actionMoment(), ...fields };
  const entry = {
    device: S.device, id: event.id, game: S.game, type,
    body: JSON.stringify(event),     // the exact bytes, resent as they are
    state: "queued", created: event.at, tries: 0,
  };
  await saveEntry(entry);
  app.toast(t("saved", { what: describe(event) }));
  pump();
  return entry;
}

const unanswered = (e) => e.state === "queued" || e.state === "sent";
// A game-scoped token can send only its game's events: another game's leftovers (same device
// name, an earlier token) wait for a token of their own rather than being refused.
const inScope = (e) => !S.claims || !S.claims.game || e.game === S.claims.game;
export const pendingEntries = () => S.entries.filter((e) => unanswered(e) && inScope(e));
export const waitingElsewhere = () => S.entries.filter((e) => unanswered(e) && !inScope(e));

// ------------------------------------------------------------------ sending

function withLock(fn) {
  // One sender per device across this browser's tabs (another tab may hold the same token).
  if (navigator.locks && navigator.locks.request) return navigator.locks.request("arena-outbox:" + S.device, fn);
  return fn();
}

/** Send what is unanswered, oldest first, while the device socket is ready. */
export async function pump() {
  if (S.pumping) { S.pumpAgain = true; return; }
  S.pumping = true;
  try {
    do {
      S.pumpAgain = false;
      while (S.dev.ready && (await withLock(sendNext))) { /* one at a time, in order */ }
    } while (S.pumpAgain && S.dev.ready);
  } finally {
    S.pumping = false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Send the oldest unanswered entry and wait for its one answer. False: stop for now. */
async function sendNext() {
  const fresh = await dbAll(S.device);   // another tab may have sent some
  S.entries = fresh;
  const entry = fresh.find((e) => unanswered(e) && inScope(e));
  if (!entry || !S.dev.ready || !S.dev.ws) { app.render(); return false; }
  entry.state = "sent";
  entry.tries = (entry.tries || 0) + 1;
  entry.sentAt = Date.now();
  await saveEntry(entry);
  let reply;
  try {
    reply = await sendAndWait(entry);
  } catch {
    return false;                        // connection lost: stays "sent", resent after reconnecting
  }
  if (reply.type === "ack") {
    addAlerts(reply.notices, entry.game);
    entry.state = "acked";
    entry.ack = { log_id: reply.log_id, seq: reply.seq, at: reply.at, duplicate: !!reply.duplicate };
    if (!reply.duplicate || !entry.notices) {
      entry.notices = (reply.notices || []).map((n) => ({ type: n.type, text: n.text, clause: n.clause, cause: n.cause }));
    }
    delete entry.note;
    await saveEntry(entry);
    return true;
  }
  if (reply.retry) {                      // nothing was stored: the same event again, after a pause
    entry.state = "queued";
    entry.note = reply.code;
    await saveEntry(entry);
    await sleep(Math.min(2000, 50 * 2 ** Math.min(entry.tries, 6)));
    return true;
  }
  entry.state = "refused";               // final: shown with its reason, never resent
  entry.error = { code: reply.code, detail: reply.detail, clause: reply.clause };
  delete entry.note;
  await saveEntry(entry);
  app.toast(`${t("st_refused")}: ${describe(JSON.parse(entry.body))} — ${reasonText(entry.error)}`, "bad");
  if (navigator.vibrate) navigator.vibrate([120, 80, 120]);
  return true;
}
