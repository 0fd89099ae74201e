// Section 2, the draw: the committee makes its event's draw (a knockout, with or without a
// consolation bracket for the first round's losers, or a round robin) from the teams entered,
// in the seed order it sets; then reads the bracket (rounds as columns: each game's sides,
// state, score and winner, as `GET /api/events/{event}/draw` gives it), sets a game up from
// it ("Set up this game" fills the games form with its id, kind, teams and their players), and
// confirms what the draw proposes: a team's elimination (R15), the event's completion. The
// draw never applies either by itself.

import { api, submit } from "./committee-api.js";
import { fillFromDraw } from "./committee-games.js";
import { S, bus, t, el, option, run, reload, formMessage, teamName, flash, errorText } from "./committee-ui.js";
import { hcpMark, onHandicap, scoreText } from "./committee-handicap.js";
import { $, goals } from "../shared/common.js";

const FORMATS = ["knockout", "round_robin"];
const draw = { bracket: null, event: "", seeds: [] };

export function init() {
  const form = $("#draw-form");
  form.addEventListener("submit", (e) => { e.preventDefault(); make(); });
  form.elements.format.addEventListener("change", () => renderForm());
  bus.addEventListener("data", () => { load().catch((err) => flash(() => errorText(err), "error")); });
  bus.addEventListener("lang", render);
}

/** The event's draw, read again; none yet (the event's `drawn`, GET /api/events): null, unasked. */
async function load() {
  if (!S.event || !S.tournament?.drawn) { draw.bracket = null; render(); return; }
  try {
    draw.bracket = await api("GET", `/api/events/${encodeURIComponent(S.event)}/draw`);
  } catch (err) {
    if (err.code !== "not_drawn" && err.code !== "unknown_event") throw err;
    draw.bracket = null;
  }
  render();
}

function render() {
  renderForm();
  renderProposals();
  renderBracket();
}

// ------------------------------------------------------------------ making the draw

function renderForm() {
  // A completed event is drawn no more (the service would refuse it): only its bracket shows.
  const form = $("#draw-form");
  form.hidden = Boolean(S.tournament?.completed);
  if (form.hidden) return;
  const f = form.elements;
  const format = f.format.value || "knockout";
  f.format.replaceChildren(...FORMATS.map((x) => option(x, t(`dr_format_${x}`), x === format)));
  f.consolation.disabled = format !== "knockout";
  if (f.consolation.disabled) f.consolation.checked = false;
  const entered = (S.tournament?.teams || []).filter((x) => !(S.tournament?.eliminated || []).includes(x));
  const same = draw.event === S.event && draw.seeds.length === entered.length
    && entered.every((x) => draw.seeds.includes(x));
  if (!same) {
    // The seed order: the draw's own once made, else the entry order; a team entered since goes last.
    const base = (draw.bracket?.teams || []).filter((x) => entered.includes(x));
    draw.seeds = [...base, ...entered.filter((x) => !base.includes(x))];
    draw.event = S.event;
  }
  const list = $("#draw-form .seeds");
  const out = new Set([...list.querySelectorAll("input:not(:checked)")].map((i) => i.value));
  list.replaceChildren(...draw.seeds.map((id, i) => el("li", { "data-team": id },
    el("label", { class: "check" }, el("input", { type: "checkbox", value: id, checked: !out.has(id) }),
      el("span", { text: ` ${teamName(id)}` })),
    el("button", { type: "button", class: "small", "aria-label": t("dr_up", { team: teamName(id) }), text: "↑",
      disabled: i === 0, onclick: () => move(i, -1) }),
    el("button", { type: "button", class: "small", "aria-label": t("dr_down", { team: teamName(id) }), text: "↓",
      disabled: i === draw.seeds.length - 1, onclick: () => move(i, 1) }))));
  $("#draw-form .seeds-empty").hidden = draw.seeds.length > 0;
}

function move(i, by) {
  const j = i + by;
  [draw.seeds[i], draw.seeds[j]] = [draw.seeds[j], draw.seeds[i]];
  renderForm();
}

async function make() {
  const form = $("#draw-form");
  const f = form.elements;
  const teams = [...form.querySelectorAll(".seeds input:checked")].map((i) => i.value);
  const body = { format: f.format.value, teams };
  if (f.consolation.checked) body.consolation = true;
  await run(form, async () => {
    if (teams.length < 2) {
      const err = { code: "too_few_teams", detail: t("dr_need_two"), body: { field: "teams" } };
      throw err;
    }
    await submit(`/api/events/${encodeURIComponent(S.event)}/draw`, body, "draw");
    formMessage(form, "ok", () => t("dr_done", { n: teams.length }));
    await reload();
  }, { draw_format: "format", already_drawn: "format", unknown_team: "teams", duplicate_team: "teams",
    already_eliminated: "teams", event_completed: "format", out_of_scope: "format" });
}

// ------------------------------------------------------------------ the bracket

/** What a side of a game of the draw shows: its team, or where it comes from. */
function sideText(side) {
  if (side.team) return teamName(side.team) + (side.bye ? ` (${t("dr_bye")})` : "");
  if (side.winner_of) return t("dr_winner_of", { game: side.winner_of });
  return t("dr_loser_of", { game: side.loser_of });
}

