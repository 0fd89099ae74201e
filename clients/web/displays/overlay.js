// The livestream overlay: /overlay?game=G[&lang=es][&elements=bug,box,lower][&position=top-left]
//   [&hold=6 (seconds a lower third stays)][&home=AIK&away=WEL (short names for the bug)]
//   [&cite=1 (lower thirds cite the rule)][&control=1 (follow the operator's control page)]
// Nothing is drawn until the first snapshot (and the bundled typeface) is in; after a reconnect
// the last frame stays (clock frozen) until the resume completes. See live.js for the connection.
// Automatic (without control=1): each card, box trip and release becomes a lower third, queued,
// `hold` seconds each. Controlled (control=1): the page shows what /overlay/control?game=G puts
// on air, in its language: the bug, the box panel and the lower third are taken, hidden and
// replayed by the operator (the game's `graphics` state: overlay-graphics.js, docs/protocol-viewer.md).
// The score bug shows the score as people write it ("5½"), a small "1½ HCP" before a score that
// includes goals on handicap, and each team's registered short letters (upper-case; ?home= / ?away= win
// over them) in its colours (primary: background, secondary: accent) with its logo; players
// show as "#2 ORTEGA"; a raw id only when nothing is registered (watch.js, "Names").
import { setup, el, gameClock, label } from "./live.js";
import { byId, goals, mmss } from "../shared/common.js";
import { displayToken } from "./pairing.js";
import { playerText, teamColors, teamLogo, teamShort, teamText } from "../shared/roster.js";
import { GraphicsGame, loadFonts, lowerItems, words } from "./overlay-graphics.js";

const { params, game, lang: urlLang } = setup();
let lang = urlLang;
let t = words(lang);
const body = document.body;

const POSITIONS = ["top-left", "top-right", "top-center", "bottom-left", "bottom-right", "bottom-center"];
const position = POSITIONS.includes(params.get("position")) ? params.get("position") : "top-left";
const elements = new Set((params.get("elements") || "bug,box,lower").split(",").map((s) => s.trim()));
const HOLD = Math.max(1, Number(params.get("hold")) || 6) * 1000;
const EXIT_MS = 600;
const CATCH_UP_WINDOW = 20000;  // notices missed while away: only the recent ones are still news
const controlled = params.get("control") === "1";
let cite = params.get("cite") === "1";

body.className = `pos-${position}`;
body.dataset.control = String(controlled);
for (const id of ["bug", "box", "lower"]) if (!elements.has(id)) byId(id).remove();

let roster = null;       // the game's roster (live.roster), or null
let fontsIn = false;

function shortName(side, team) {
  return (params.get(side) || teamShort(roster, side, team) || label(team)).toLocaleUpperCase();
}

const who = (id) => playerText(roster, id, label).toLocaleUpperCase();

if (game) {
  // (a #pair=<token> link's token, kept); the graphics state only when controlled
  const live = new GraphicsGame(game, { token: displayToken(), graphics: controlled });
  const draw = () => { if (live.caughtUp) { render(live); tick(live); } };
  // While a resume is catching up, keep the last frame: draw once it is complete.
  live.addEventListener("change", draw);
  live.addEventListener("stale", () => { body.dataset.stale = String(live.stale); });
  if (controlled) {
    live.addEventListener("graphics", (e) => { follow(live, e.detail); draw(); });
    // a registration renames the player on air at once
    live.addEventListener("roster", () => { if (live.graphics) follow(live, live.graphics); });
  }
  else live.addEventListener("delta", (e) => lowerThirds(live, e.detail));
  loadFonts().then(() => { fontsIn = true; draw(); });
  live.start();
  setInterval(() => { if (live.caughtUp) tick(live); }, 100);
}

// ------------------------------------------------------------------ score bug and box panel

function render(live) {
  const v = live.view;
  if (!v || !fontsIn || (controlled && !live.graphics)) return;
  roster = live.roster;
  body.dataset.ready = "true";
  body.dataset.stale = String(live.stale);
  for (const side of ["home", "away"]) colours(side, v.teams[side].team);
  if (byId("bug")) {
    for (const side of ["home", "away"]) {
      const team = v.teams[side];
      setText(byId(`bug-${side}-name`), shortName(side, team.team));
      byId(`bug-${side}-name`).title = teamText(roster, side, team.team, label);
      const src = teamLogo(roster, side, team.team), logo = byId(`bug-${side}-logo`);
      if (src && logo.getAttribute("src") !== src) logo.src = src;
      if (!src) logo.removeAttribute("src");
      logo.hidden = !src;
      setText(byId(`bug-${side}-score`), goals(v.score[side]));
      // The goals on handicap the score includes (A5): a small "1½ HCP" before it.
      const onHcp = v.goals_on_handicap?.[side] || 0, hcp = byId(`bug-${side}-hcp`);
      hcp.hidden = !onHcp;
      setText(hcp.firstChild, onHcp ? goals(onHcp) : "");
      setText(hcp.lastChild, onHcp ? t("hcpShort") : "");
      hcp.title = onHcp ? t("onHandicap", { n: goals(onHcp) }) : "";
      const tag = byId(`bug-${side}-tag`);
      // A team playing short: "2v3" style tag, red.
      setText(tag, team.short.length ? `−${team.short.length}` : "");
      tag.title = team.short.length ? t("short") : "";
    }
  }
  if (byId("box")) boxPanel(live);
}

