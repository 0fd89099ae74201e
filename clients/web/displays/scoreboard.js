// The arena scoreboard: /scoreboard?game=G[&lang=es]. See live.js for the connection.
// Teams show by their registered name in their colours (the primary colour as the panel's
// background, the secondary as its accent), players as "#2 Ortega"; a raw id only when
// nothing is registered (watch.js, "Names"). A colour on which no ink reaches 7:1 keeps the
// texts on a neutral plate (scoreboard-ink.js). The latest events are said in words
// (scoreboard-events.js); each team's yellows are counted beside the player's name.
// Layouts (1080p, 720p, portrait) and the minimum text sizes: scoreboard.css.
import { LiveGame, setup, el, gameClock, label } from "./live.js";
import { byId, goals, mmss } from "../shared/common.js";
import { displayToken } from "./pairing.js";
import { playerText, teamColors, teamLogo, teamText } from "../shared/roster.js";
import { inkFor } from "./scoreboard-ink.js";
import { EventLog, describe, words } from "./scoreboard-events.js";

const { game, lang, t: shared } = setup();
const t = words(lang, shared);
const events = new EventLog(3);
const body = document.body;

function message(text) {
  byId("message").textContent = text;
  byId("message").hidden = !text;
}

if (!game) {
  byId("board").hidden = true;
  body.dataset.stale = "false";
  message(t("noGame", { example: `${location.pathname}?game=GAME` }));
} else {
  start(game);
}

function start(gameId) {
  // A display paired by the committee's link (#pair=<token>) uses its token where viewing is not public.
  const live = new LiveGame(gameId, { token: displayToken() });
  document.title = `${gameId} · Arena Stream`;
  byId("conn-text").textContent = t("connecting");

  // While a resume is catching up, keep the last frame: draw once it is complete.
  live.addEventListener("snapshot", (e) => events.reset(e.detail.recent));
  live.addEventListener("delta", (e) => events.add(e.detail.notices));
  live.addEventListener("change", () => { if (live.caughtUp) { render(live); tick(live); fitPanels(); } });
  live.addEventListener("stale", () => connection(live));
  live.addEventListener("error", (e) => {
    if (e.detail.code === "unknown_game" && !live.view) message(t("unknownGame", { game: gameId }));
  });
  live.start();
  connection(live);
  addEventListener("resize", () => { render(live); tick(live); fitPanels(); });
  // The clocks count down locally between updates (ten times a second: tenths in the last minute).
  setInterval(() => { if (live.caughtUp) tick(live); }, 100);
}

function connection(live) {
  body.dataset.stale = String(live.stale);
  const text = !live.view ? t("connecting") : live.stale ? (live.connected ? t("reconnecting") : t("offline")) : t("live");
  byId("conn-text").textContent = text;
  byId("stale-banner").textContent = live.view && live.stale ? text : "";
  if (!live.view && !live.error) message(t("connecting"));
}

// ------------------------------------------------------------------ full render (on every update)

function periodText(c, status) {
  if (status === "ended") return t("final");
  if (status === "scheduled") return t("notStarted");
  if (c.period > c.periods) return t("overtime");
  if (c.period_over) return t("periodEnd", { n: c.period });
  return t("periodOf", { n: c.period, of: c.periods });
}

// The names the page shows: the roster's, else the ids made readable.
let roster = null;
const who = (id) => playerText(roster, id, label);
// A row's name: cut with an ellipsis where the row has no room, never over the time owed.
const nameOf = (id) => el("span", { class: "name", text: who(id), title: who(id) });
const teamName = (v, side) => teamText(roster, side, v.teams[side].team, label);

