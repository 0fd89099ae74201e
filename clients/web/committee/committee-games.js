// Section 2, schedule games: the two teams from those registered, each side's three in the
// lineup and its substitutes from that team's registered players (numbers and names shown),
// the kind of game, the 5.c(2) shootout option, handicap, arena, periods and period length.
// When the two teams' registered colours clash, the form says so and offers the away team
// another kit for this game (its set-up's `colors`), which every display then shows.

import { submit } from "./committee-api.js";
import { S, bus, t, el, option, offer, run, reload, formMessage, playerName, teamName, parseMmss } from "./committee-ui.js";
import { fromLocal, officialsOf } from "./committee-order.js";
import { entered, hcpMark, hcpText, onHandicap, open as changeHandicap, scoreText } from "./committee-handicap.js";
import { $, goals } from "../shared/common.js";

const SIDES = ["home", "away"];
const KINDS = ["regular", "consolation", "subsidiary_first_round", "shootout"];

export function init() {
  const form = $("#game-form");
  form.addEventListener("submit", (e) => { e.preventDefault(); schedule(); });
  for (const side of SIDES) {
    form.elements[`${side}_team`].addEventListener("change", () => { ownKit(side); fillSide(side, true); kits(true); });
    for (const name of ["kit", "kit_primary", "kit_secondary"]) {
      form.elements[`${side}_${name}`].addEventListener("input", () => kits(false));
    }
    for (const select of form.querySelectorAll(`[data-side=${side}] select.lineup`)) {
      select.addEventListener("change", () => swapStarter(side, select));
    }
  }
  for (const name of ["periods", "hcp_home", "hcp_away"]) form.elements[name].addEventListener("input", preview);
  bus.addEventListener("data", render);
  bus.addEventListener("lang", render);
}

function render() {
  const form = $("#game-form");
  const f = form.elements;
  const entered = S.tournament?.teams || [];
  const teams = entered.length ? S.teams.filter((x) => entered.includes(x.team)) : S.teams;
  for (const side of SIDES) {
    const select = f[`${side}_team`];
    const keep = select.value;
    select.replaceChildren(option("", t("gm_pick_team")), ...teams.map((x) => option(x.team, `${x.name} (${x.short.toUpperCase()})`)));
    select.value = keep;
    fillSide(side, false);
  }
  kits(false);
  const kind = f.kind.value || "regular";
  f.kind.replaceChildren(...KINDS.map((k) => option(k, t(`kind_${k}`), k === kind)));
  if (S.tournament) offer(f.handicap, String(S.tournament.handicap));
  const n = S.games.length + 1;
  offer(f.game, S.event ? `${S.event}-g${n}` : `g${n}`);
  $("#games-table tbody").replaceChildren(...S.games.map((g) => el("tr", { "data-game": g.game },
    el("td", { class: "muted", text: g.game }),
    el("td", { text: `${teamName(g.home)} – ${teamName(g.away)}` }),
    el("td", { text: g.arena || "" }),
    el("td", { text: t(`status_${g.status}`) }),
    el("td", { class: "num", "data-score": scoreText(g.score.home, g.score.away) }, scoreText(g.score.home, g.score.away),
      hcpMark(onHandicap(g.game), "home"), hcpMark(onHandicap(g.game), "away")),
    hcpCell(g))));
  $("#games-empty").hidden = S.games.length > 0;
  preview();
}

/** A game's goals on handicap, and the committee's control to change them until it begins. */
function hcpCell(g) {
  const begun = g.status !== "scheduled";
  return el("td", { class: "hcp-cell", "data-hcp": JSON.stringify(onHandicap(g.game)) },
    el("span", { text: hcpText(onHandicap(g.game), g.home, g.away) }), " ",
    el("button", { type: "button", class: "small", "data-act": "handicap", disabled: begun,
      title: begun ? t("hcp_fixed") : null, text: t("hcp_change"), onclick: () => changeHandicap(g) }),
    begun ? el("span", { class: "muted", "data-why": "begun", text: t("hcp_fixed") }) : "");
}

