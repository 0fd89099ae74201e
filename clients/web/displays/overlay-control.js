// The broadcast operator's page: /overlay/control?game=G. Like H2R Graphics or a NodeCG
// dashboard, with nothing to install: it sends `graphics` commands on /ws/watch
// (docs/protocol-viewer.md, "Broadcast graphics") and every overlay opened as
// /overlay?game=G&control=1 follows the game's graphics state, which this page shows too
// (its program preview is one such overlay).
//
// The token (a display token of the game, a committee token of its event, or an admin
// token) comes by a pairing link's fragment (#pair=<token>, taken out of the address bar at
// once) or pasted in the form; it is kept in localStorage and sent only in an `auth` frame.

import { el, label, setup } from "./live.js";
import { byId, goals } from "../shared/common.js";
import { pairedToken } from "./pairing.js";
import { teamShort, teamText } from "../shared/roster.js";
import { GraphicsGame, lowerItems } from "./overlay-graphics.js";

const { game } = setup();
const body = document.body;
const KEY = "arena.control.token";
const MAX_EVENTS = 24;            // the latest events listed, at most

/** The token: a #pair= link's (kept), else the one kept, else the committee console's. */
function controlToken() {
  const token = pairedToken(KEY);
  if (token) return token;
  try { return localStorage.getItem("arena.committee.token"); } catch { return null; }
}

/** A display token is also what the program preview (an overlay) shows a private service. */
function keepForPreview(token) {
  try {
    const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    if (claims.role === "display") localStorage.setItem("arena.display.token", token);
  } catch { /* not a token we can read: the service will say so */ }
}

let live = null;
const events = new Map();        // cause -> its notices, newest first (at most MAX_EVENTS)
const pending = new Map();       // command id -> what it was, until answered

function start(token) {
  if (live) live.stop();
  body.dataset.token = String(!!token);
  byId("token-form").hidden = !!token;
  byId("forget").hidden = !token;
  if (!game) { status("Add the game to the address: /overlay/control?game=G", true); return; }
  if (!token) return;
  keepForPreview(token);
  live = new GraphicsGame(game, { controlToken: token });
  live.addEventListener("connection", (e) => connection(e.detail));
  live.addEventListener("stale", () => connection(live.connected ? "open" : "closed"));
  live.addEventListener("snapshot", (e) => { events.clear(); remember(e.detail.recent); renderEvents(); });
  live.addEventListener("delta", (e) => { remember(e.detail.notices); renderEvents(); });
  live.addEventListener("roster", () => { renderMatch(); renderEvents(); if (live.graphics) renderState(live.graphics); });
  live.addEventListener("change", renderMatch);
  live.addEventListener("graphics", (e) => renderState(e.detail));
  live.addEventListener("error", (e) => refused(e.detail));
  live.start();
  const program = byId("program");
  const src = `/overlay?game=${encodeURIComponent(game)}&control=1`;
  if (program.getAttribute("src") !== src) program.src = src;
}

function connection(state) {
  body.dataset.connection = state;
  const pill = byId("conn");
  pill.dataset.state = state;
  pill.textContent = state === "open" ? "Connected" : "Reconnecting…";
}

function status(text, bad = false) {
  const s = byId("status");
  s.textContent = text;
  s.classList.toggle("error", bad);
}

const BAD_TOKEN = new Set(["bad_token", "expired", "revoked"]);       // the socket is closed (4401)
const CANNOT = new Set(["auth_required", "forbidden", "out_of_scope"]);  // a token that may not control

/** A refusal: said in the status line (with the command it answers); a token that can't
 * control this game's graphics takes the page back to the token form. */
function refused(err) {
  const what = err.id ? pending.get(err.id) : null;
  if (err.id) pending.delete(err.id);
  status(`${what ? `${what}: ` : ""}${err.code} — ${err.detail}`, true);
  body.dataset.refused = err.code;
  if (BAD_TOKEN.has(err.code) || (what && CANNOT.has(err.code))) {
    live?.stop();
    live = null;
    body.dataset.token = "false";
    byId("token-form").hidden = false;
    byId("token-error").textContent = `${err.code}: ${err.detail}`;
  }
}

// ------------------------------------------------------------------ commands

function send(cmd, what) {
  if (!live) return;
  const id = live.command(cmd);
  if (id === null) { status("Not connected: the command was not sent", true); return; }
  pending.set(id, what);
  if (pending.size > 32) pending.delete(pending.keys().next().value);
}

for (const box of document.querySelectorAll(".graphic")) {
  const graphic = box.dataset.graphic;
  for (const button of box.querySelectorAll(".buttons button")) {
    button.addEventListener("click", () => send({ action: button.dataset.action, graphic },
      `${button.dataset.action} ${graphic}`));
  }
}
for (const button of document.querySelectorAll("button[data-lang]")) {
  button.addEventListener("click", () => send({ action: "lang", lang: button.dataset.lang }, `language ${button.dataset.lang}`));
}
byId("cite").addEventListener("change", (e) => send({ action: "cite", cite: e.target.checked }, "rule citation"));
byId("token-entry").addEventListener("submit", (e) => {
  e.preventDefault();
  const token = byId("token-input").value.trim();
  if (!token) return;
  try { localStorage.setItem(KEY, token); } catch { /* private mode */ }
  byId("token-input").value = "";
  byId("token-error").textContent = "";
  start(token);
});
byId("forget").addEventListener("click", () => {
  try { localStorage.removeItem(KEY); } catch { /* private mode */ }
  live?.stop();
  live = null;
  start(null);
});