function roundTitle(g) {
  const name = /^r\d+$/.test(g.name) ? t("dr_round_n", { n: g.round })
    : /^rr\d+$/.test(g.name) ? t("dr_round_n", { n: g.round }) : t(`dr_round_${g.name}`);
  return g.bracket === "consolation" ? `${t("dr_consolation_short")} · ${name}` : name;
}

function gameBox(g) {
  const score = g.score ? scoreText(g.score[0], g.score[1]) : "";
  const box = el("div", { class: "draw-game", "data-game": g.game, "data-state": g.state },
    el("div", { class: "muted small", text: `${g.game} · ${t(`kind_${g.kind}`)}` }),
    el("div", { class: "draw-side", "data-won": String(Boolean(g.winner && g.winner === g.home.team)) },
      el("span", { text: sideText(g.home) }), el("span", { class: "num", text: g.score ? goals(g.score[0]) : "" }, hcpMark(onHandicap(g.game), "home"))),
    el("div", { class: "draw-side", "data-won": String(Boolean(g.winner && g.winner === g.away.team)) },
      el("span", { text: sideText(g.away) }), el("span", { class: "num", text: g.score ? goals(g.score[1]) : "" }, hcpMark(onHandicap(g.game), "away"))),
    el("div", { class: "draw-state", text: t(`dr_state_${g.state}`) + (score && g.state === "ended" && g.winner
      ? ` · ${t("dr_won", { team: teamName(g.winner) })}` : "") }));
  if (g.problem) box.append(el("p", { class: "field-error", text: t(`dr_problem_${g.problem}`) }));
  if (g.state === "ready") {
    box.append(el("button", { type: "button", class: "small", text: t("dr_setup"), onclick: () => setUp(g) }));
  }
  return box;
}

function renderBracket() {
  const b = draw.bracket;
  const host = $("#draw-bracket");
  $("#draw-empty").hidden = Boolean(b);
  if (!b) { host.replaceChildren(); return; }
  const columns = new Map();
  for (const g of b.games) {
    const key = `${g.bracket}:${g.round}`;
    if (!columns.has(key)) columns.set(key, { title: roundTitle(g), games: [] });
    columns.get(key).games.push(g);
  }
  const head = el("p", { class: "muted" }, t(`dr_format_${b.format}`) + (b.consolation ? ` · ${t("dr_consolation")}` : ""),
    b.champion ? el("strong", { text: ` · ${t("dr_champion", { team: teamName(b.champion) })}` }) : "");
  const cols = [...columns.values()].map((c) => el("div", { class: "draw-round" },
    el("h3", { text: c.title }), ...c.games.map(gameBox)));
  const parts = [head, el("div", { class: "draw-rounds" }, ...cols)];
  if (b.format === "round_robin") parts.push(standings(b));
  host.replaceChildren(...parts);
}

function standings(b) {
  return el("table", { class: "list draw-standings" },
    el("thead", {}, el("tr", {}, ...["dr_team", "dr_played", "dr_won_h", "dr_lost", "dr_tied", "dr_goals"]
      .map((k) => el("th", { text: t(k) })))),
    el("tbody", {}, ...b.standings.map((s) => el("tr", { "data-team": s.team },
      el("td", { text: teamName(s.team) }), ...[s.played, s.won, s.lost, s.tied, scoreText(s.goals_for, s.goals_against)]
        .map((x) => el("td", { class: "num", text: String(x) }))))));
}

/** Fill the games form with a game of the draw: its id, kind, the event's handicap, its teams. */
function setUp(g) {
  fillFromDraw({ game: g.game, kind: g.kind, home: g.home.team, away: g.away.team });
  $("#game-form").scrollIntoView({ behavior: "smooth", block: "start" });
}

// ------------------------------------------------------------------ proposals

function proposalText(p) {
  if (p.action === "complete") return t("dr_prop_complete");
  return t(`dr_prop_${p.reason}`, { team: teamName(p.team), game: p.game || "", event: p.subsidiary || "" });
}

function renderProposals() {
  const host = $("#draw-proposals");
  const props = draw.bracket?.proposals || [];
  host.hidden = props.length === 0;
  host.replaceChildren(...(props.length ? [el("h3", { text: t("dr_proposals") })] : []),
    ...props.map((p) => el("div", { class: "draw-proposal", "data-action": p.action, "data-team": p.team || "" },
      el("span", { text: proposalText(p) }),
      el("button", { type: "button", class: "primary small", text: t("dr_confirm"), onclick: () => confirmProposal(p) }))));
}

async function confirmProposal(p) {
  const form = $("#draw-form");
  await run(form, async () => {
    const path = `/api/events/${encodeURIComponent(S.event)}/${p.action === "complete" ? "complete" : "eliminate"}`;
    await api("POST", path, p.action === "complete" ? {} : { team: p.team });
    formMessage(form, "ok", () => (p.action === "complete" ? t("ld_completed") : t("ld_eliminated_one", { team: teamName(p.team) })));
    await reload();
  });
}
