// The livestream overlay: /overlay?game=G[&lang=es][&elements=bug,box,lower][&position=top-left]
//   [&hold=6 (seconds a lower third stays)][&home=AIK&away=WEL (short names for the bug)]
// Nothing is drawn until the first snapshot; after a reconnect the last frame stays
// (clock frozen) until the resume completes. See live.js for the connection.
// The score bug shows each team's registered short letters (upper-case; ?home= / ?away= win
// over them) in its colours (primary: background, secondary: accent) with its logo; players
// show as "#2 ORTEGA"; a raw id only when nothing is registered (watch.js, "Names").
import { LiveGame, setup, el, mmss, gameClock, label, splitCitation } from "./live.js";
import { displayToken, playerText, teamColors, teamLogo, teamShort, teamText } from "./watch.js";

const { params, game, t } = setup();
const $ = (id) => document.getElementById(id);
const body = document.body;

const POSITIONS = ["top-left", "top-right", "top-center", "bottom-left", "bottom-right", "bottom-center"];
const position = POSITIONS.includes(params.get("position")) ? params.get("position") : "top-left";
const elements = new Set((params.get("elements") || "bug,box,lower").split(",").map((s) => s.trim()));
const HOLD = Math.max(1, Number(params.get("hold")) || 6) * 1000;
const EXIT_MS = 600;
const CATCH_UP_WINDOW = 20000;  // notices missed while away: only the recent ones are still news

body.className = `pos-${position}`;
for (const id of ["bug", "box", "lower"]) if (!elements.has(id)) $(id).remove();

let roster = null;       // the game's roster (live.roster), or null

function shortName(side, team) {
  return (params.get(side) || teamShort(roster, side, team) || label(team)).toLocaleUpperCase();
}

const who = (id) => playerText(roster, id, label).toLocaleUpperCase();

if (game) {
  const live = new LiveGame(game, { token: displayToken() });  // (a #pair=<token> link's, kept)
  // While a resume is catching up, keep the last frame: draw once it is complete.
  live.addEventListener("change", () => { if (live.caughtUp) { render(live); tick(live); } });
  live.addEventListener("stale", () => { body.dataset.stale = String(live.stale); });
  live.addEventListener("delta", (e) => lowerThirds(live, e.detail));
  live.start();
  setInterval(() => { if (live.caughtUp) tick(live); }, 100);
}

// ------------------------------------------------------------------ score bug and box panel