/** A registered team's colours, for every part of the overlay that marks its side (the bug, the
 * box rows, the lower thirds): --home / --away are its primary, --home-2 its secondary, and the
 * inks are chosen by contrast. Unregistered: the stylesheet's own. */
function colours(side, team) {
  const c = teamColors(roster, side, team);
  body.dataset[`${side}Colors`] = String(!!c);
  const vars = { [`--${side}`]: c?.primary, [`--${side}-ink`]: c?.ink, [`--${side}-2`]: c?.secondary,
    [`--${side}-2-ink`]: c?.accentInk };
  for (const [k, value] of Object.entries(vars)) {
    if (value) body.style.setProperty(k, value);
    else body.style.removeProperty(k);
  }
}

function periodShort(c, status) {
  if (status === "ended") return t("final").toUpperCase();
  if (c.period > c.periods) return "OT";
  return `${t("period").slice(0, 1).toUpperCase()}${c.period}`;
}

function setText(node, text) { if (node && node.textContent !== text) node.textContent = text; }

function boxPanel(live) {
  const v = live.view, box = byId("box");
  const wanted = [];
  for (const p of v.players) {
    if (p.box) wanted.push({ key: `box:${p.id}`, p, kind: "box", so: p.box });
    else if (p.sent_off && p.no_sub) wanted.push({ key: `red:${p.id}`, p, kind: "red", so: p.no_sub });
    if (p.mount && !p.mount.expired) wanted.push({ key: `mount:${p.id}`, p, kind: "mount" });
  }
  const keys = new Set(wanted.map((w) => w.key));
  for (const row of [...box.children]) {
    if (!keys.has(row.dataset.key) && !row.classList.contains("leaving")) {
      row.classList.add("leaving");
      setTimeout(() => row.remove(), 450);
    }
  }
  for (const w of wanted) {
    let row = box.querySelector(`.row[data-key="${CSS.escape(w.key)}"]:not(.leaving)`);
    if (!row) {
      row = el("div", { class: `row ${w.p.side} ${w.kind}`, "data-key": w.key, "data-player": w.p.id, "data-kind": w.kind },
        el("span", { class: "mark" }, w.kind === "mount" ? el("i", { class: "horse", text: "♞" })
          : w.kind === "red" ? el("i", { class: "rc" })
            : w.p.yellows ? Array.from({ length: Math.min(w.p.yellows, 3) }, () => el("i", { class: "yc" }))
              : el("i", { class: "yc carried", title: "carried" })),
        el("span", { class: "who" }),
        el("span", { class: "countdown" }),
        el("span", { class: "bar" }, el("i")));
      box.append(row);
    }
    row._item = w;
    setText(row.querySelector(".who"), who(w.p.id));  // a later registration renames him at once
  }
  box.hidden = !wanted.length;
}

function tick(live) {
  const v = live.view;
  if (!v) return;
  if (byId("bug")) {
    const c = v.clock;
    setText(byId("bug-period"), periodShort(c, v.status));
    setText(byId("bug-clock"), gameClock(live.clockRemaining(), c.running && !live.stale));
    byId("bug-clock").dataset.running = String(c.running);
  }
  const box = byId("box");
  if (!box) return;
  for (const row of box.children) {
    const w = row._item;
    if (!w || row.classList.contains("leaving")) continue;
    const player = v.players.find((p) => p.id === w.p.id);
    if (!player) continue;
    let left, total, doneText;
    if (w.kind === "mount") {
      if (!player.mount) continue;
      left = live.mountRemaining(player.mount); total = 300000; doneText = t("mountExpired");
    } else {
      const so = w.kind === "box" ? player.box : player.no_sub;
      if (!so) continue;
      left = live.sitoutRemaining(so); total = so.owed_ms || 1;
      doneText = w.kind === "box" ? t("returnsNext") : t("subNext");
      if (so.release === "next_stoppage") left = 0;
    }
    const done = left <= 0;
    row.dataset.eligible = String(done);
    setText(row.querySelector(".countdown"), done ? doneText : mmss(left));
    row.querySelector(".bar i").style.width = `${Math.min(100, 100 * (1 - left / total))}%`;
  }
}