/** The goals on handicap the game will start with: as entered, else worked out from the event's
 * matrix and the two sides' starters' registered handicaps (as the service will). */
function preview() {
  const form = $("#game-form");
  const f = form.elements;
  const out = form.querySelector(".hcp-preview");
  const names = { home: teamName(f.home_team.value), away: teamName(f.away_team.value) };
  const say = (state, key, vars = {}) => { out.dataset.state = state; out.textContent = t(key, { ...names, ...vars }); };
  let given = null;
  try { given = entered(form); } catch { return say("bad", "gm_hcp_bad"); }
  if (given) {
    return say("entered", "gm_hcp_entered", { score: scoreText(given.home, given.away) });
  }
  const periods = Number(f.periods.value || 4);
  const matrix = S.tournament?.handicap_matrix;
  if (!matrix) return say("open", "gm_hcp_open");
  const row = matrix.find((r) => r.periods === periods);
  if (!row) return say("norow", "gm_hcp_norow", { periods });
  const handicaps = {};
  for (const side of SIDES) {
    const starters = [...form.querySelectorAll(`[data-side=${side}] select.lineup`)].map((s) => s.value).filter(Boolean);
    if (!f[`${side}_team`].value || !starters.length) return say("pick", "gm_hcp_pick");
    const known = starters.map((id) => S.players.find((p) => p.player === id)?.handicap).filter((h) => h != null);
    if (known.length < starters.length) return say("unknown", "gm_hcp_unknown", { n: starters.length - known.length });
    handicaps[side] = known.reduce((a, b) => a + b, 0);
  }
  const given2 = Math.abs(handicaps.home - handicaps.away) * row.goals_per_goal;
  const start = { home: handicaps.home < handicaps.away ? given2 : 0, away: handicaps.away < handicaps.home ? given2 : 0 };
  const vars = { hh: handicaps.home, ah: handicaps.away, score: scoreText(start.home, start.away),
    rate: goals(row.goals_per_goal), periods, team: names[start.home ? "home" : "away"] };
  return say("worked", given2 ? "gm_hcp_worked" : "gm_hcp_level", vars);
}

/** A game of the draw (committee-draw.js): its id, kind and teams, each side's players as registered. */
export function fillFromDraw({ game, kind, home, away }) {
  const form = $("#game-form");
  const f = form.elements;
  f.game.value = game;
  f.game.dataset.offered = "";          // the draw's id, kept as if typed
  f.kind.value = kind;
  if (S.tournament) f.handicap.value = String(S.tournament.handicap);
  f.home_team.value = home;
  f.away_team.value = away;
  for (const side of SIDES) { ownKit(side); fillSide(side, true); }
  kits(true);
}

/** A side's lineup selects and substitute boxes, from its team's registered players. */
function fillSide(side, reset) {
  const form = $("#game-form");
  const teamId = form.elements[`${side}_team`].value;
  const mine = S.players.filter((p) => p.team === teamId && teamId)
    .sort((a, b) => (a.number ?? 99) - (b.number ?? 99) || a.name.localeCompare(b.name));
  const others = S.players.filter((p) => !mine.includes(p));
  const lineup = [...form.querySelectorAll(`[data-side=${side}] select.lineup`)];
  lineup.forEach((select, i) => {
    const keep = reset ? mine[i]?.player || "" : select.value;
    select.replaceChildren(option("", "—"),
      el("optgroup", { label: teamName(teamId) || t("gm_team") }, ...mine.map((p) => option(p.player, playerName(p.player)))),
      el("optgroup", { label: t("gm_others") }, ...others.map((p) => option(p.player, `${playerName(p.player)} · ${teamName(p.team) || "—"}`))));
    select.value = keep;
    select.dataset.was = select.value;
  });
  const subs = $(`[data-side=${side}] .subs`);
  const checked = new Set(reset ? mine.slice(3).map((p) => p.player)
    : [...subs.querySelectorAll("input:checked")].map((i) => i.value));
  subs.replaceChildren(...(mine.length ? mine : []).map((p) => {
    const box = el("input", { type: "checkbox", value: p.player, checked: checked.has(p.player) });
    return el("label", { class: "check" }, box, el("span", { text: playerName(p.player) }));
  }));
  if (!mine.length) subs.append(el("p", { class: "muted", text: teamId ? t("gm_no_players") : t("gm_pick_first") }));
  markLineup(side);
}

