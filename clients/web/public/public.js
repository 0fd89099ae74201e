// Arena Stream: the public pages (docs/public.md). The server sends each page already
// drawn (the first paint holds the state); this script follows the event on ONE socket
// (/ws/watch?event=E: a snapshot of each of its games, then deltas) and redraws only what
// changes: a game's score, state, period and running clock. A score that changes is said
// to screen readers (the page's polite live region). When the socket drops the header says
// "as of HH:MM:SS" (the last moment the page was known current) and the socket resumes by
// itself; the front door follows each event it lists the same way.

import { LiveGames } from "../shared/watch.js";
import { goals, mmss } from "../shared/common.js";

const WORDS = {
  en: { scheduled: "to come", live: "live", ended: "ended", period: "Period {p} of {n}", overtime: "Overtime",
        asOf: "as of {t}", goal: "Goal: {h} {hs} – {as} {a}", ended_: "Ended: {h} {hs} – {as} {a}" },
  es: { scheduled: "por jugar", live: "en juego", ended: "terminado", period: "Período {p} de {n}",
        overtime: "Suplementario", asOf: "al {t}", goal: "Gol: {h} {hs} – {as} {a}",
        ended_: "Terminado: {h} {hs} – {as} {a}" },
};
const lang = document.body.dataset.lang === "es" ? "es" : "en";
const say = (key, kw = {}) => (WORDS[lang][key] || key).replace(/\{(\w+)\}/g, (_, k) => String(kw[k] ?? ""));

const shown = new Map();          // game -> what its cards show now: "status|home|away"
const clocks = new Map();         // game -> {running, remaining, at, socket}
let lastCurrent = Date.now();

function nameOf(card, side) { return card.querySelector(`.side.${side} a`)?.textContent || side; }

function draw(game, view, socket) {
  const key = `${view.status}|${view.score.home}|${view.score.away}`;
  const before = shown.get(game);
  for (const card of document.querySelectorAll(`article.game[data-game="${CSS.escape(game)}"]`)) {
    card.dataset.status = view.status;
    for (const side of ["home", "away"]) {
      const cell = card.querySelector(`[data-score="${side}"]`);
      if (cell && cell.textContent !== goals(view.score[side])) cell.textContent = goals(view.score[side]);
    }
    const status = card.querySelector(".status");
    if (status) status.textContent = say(view.status);
    const period = card.querySelector(".period");
    if (period) {
      period.textContent = view.status !== "live" ? ""
        : view.clock.overtime ? say("overtime") : say("period", { p: view.clock.period, n: view.clock.periods });
    }
  }
  clocks.set(game, { view, socket });
  if (before !== undefined && before !== key) {
    const card = document.querySelector(`article.game[data-game="${CSS.escape(game)}"]`);
    if (card) {
      const [, h, a] = before.split("|");
      const words = { h: nameOf(card, "home"), a: nameOf(card, "away"), hs: goals(view.score.home),
                      as: goals(view.score.away) };
      if (view.status === "ended" && !before.startsWith("ended")) announce(say("ended_", words));
      else if (String(view.score.home) !== h || String(view.score.away) !== a) announce(say("goal", words));
    }
  }
  shown.set(game, key);
  if (before !== undefined && view.status === "ended" && !before.startsWith("ended")) redrawDraw();
}

// A game that ends moves its winner on in the bracket (or changes the standings) and joins
// the results: those two parts of the page are drawn again from the server's own page, and
// only those (each replaced only when its markup changed).
let drawing = null, owed = false;
function redrawDraw() {
  if (!document.querySelector("section.draw, section.results")) return;
  if (drawing || !navigator.onLine) { owed = true; return; }   // (again once back: connection())
  owed = false;
  drawing = fetch(location.pathname + location.search, { headers: { Accept: "text/html" } })
    .then((r) => (r.ok ? r.text() : ""))
    .then((html) => {
      if (!html) return;
      const fresh = new DOMParser().parseFromString(html, "text/html");
      for (const sel of ["section.draw", "section.results"]) {
        const now = document.querySelector(sel), next = fresh.querySelector(sel);
        if (now && next && now.innerHTML !== next.innerHTML) now.replaceWith(document.adoptNode(next));
      }
    })
    .catch(() => { owed = true; })
    .finally(() => { drawing = null; });
}

function announce(text) {
  const region = document.querySelector(".announce");
  if (region) region.textContent = text;
}

function tick() {
  for (const [game, { view, socket }] of clocks) {
    if (view.status !== "live") continue;
    const c = view.clock;
    const left = c.running && !socket.stale ? c.remaining_ms - (socket.now() - c.at) : c.remaining_ms;
    for (const el of document.querySelectorAll(`article.game[data-game="${CSS.escape(game)}"] .clock`)) {
      const text = mmss(Math.max(0, left));
      if (el.textContent !== text) el.textContent = text;
    }
  }
}

function connection(sockets) {
  const line = document.querySelector(".conn");
  if (!line) return;
  const stale = sockets.some((s) => s.stale);
  if (!stale) lastCurrent = Date.now();
  if (!stale && owed && !drawing) redrawDraw();
  const t = new Date(lastCurrent).toLocaleTimeString(lang === "es" ? "es-AR" : "en-GB", { hour12: false });
  const text = stale ? say("asOf", { t }) : "";
  if (line.textContent !== text) line.textContent = text;
  document.body.dataset.stale = String(stale);
}

function follow(events) {
  const sockets = events.map((event) => new LiveGames({ event }));
  for (const s of sockets) {
    s.addEventListener("change", (ev) => {
      const game = ev.detail?.game;
      if (game && s.games[game]) draw(game, s.games[game], s);
      connection(sockets);
    });
    s.addEventListener("stale", () => connection(sockets));
    s.addEventListener("connection", () => connection(sockets));
    s.start();
  }
  setInterval(() => { tick(); connection(sockets); }, 500);
  window.__publicSockets = sockets;
}

const one = document.body.dataset.event;
const many = (document.body.dataset.events || "").split(" ").filter(Boolean);
if (one || many.length) follow(one ? [one] : many);