// ------------------------------------------------------------------ controlled by the operator

let onAir = null;        // controlled: the lower third on air ({id, take}), or null
const takes = { bug: 0, box: 0 };

/** Follow the game's graphics state: language, citation, what is on air (each entrance anew
 * when its `take` count moves on). */
function follow(live, g) {
  if (g.lang !== lang) {
    lang = g.lang;
    t = words(lang);
    document.documentElement.lang = lang;
  }
  cite = g.cite;
  for (const id of ["bug", "box"]) {
    const node = byId(id), s = g[id];
    if (!node) continue;
    node.dataset.on = String(s.on);
    if (s.on && s.take !== takes[id]) enter(node);
    takes[id] = s.take;
  }
  const lower = byId("lower");
  if (!lower) return;
  const item = g.lower.on_air;
  if (!item) {
    if (onAir) leave(lower);
    onAir = null;
    return;
  }
  const now = { id: item.id, take: g.lower.take };
  const made = lowerItems(item.notices, { lang, roster: live.roster, view: live.view, player: item.player,
    notice: item.notice })[0];
  if (!made) return;
  if (onAir && onAir.id === now.id && onAir.take === now.take) {
    // the same one, still on air: only its words may have changed (language, citation, roster)
    const node = lower.querySelector(".lt:not(.out)");
    if (node) node.replaceWith(Object.assign(lowerNode(made), { className: node.className }));
    return;
  }
  onAir = now;
  show(made, null);
}

/** Run a graphic's entrance again (a take or a replay). */
function enter(node) {
  node.classList.remove("enter");
  void node.offsetWidth;
  node.classList.add("enter");
}

// ------------------------------------------------------------------ lower thirds (automatic)

const queue = [];
let showing = false;

function lowerThirds(live, { notices, catchUp }) {
  if (!byId("lower") || !live.view) return;
  const now = live.now();
  const fresh = notices.filter((n) => !catchUp || now - n.at < CATCH_UP_WINDOW);
  const groups = new Map();
  for (const n of fresh) {
    if (!groups.has(n.cause)) groups.set(n.cause, []);
    groups.get(n.cause).push(n);
  }
  for (const group of groups.values()) {
    for (const item of lowerItems(group, { lang, roster: live.roster, view: live.view })) queue.push(item);
  }
  if (!showing) next();
}

function icon(kind) {
  if (kind === "yellow") return el("i", { class: "card yellow" });
  if (kind === "red") return el("i", { class: "card red" });
  if (kind === "mount") return el("i", { class: "glyph", text: "♞" });
  if (kind === "release") return el("i", { class: "glyph", text: "↩" });
  if (kind === "clock") return el("i", { class: "watch" });
  if (kind === "goal") return el("i", { class: "glyph", text: "●" });
  return el("i", { class: "glyph", text: "■" });
}

/** One lower third: the broadcast line, then the team (and the rule, when cited). */
function lowerNode(item) {
  return el("div", { class: `lt ${item.side || ""} icon-${item.icon}`, "data-type": item.type, "data-player": item.player },
    el("div", { class: "lt-icon" }, icon(item.icon)),
    el("div", { class: "lt-body" },
      el("div", { class: "lt-headline", text: item.headline }),
      el("div", { class: "lt-sub" },
        item.team ? el("span", { class: "lt-team", text: item.team }) : null,
        cite && item.citation ? el("span", { class: "lt-cite", text: item.citation }) : null)));
}

/** Put `item` on air (what was there leaves); after `hold` ms, take it off and call `then`. */
function show(item, hold, then) {
  const lower = byId("lower");
  for (const old of lower.querySelectorAll(".lt:not(.out)")) leave(lower, old);
  const node = lowerNode(item);
  lower.append(node);
  void node.offsetWidth;  // commit the start state, so the entry transition runs (no rAF: hidden tabs)
  node.classList.add("in");
  if (hold) {
    setTimeout(() => { leave(lower, node); setTimeout(then, EXIT_MS); }, hold);
  }
}

function leave(lower, node = lower.querySelector(".lt:not(.out)")) {
  if (!node) return;
  node.classList.remove("in");
  node.classList.add("out");
  setTimeout(() => node.remove(), EXIT_MS);
}

function next() {
  const item = queue.shift();
  if (!item || !byId("lower")) { showing = false; return; }
  showing = true;
  // A backlog moves faster, so that the news stays news.
  show(item, queue.length >= 2 ? HOLD / 2 : HOLD, next);
}