function render(live) {
  const v = live.view;
  if (!v) return;
  roster = live.roster;
  message("");
  body.dataset.ready = "true";
  body.dataset.status = v.status;
  byId("event").textContent = [roster?.event_name || label(v.event), v.arena ? label(v.arena) : ""].filter(Boolean).join(" · ");
  // Both scores at one size: the longer one's ("10½" is drawn smaller than "5", and so is "3" beside it).
  const chars = Math.max(2, ...["home", "away"].map((side) => length(goals(v.score[side]))));
  for (const side of ["home", "away"]) {
    const team = v.teams[side];
    colours(side, team.team);
    fit(byId(`${side}-name`), teamName(v, side));
    score(side, v.score[side], v.goals_on_handicap?.[side] || 0, chars);
    byId(`${side}-strength`).replaceChildren(strength(v, team));
    byId(`${side}-yellows`).replaceChildren(...yellows(v, side));
    const rows = panel(v, side);
    byId(`box-${side}`).dataset.empty = String(rows.length === 1 && rows[0].classList.contains("empty"));
    byId(`box-${side}`).replaceChildren(el("h2", { text: `${t("box")} · ${teamName(v, side)}` }), ...rows);
  }
  byId("box").dataset.empty = String(["home", "away"].every((s) => byId(`box-${s}`).dataset.empty === "true"));
  byId("period").textContent = periodText(v.clock, v.status);
  lastEvents(v);
  mounts(v);
  carried(v);
}

/** A score's length in figures, a half counting one and a half (it is wider than a figure). */
function length(text) { return text.length + (text.endsWith("½") ? 0.5 : 0); }

/** The score as people write it ("5½"), sized to fit its box by the longer score's length
 * (`chars`); the goals on handicap it includes (A5) said under it ("incl. 1½ on handicap"). */
function score(side, total, onHandicap, chars) {
  const node = byId(`${side}-score`);
  node.textContent = goals(total);
  node.style.setProperty("--chars", String(chars));
  const hcp = byId(`${side}-hcp`);
  hcp.hidden = !onHandicap;
  // The figure a size up: a half's small figures read from the stands too.
  const [before, after] = t("onHandicap", { n: "\u0000" }).split("\u0000");
  hcp.replaceChildren(...(onHandicap ? [before, el("b", { class: "n", text: goals(onHandicap) }), after] : []));
}

/** Each player's yellows in this game, beside his name (a first yellow leaves a trace). */
function yellows(v, side) {
  return v.players.filter((p) => p.side === side && p.yellows > 0).map((p) =>
    el("li", { "data-player": p.id, "data-yellows": p.yellows },
      el("i", { class: "yc", "aria-hidden": "true" }),
      el("b", { class: "n", text: String(p.yellows) }),
      el("span", { class: "who" }, nameOf(p.id))));
}

const ICONS = { yellow: ["i", "yc"], red: ["i", "rc"] };
function eventNode(item, v, tag) {
  const said = describe(item, { w: t, who, team: (side) => (side ? teamName(v, side) : "") });
  if (!said) return null;
  const [name, cls] = ICONS[said.icon] || ["i", `glyph glyph-${said.icon}`];
  return el(tag, { class: "ev", "data-side": said.side || "", "data-icon": said.icon, "data-player": said.player || null },
    el(name, { class: cls, "aria-hidden": "true" }),
    el("span", { class: "words", text: said.parts.filter(Boolean).join(" · ") }));
}

/** The latest event in words, and the two before it while there is room (fitPanels). */
function lastEvents(v) {
  const nodes = events.items.map((item) => eventNode(item, v, "div")).filter(Boolean).reverse();
  byId("events").hidden = !nodes.length;
  if (!nodes.length) { byId("last-event").replaceChildren(); byId("earlier-events").replaceChildren(); return; }
  const [latest, ...earlier] = nodes;
  byId("last-event").replaceChildren(...latest.childNodes);
  byId("last-event").dataset.icon = latest.dataset.icon;
  byId("last-event").dataset.side = latest.dataset.side;
  if (latest.dataset.player) byId("last-event").dataset.player = latest.dataset.player;
  else delete byId("last-event").dataset.player;
  byId("earlier-events").replaceChildren(...earlier.map((n) => el("li", { class: "ev", "data-side": n.dataset.side, "data-icon": n.dataset.icon }, ...n.childNodes)));
}

/** The team's colours on its panel (primary: background, secondary: accent) and its logo. */
function colours(side, team) {
  const c = teamColors(roster, side, team);
  const node = byId(side);
  const ink = c ? inkFor(c.primary) : null;
  node.dataset.plate = String(!!ink && ink.plate);
  for (const target of [node, byId(`box-${side}`)]) {
    target.dataset.colors = String(!!c);
    if (c) {
      target.style.setProperty("--team-bg", c.primary);
      target.style.setProperty("--team-ink", ink.ink);
      target.style.setProperty("--team-accent", c.secondary);
    } else {
      for (const k of ["--team-bg", "--team-ink", "--team-accent"]) target.style.removeProperty(k);
    }
  }
  const logo = byId(`${side}-logo`);
  const src = teamLogo(roster, side, team);
  if (src && logo.getAttribute("src") !== src) logo.src = src;
  if (!src) logo.removeAttribute("src");
  logo.hidden = !src;
}