/** How far apart two colours look (0: the same; RGB distance, 0-441). */
function apart(a, b) {
  const rgb = (c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const [x, y] = [rgb(a), rgb(b)];
  return Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]);
}

const CLASH = 90;  // main colours closer than this read as one team from the stands

/** The colours each side wears in this game: a kit where its box is ticked, else its registered ones. */
function worn(side) {
  const f = $("#game-form").elements;
  if (f[`${side}_kit`].checked) return { primary: f[`${side}_kit_primary`].value, secondary: f[`${side}_kit_secondary`].value };
  return S.teams.find((x) => x.team === f[`${side}_team`].value)?.colors || null;
}

/** A team just picked for a side wears its own colours: a kit chosen for the game before
 * (another team's) is not carried over; a clash with the new pair offers one again (kits). */
function ownKit(side) {
  $("#game-form").elements[`${side}_kit`].checked = false;
}

/** The kit boxes: a clash of the two teams' colours is named on the away side, and a team just
 * picked into a clash is offered its colours the other way round (or white on its main colour). */
function kits(picked) {
  const f = $("#game-form").elements;
  const registered = (side) => S.teams.find((x) => x.team === f[`${side}_team`].value)?.colors || null;
  const [home, away] = [registered("home"), registered("away")];
  const clashes = Boolean(home && away && apart(home.primary, away.primary) < CLASH);
  if (picked && clashes && !f.away_kit.checked) {
    f.away_kit.checked = true;
    const swapped = apart(away.secondary, home.primary) >= CLASH;
    f.away_kit_primary.value = swapped ? away.secondary : "#ffffff";
    f.away_kit_secondary.value = swapped ? away.primary : home.primary;
  }
  for (const side of SIDES) {
    const box = $(`#game-form [data-side=${side}] .kit`);
    box.querySelector(".kit-pick").hidden = !f[`${side}_kit`].checked;
    const own = registered(side);
    if (!f[`${side}_kit`].checked && own) {
      f[`${side}_kit_primary`].value = own.primary;
      f[`${side}_kit_secondary`].value = own.secondary;
    }
  }
  const still = Boolean(home && away && apart(worn("home").primary, worn("away").primary) < CLASH);
  const warn = $("#game-form [data-side=away] .kit-clash");
  warn.hidden = !clashes && !still;
  warn.dataset.resolved = String(!still);
  const names = { home: teamName(f.home_team.value), away: teamName(f.away_team.value) };
  warn.textContent = warn.hidden ? "" : t(still ? "gm_clash" : "gm_clash_kit", names);
}

/** A starter changed: the player it displaces goes to the substitutes (unless he is still in
 * the lineup, in another slot); the one it brings in leaves them (markLineup). */
function swapStarter(side, select) {
  const was = select.dataset.was;
  select.dataset.was = select.value;
  const lineup = [...document.querySelectorAll(`#game-form [data-side=${side}] select.lineup`)].map((s) => s.value);
  if (was && !lineup.includes(was)) {
    const box = [...document.querySelectorAll(`#game-form [data-side=${side}] .subs input`)].find((b) => b.value === was);
    if (box) box.checked = true;
  }
  markLineup(side);
}