function render(live) {
  const v = live.view;
  if (!v) return;
  roster = live.roster;
  body.dataset.ready = "true";
  body.dataset.stale = String(live.stale);
  for (const side of ["home", "away"]) colours(side, v.teams[side].team);
  if ($("bug")) {
    for (const side of ["home", "away"]) {
      const team = v.teams[side];
      setText($(`bug-${side}-name`), shortName(side, team.team));
      $(`bug-${side}-name`).title = teamText(roster, side, team.team, label);
      const src = teamLogo(roster, side, team.team), logo = $(`bug-${side}-logo`);
      if (src && logo.getAttribute("src") !== src) logo.src = src;
      if (!src) logo.removeAttribute("src");
      logo.hidden = !src;
      setText($(`bug-${side}-score`), String(v.score[side]));
      const tag = $(`bug-${side}-tag`);
      // A team playing short: "2v3" style tag, red.
      setText(tag, team.short.length ? `−${team.short.length}` : "");
      tag.title = team.short.length ? t("short") : "";
    }
  }
  if ($("box")) boxPanel(live);
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
  const v = live.view, box = $("box");
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
  if ($("bug")) {
    const c = v.clock;
    setText($("bug-period"), periodShort(c, v.status));
    setText($("bug-clock"), gameClock(live.clockRemaining(), c.running && !live.stale));
    $("bug-clock").dataset.running = String(c.running);
  }
  const box = $("box");
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

// ------------------------------------------------------------------ lower thirds

const queue = [];
let showing = false;

function lowerThirds(live, { notices, catchUp }) {
  if (!$("lower") || !live.view) return;
  const now = live.now();
  const fresh = notices.filter((n) => !catchUp || now - n.at < CATCH_UP_WINDOW);
  const groups = new Map();
  for (const n of fresh) {
    if (!groups.has(n.cause)) groups.set(n.cause, []);
    groups.get(n.cause).push(n);
  }
  for (const group of groups.values()) {
    for (const item of items(live.view, group)) queue.push(item);
  }
  if (!showing) next();
}

function cardTitle(n) {
  if (n.color === "red") return t("redCard");
  if (n.count > 1) return t("yellowCards", { n: n.count });
  if (n.yellows === 2) return t("secondYellow");
  if (n.yellows === 3) return t("thirdYellow");
  return t("yellowCard");
}

/** One or more lower thirds from the notices of one event (a card, its penalty and its box trip are one). */
function items(view, group) {
  const by = (type) => group.find((n) => n.type === type);
  const out = [];
  const card = by("card.recorded");
  const team = (side) => (view.teams[side] ? teamText(roster, side, view.teams[side].team, label) : label(side));
  const make = (type, icon, title, n, detail = n) => {
    const { sentence, citation } = splitCitation(detail.text?.[document.documentElement.lang] || detail.text?.en || "");
    return { type, icon, title: `${title} · ${who(n.player)}`, team: team(n.side), side: n.side,
      line: sentence, citation, player: n.player };
  };
  if (card) {
    const detail = by("box.enter") || by("sent_off") || card;
    out.push(make("card.recorded", card.color === "red" ? "red" : "yellow", cardTitle(card), card, detail));
  } else if (by("box.enter")) {
    out.push(make("box.enter", "box", t("toBox"), by("box.enter")));
  }
  const simple = [["box.eligible", "clock", t("eligible")], ["box.release", "release", t("released")],
    ["sub.allowed", "release", t("subAllowedTitle")]];
  for (const [type, icon, title] of simple) {
    for (const n of group.filter((x) => x.type === type)) out.push(make(type, icon, title, n));
  }
  for (const n of group.filter((x) => x.type === "mount.deadline")) {
    out.push(make("mount.deadline", "mount", n.status === "expired" ? t("mountLate") : `${t("mountOpen")} ${mmss(n.deadline_at - n.at)}`, n));
  }
  return out;
}

function icon(kind) {
  if (kind === "yellow") return el("i", { class: "card yellow" });
  if (kind === "red") return el("i", { class: "card red" });
  if (kind === "mount") return el("i", { class: "glyph", text: "♞" });
  if (kind === "release") return el("i", { class: "glyph", text: "↩" });
  if (kind === "clock") return el("i", { class: "glyph", text: "⏱" });
  return el("i", { class: "glyph", text: "■" });
}

function next() {
  const lower = $("lower");
  const item = queue.shift();
  if (!item || !lower) { showing = false; return; }
  showing = true;
  const node = el("div", { class: `lt ${item.side || ""} icon-${item.icon}`, "data-type": item.type, "data-player": item.player },
    el("div", { class: "lt-icon" }, icon(item.icon)),
    el("div", { class: "lt-body" },
      el("div", { class: "lt-title" }, el("span", { text: item.title }), el("span", { class: "lt-team", text: item.team })),
      el("div", { class: "lt-line", text: item.line }),
      item.citation ? el("div", { class: "lt-cite", text: item.citation }) : null));
  lower.replaceChildren(node);
  void node.offsetWidth;  // commit the start state, so the entry transition runs (no rAF: hidden tabs)
  node.classList.add("in");
  // A backlog moves faster, so that the news stays news.
  const hold = queue.length >= 2 ? HOLD / 2 : HOLD;
  setTimeout(() => {
    node.classList.remove("in");
    node.classList.add("out");
    setTimeout(() => { node.remove(); next(); }, EXIT_MS);
  }, hold);
}