/**
 * The space serves the game: the box panels and the extras (mounts, carried) take the room
 * their rows need, the score line the rest. Try the roomiest layout first; a denser one
 * when the score line would be left too little. Every density keeps the minimum text sizes
 * (scoreboard.css): a denser layout only shows less beside the text (bars, earlier events).
 */
const DENSITY = [["roomy", true], ["roomy", false], ["medium", false], ["compact", false]];
function fitPanels() {
  const portrait = matchMedia("(max-aspect-ratio: 1/1)").matches;
  body.dataset.layout = portrait ? "portrait" : "landscape";
  const want = (portrait ? 0.42 : 0.4) * innerHeight;
  for (const [density, earlier] of DENSITY) {
    byId("box").dataset.density = density;
    body.dataset.density = density;
    byId("earlier-events").hidden = !earlier;
    if (byId("scoreline").getBoundingClientRect().height >= want) return;
  }
}

/** Set a name and shrink its font until it fits its box (long team names). */
function fit(node, text) {
  if (node.textContent === text && node.dataset.fitted === String(innerWidth)) return;
  node.textContent = text;
  node.style.fontSize = "";
  let size = parseFloat(getComputedStyle(node).fontSize);
  // Never below the board's minimum for secondary text (scoreboard.css, --t-min): 1/30 of
  // the screen's shorter side; a name longer than that is cut with an ellipsis.
  const min = Math.max(size * 0.55, (Math.min(innerWidth, innerHeight) / 30) * 1.03);
  while (node.scrollWidth > node.clientWidth && size > min) {
    size *= 0.94;
    node.style.fontSize = `${size}px`;
  }
  node.dataset.fitted = String(innerWidth);
}

function strength(v, team) {
  const slots = team.lineup.length || 3;
  const pips = el("span", { class: "pips", "aria-hidden": "true" },
    ...Array.from({ length: slots }, (_, i) => el("i", { class: i < team.on_field ? "on" : "off" })));
  if (!team.short.length) return el("span", { class: "full" }, pips, el("span", { text: t("onField", { n: team.on_field }) }));
  // Short-handed means no substitute (a box trip never allows one); say so only when a red's window is over.
  const sub = team.substitute_allowed && team.short.some((s) => s.reason === "sent_off") ? ` · ${t("subAllowed")}` : "";
  return el("span", { class: "short", "data-short": "true" }, pips, el("span", { text: `${t("short")}${sub}` }));
}

function panel(v, side) {
  const rows = [];
  const players = v.players.filter((p) => p.side === side);
  for (const p of players) {
    if (p.box) rows.push(boxRow(p));
  }
  for (const p of players) {
    if (p.sent_off) rows.push(sentOffRow(p));
    else if (p.suspended) rows.push(el("div", { class: "row suspended-row", "data-player": p.id },
      el("span", { class: "who" }, nameOf(p.id)), el("span", { class: "what", text: t("suspended") })));
  }
  if (!rows.length) rows.push(el("div", { class: "empty", text: t("boxEmpty") }));
  return rows;
}

/** Mount countdowns (R17) in their own panel: not a penalty, not in the box. */
function mounts(v) {
  const list = v.players.filter((p) => p.mount);
  byId("mounts").hidden = !list.length;
  byId("mounts").replaceChildren(...(list.length ? [el("h2", { text: t("mounts") }), ...list.map(mountRow)] : []));
}

function cards(p) {
  const icons = p.yellows ? Array.from({ length: Math.min(p.yellows, 4) }, () => el("i", { class: "yc" }))
    : p.box && p.box.kind === "box" ? [el("i", { class: "yc carried" })] : [];
  return el("span", { class: "cards" }, ...icons);
}

function boxRow(p) {
  const b = p.box;
  return el("div", { class: "row box-row", "data-player": p.id, "data-release": b.release },
    el("span", { class: "who" }, cards(p), nameOf(p.id)),
    el("span", { class: "countdown", "data-owed": b.owed_ms }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: b.clause }));
}

