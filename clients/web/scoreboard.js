// The arena scoreboard: /scoreboard?game=G[&lang=es]. See live.js for the connection.
// Teams show by their registered name in their colours (the primary colour as the panel's
// background, the secondary as its accent), players as "#2 Ortega"; a raw id only when
// nothing is registered (watch.js, "Names").
import { LiveGame, setup, el, mmss, gameClock, label } from "./live.js";
import { displayToken, playerText, teamColors, teamLogo, teamText } from "./watch.js";

const { game, t } = setup();
const $ = (id) => document.getElementById(id);
const body = document.body;

function message(text) {
  $("message").textContent = text;
  $("message").hidden = !text;
}

if (!game) {
  $("board").hidden = true;
  body.dataset.stale = "false";
  message(t("noGame", { example: `${location.pathname}?game=GAME` }));
} else {
  start(game);
}

function start(gameId) {
  // A display paired by the committee's link (#pair=<token>) uses its token where viewing is not public.
  const live = new LiveGame(gameId, { token: displayToken() });
  document.title = `${gameId} · Arena Stream`;
  $("conn-text").textContent = t("connecting");

  // While a resume is catching up, keep the last frame: draw once it is complete.
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
  $("conn-text").textContent = text;
  $("stale-banner").textContent = live.view && live.stale ? text : "";
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
const teamName = (v, side) => teamText(roster, side, v.teams[side].team, label);

function render(live) {
  const v = live.view;
  if (!v) return;
  roster = live.roster;
  message("");
  body.dataset.ready = "true";
  body.dataset.status = v.status;
  $("event").textContent = [label(v.event), v.arena ? label(v.arena) : ""].filter(Boolean).join(" · ");
  for (const side of ["home", "away"]) {
    const team = v.teams[side];
    colours(side, team.team);
    fit($(`${side}-name`), teamName(v, side));
    $(`${side}-score`).textContent = String(v.score[side]);
    $(`${side}-strength`).replaceChildren(strength(v, team));
    $(`box-${side}`).replaceChildren(...panel(v, side));
  }
  $("period").textContent = periodText(v.clock, v.status);
  carried(v);
}

/** The team's colours on its panel (primary: background, secondary: accent) and its logo. */
function colours(side, team) {
  const c = teamColors(roster, side, team);
  const node = $(side);
  for (const target of [node, $(`box-${side}`)]) {
    target.dataset.colors = String(!!c);
    if (c) {
      target.style.setProperty("--team-bg", c.primary);
      target.style.setProperty("--team-ink", c.ink);
      target.style.setProperty("--team-accent", c.secondary);
    } else {
      for (const k of ["--team-bg", "--team-ink", "--team-accent"]) target.style.removeProperty(k);
    }
  }
  const logo = $(`${side}-logo`);
  const src = teamLogo(roster, side, team);
  if (src && logo.getAttribute("src") !== src) logo.src = src;
  if (!src) logo.removeAttribute("src");
  logo.hidden = !src;
}

/** The largest layout of the penalty panels in which every row fits. */
const DENSITY = [[false, "roomy"], [false, "medium"], [true, "medium"], [true, "compact"], [true, "tiny"]];
function fitPanels() {
  const panels = [$("box-home"), $("box-away")];
  for (const [busy, density] of DENSITY) {
    body.dataset.busy = String(busy);
    $("box").dataset.density = density;
    if (panels.every((p) => p.scrollHeight <= p.clientHeight + 1)) return;
  }
}

/** Set a name and shrink its font until it fits its box (long team names). */
function fit(node, text) {
  if (node.textContent === text && node.dataset.fitted === String(innerWidth)) return;
  node.textContent = text;
  node.style.fontSize = "";
  let size = parseFloat(getComputedStyle(node).fontSize);
  const min = size * 0.55;
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
      el("span", { class: "who", text: who(p.id) }), el("span", { class: "what", text: t("suspended") })));
  }
  for (const p of players) {
    if (p.mount) rows.push(mountRow(p));
  }
  if (!rows.length) rows.push(el("div", { class: "empty", text: t("boxEmpty") }));
  return [el("h2", { text: `${t("box")} · ${teamName(v, side)}` }), ...rows];
}

function cards(p) {
  const icons = p.yellows ? Array.from({ length: Math.min(p.yellows, 4) }, () => el("i", { class: "yc" }))
    : p.box && p.box.kind === "box" ? [el("i", { class: "yc carried" })] : [];
  return el("span", { class: "cards" }, ...icons);
}

function boxRow(p) {
  const b = p.box;
  return el("div", { class: "row box-row", "data-player": p.id, "data-release": b.release },
    el("span", { class: "who" }, cards(p), who(p.id)),
    el("span", { class: "countdown", "data-owed": b.owed_ms }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: b.clause }));
}

function sentOffRow(p) {
  return el("div", { class: "row sentoff-row", "data-player": p.id },
    el("span", { class: "who" }, el("i", { class: "rc" }), who(p.id)),
    el("span", { class: "countdown" }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: p.no_sub ? p.no_sub.clause : "R6" }));
}

function mountRow(p) {
  return el("div", { class: "row mount-row", "data-player": p.id },
    el("span", { class: "who" }, el("i", { class: "horse", text: "♞" }), who(p.id)),
    el("span", { class: "countdown" }),
    el("span", { class: "status" }),
    el("span", { class: "bar" }, el("i")),
    el("span", { class: "clause", text: "R17" }));
}

function carried(v) {
  const list = v.carried || [];
  $("carried").hidden = !list.length;
  if (!list.length) return;
  $("carried").replaceChildren(el("h2", { text: t("carried") }),
    el("ul", {}, ...list.map((c) => el("li", { "data-player": c.player },
      el("b", { text: who(c.player) }),
      ` ${t(`kind_${c.kind}`)}${c.owed_ms ? ` ${mmss(c.owed_ms)}` : ""} · ${t("carriedFrom", { game: c.origin_game })}`,
      el("span", { class: "clause", text: c.clause })))));
}

// ------------------------------------------------------------------ the ticking parts (every frame)

function setText(node, text) { if (node && node.textContent !== text) node.textContent = text; }

function tick(live) {
  const v = live.view;
  if (!v) return;
  const c = v.clock;
  const remaining = live.clockRemaining();
  setText($("clock"), gameClock(remaining, c.running && !live.stale));
  $("clock").dataset.running = String(c.running);
  setText($("clock-state"), v.status === "live" ? (c.running ? t("running") : t("stopped")) : "");
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
      const row = document.querySelector(`.mount-row[data-player="${CSS.escape(p.id)}"]`);
      if (!row) continue;
      const left = live.mountRemaining(p.mount);
      const expired = p.mount.expired || left <= 0;
      row.dataset.expired = String(expired);
      setText(row.querySelector(".countdown"), expired ? "" : mmss(left));
      setText(row.querySelector(".status"), expired ? t("mountExpired") : t("mount"));
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