/** A player in the lineup is not also a substitute. */
function markLineup(side) {
  const picked = new Set([...document.querySelectorAll(`#game-form [data-side=${side}] select.lineup`)].map((s) => s.value));
  for (const box of document.querySelectorAll(`#game-form [data-side=${side}] .subs input`)) {
    box.disabled = picked.has(box.value);
    if (box.disabled) box.checked = false;
    box.closest("label").dataset.inLineup = String(box.disabled);
  }
  teamHandicap(side);
}

/** The side's starters' handicaps added up, against the event's team limits (the service says
 * the same at the set-up: a `team_handicap_*` alert). */
function teamHandicap(side) {
  const out = $(`#game-form [data-side=${side}] .team-handicap`);
  const starters = [...document.querySelectorAll(`#game-form [data-side=${side}] select.lineup`)].map((s) => s.value).filter(Boolean);
  if (!starters.length) { out.textContent = ""; out.dataset.state = ""; return; }
  const known = starters.map((id) => S.players.find((p) => p.player === id)?.handicap).filter((h) => h != null);
  const total = known.reduce((a, b) => a + b, 0);
  const min = S.tournament?.team_handicap_min ?? null, max = S.tournament?.team_handicap_max ?? null;
  const state = max !== null && total > max ? "over" : known.length < starters.length ? "unknown"
    : min !== null && total < min ? "under" : "ok";
  const parts = [t("gm_team_handicap", { total })];
  if (state === "over") parts.push(t("gm_team_over", { max }));
  if (state === "under") parts.push(t("gm_team_under", { min }));
  if (known.length < starters.length) parts.push(t("gm_team_unknown", { n: starters.length - known.length }));
  out.textContent = parts.join(" · ");
  out.dataset.state = state;
  out.classList.toggle("warn", state === "over" || state === "under");
  preview();
}

async function schedule() {
  const form = $("#game-form");
  const f = form.elements;
  const teams = {};
  for (const side of SIDES) {
    const players = [...form.querySelectorAll(`[data-side=${side}] select.lineup`)].map((s) => s.value).filter(Boolean);
    const subs = [...form.querySelectorAll(`[data-side=${side}] .subs input:checked`)].map((i) => i.value)
      .filter((p) => !players.includes(p));
    teams[side] = { team: f[`${side}_team`].value, players, subs };
    if (f[`${side}_kit`].checked) teams[side].colors = worn(side);
  }
  const periodMs = parseMmss(f.period.value);
  const body = {
    game: f.game.value.trim(), event: S.event, handicap: Number(f.handicap.value || 0), kind: f.kind.value,
    shootout_option: f.shootout_option.checked, periods: Number(f.periods.value || 4),
    period_ms: Number.isNaN(periodMs) ? f.period.value : periodMs, arena: f.arena.value.trim(), teams,
  };
  // Its place in the order of play, when given: the start time and the officials by name.
  const officials = officialsOf(form);
  if (fromLocal(f.starts_at.value) !== null) body.starts_at = fromLocal(f.starts_at.value);
  if (officials.umpires.length || officials.referee || officials.timekeeper) body.officials = officials;
  await run(form, async () => {
    const given = entered(form);     // left empty: worked out by the service from the matrix
    if (given) body.goals_on_handicap = given;
    for (const side of SIDES) {
      if (!teams[side].team) {
        const err = { code: "missing_team", detail: t("gm_need_team"), body: { field: `teams.${side}.team` } };
        throw err;
      }
    }
    await submit("/api/games", body, "setup");
    formMessage(form, "ok", () => t("gm_done", { game: body.game, home: teamName(teams.home.team), away: teamName(teams.away.team) }));
    f.game.value = "";
    f.hcp_home.value = "";
    f.hcp_away.value = "";
    await reload();
  }, { duplicate_game: "game", same_team: "teams.away.team", duplicate_player: "teams.home.players",
    unknown_event: "game", class_mismatch: "handicap", out_of_scope: "game", event_completed: "game",
    draw_kind: "kind", draw_teams: "teams.away.team", draw_not_ready: "game", draw_event: "game" });
}