// ------------------------------------------------------------------ what the page shows

function lang() { return live?.graphics?.lang || "en"; }

function compose(notices, player = null, notice = null) {
  return lowerItems(notices, { lang: lang(), roster: live?.roster, view: live?.view, player, notice });
}

function remember(notices) {
  for (const n of notices || []) {
    if (!events.has(n.cause)) events.set(n.cause, []);
    events.get(n.cause).push(n);
  }
  const causes = [...events.keys()];
  for (const old of causes.slice(0, Math.max(0, causes.length - MAX_EVENTS))) events.delete(old);
}

function itemRow(item, attrs, ...buttons) {
  return el("li", { class: `item ${item.side || ""} icon-${item.icon}`, ...attrs },
    el("span", { class: "headline", text: item.headline }),
    el("span", { class: "team", text: item.team }),
    el("span", { class: "buttons" }, ...buttons));
}

function renderEvents() {
  const list = byId("events");
  const rows = [];
  for (const [cause, notices] of [...events.entries()].reverse()) {
    for (const item of compose(notices)) {
      const player = item.player, notice = item.type;
      const queue = el("button", { type: "button", "data-action": "queue", text: "Queue" });
      const take = el("button", { type: "button", class: "take", "data-action": "take", text: "Take now" });
      queue.addEventListener("click", () => send({ action: "queue", cause, player, notice }, `queue ${item.headline}`));
      take.addEventListener("click", () => send({ action: "take", graphic: "lower", cause, player, notice },
        `take ${item.headline}`));
      rows.push(itemRow(item, { "data-cause": cause, "data-player": player, "data-type": item.type }, queue, take));
    }
  }
  list.replaceChildren(...rows);
  byId("no-events").hidden = rows.length > 0;
}

function renderMatch() {
  const v = live?.view;
  if (!v) return;
  body.dataset.ready = "true";
  const side = (s) => teamShort(live.roster, s, v.teams[s].team) || label(v.teams[s].team);
  const hcp = ["home", "away"].filter((s) => v.goals_on_handicap?.[s])
    .map((s) => `${side(s)} incl. ${goals(v.goals_on_handicap[s])} hcp`);
  byId("match").textContent = `${side("home")} ${goals(v.score.home)}–${goals(v.score.away)} ${side("away")}`
    + (hcp.length ? ` (${hcp.join(", ")})` : "");
  byId("match").title = `${teamText(live.roster, "home", v.teams.home.team, label)} v ${teamText(live.roster, "away", v.teams.away.team, label)}`;
}

function renderState(g) {
  for (const id of ["bug", "box"]) {
    const box = document.querySelector(`.graphic[data-graphic="${id}"]`);
    box.dataset.on = String(g[id].on);
    box.querySelector(".state").textContent = g[id].on ? "ON AIR" : "OFF";
  }
  const lower = document.querySelector('.graphic[data-graphic="lower"]');
  const onAir = g.lower.on_air;
  lower.dataset.on = String(!!onAir);
  lower.querySelector(".state").textContent = onAir ? "ON AIR" : "OFF";
  const first = (it) => compose(it.notices, it.player, it.notice)[0];
  const aired = onAir && first(onAir);
  byId("on-air").textContent = aired ? aired.headline : g.lower.last ? "Nothing on air: Replay puts the last one back" : "Nothing on air";
  byId("on-air").dataset.item = onAir ? String(onAir.id) : "";
  const rows = g.lower.queue.map((q) => {
    const item = first(q) || { headline: q.cause, team: "", icon: "box" };
    const skip = el("button", { type: "button", "data-action": "skip", text: "Skip" });
    skip.addEventListener("click", () => send({ action: "skip", item: q.id }, `skip ${item.headline}`));
    return itemRow(item, { "data-item": q.id, "data-cause": q.cause }, skip);
  });
  byId("queue").replaceChildren(...rows);
  byId("queue-count").textContent = rows.length ? `${rows.length} of 8` : "empty";
  lower.querySelector('[data-action="take"]').disabled = !rows.length;
  lower.querySelector('[data-action="replay"]').disabled = !g.lower.last;
  for (const b of document.querySelectorAll("button[data-lang]")) b.setAttribute("aria-pressed", String(b.dataset.lang === g.lang));
  byId("cite").checked = g.cite;
  body.dataset.version = String(g.version);
  body.dataset.graphicsLang = g.lang;
  renderEvents();   // in the state's language
  if (g.by) status(`v${g.version} · ${g.by} · ${new Date(g.at).toLocaleTimeString()}`);
}

// The program preview: a 1920×1080 overlay, scaled to the box it sits in.
new ResizeObserver(([entry]) => {
  byId("preview").style.setProperty("--scale", String(entry.contentRect.width / 1920));
}).observe(byId("preview"));

start(controlToken());