function sentOffRow(p) {
  return el("div", { class: "row sentoff-row", "data-player": p.id },
    el("span", { class: "who" }, el("i", { class: "rc" }), nameOf(p.id)),
    el("span", { class: "countdown" }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: p.no_sub ? p.no_sub.clause : "R6" }));
}

function mountRow(p) {
  return el("div", { class: `row mount-row ${p.side}`, "data-player": p.id },
    el("span", { class: "who" }, el("i", { class: "glyph glyph-mount", "aria-hidden": "true" }), nameOf(p.id)),
    el("span", { class: "countdown" }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: "R17" }));
}

/** Suspensions and sit-outs from earlier games served in this one (R9-R16): their own panel. */
function carried(v) {
  const list = v.carried || [];
  byId("carried").hidden = !list.length;
  byId("carried").replaceChildren(...(list.length ? [el("h2", { text: t("carried") }),
    ...list.map((c) => el("div", { class: "row carried-row", "data-player": c.player },
      el("span", { class: "who" }, nameOf(c.player)),
      el("span", { class: "what", text: `${t(`kind_${c.kind}`)}${c.owed_ms ? ` ${mmss(c.owed_ms)}` : ""} · ${t("carriedFrom", { game: label(c.origin_game) })}` }),
      el("span", { class: "clause", text: c.clause })))] : []));
}

// ------------------------------------------------------------------ the ticking parts (every frame)

function setText(node, text) { if (node && node.textContent !== text) node.textContent = text; }

function tick(live) {
  const v = live.view;
  if (!v) return;
  const c = v.clock;
  const remaining = live.clockRemaining();
  setText(byId("clock"), gameClock(remaining, c.running && !live.stale));
  byId("clock").dataset.running = String(c.running);
  // The interval between periods (from the horn to the next start): counted down, in words.
  const iv = v.status === "live" && c.interval ? c.interval : null;
  byId("interval").hidden = !iv;
  body.dataset.interval = String(!!iv);
  setText(byId("interval"), iv ? `${t("interval")} ${mmss(iv.ends_at - live.now())}` : "");
  setText(byId("clock-state"), v.status === "live" && !iv ? (c.running ? t("running") : t("stopped")) : "");
  for (const p of v.players) {
    if (p.box) sitout(live, p.box, document.querySelector(`.box-row[data-player="${CSS.escape(p.id)}"]`), t("returnsNext"));
    if (p.sent_off) {
      const row = document.querySelector(`.sentoff-row[data-player="${CSS.escape(p.id)}"]`);
      if (p.no_sub) sitout(live, p.no_sub, row, t("subNext"), `${t("sentOff")} · ${t("noSub")}`);
      else if (row) {
        setText(row.querySelector(".countdown"), "");
        setText(row.querySelector(".status"), `${t("sentOff")}${p.sub_allowed ? ` · ${t("subAllowed")}` : ""}`);
        row.querySelector(".bar").hidden = true;
      }
    }
    if (p.mount) {
      const row = document.querySelector(`#mounts .mount-row[data-player="${CSS.escape(p.id)}"]`);
      if (!row) continue;
      const left = live.mountRemaining(p.mount);
      const expired = p.mount.expired || left <= 0;
      row.dataset.expired = String(expired);
      setText(row.querySelector(".countdown"), expired ? "" : mmss(left));
      setText(row.querySelector(".status"), expired ? t("mountExpired") : "");
      row.querySelector(".bar i").style.width = `${100 * (1 - left / 300000)}%`;
    }
  }
}

function sitout(live, so, row, doneText, owedText = t("playOwed")) {
  if (!row) return;
  const left = live.sitoutRemaining(so);
  const done = so.release === "next_stoppage" || left <= 0;
  if (row.dataset.eligible !== String(done)) {
    row.dataset.eligible = String(done);
    setTimeout(fitPanels, 0);  // the row's shape changed
  }
  setText(row.querySelector(".countdown"), done ? "" : mmss(left));
  setText(row.querySelector(".status"), done ? doneText : owedText);
  row.querySelector(".bar i").style.width = `${100 * (1 - left / (so.owed_ms || 1))}%`;
}
