// Goals on handicap (A5) in the console: the goals each game's view says it started with
// (`view.goals_on_handicap`, read from the day view's socket), the mark shown beside a score
// that includes them ("incl. 1½ hcp"), what the games form previews before a game is set up,
// and the committee's change of a game's goals before it begins (`POST
// /api/games/{game}/handicap`: the goals as given, or worked out again; who and why). A
// game's goals changing on the feed reads the console's data again, so every score's mark
// follows.

import { submit, session } from "./committee-api.js";
import { S, bus, t, el, run, reload, formMessage, teamName } from "./committee-ui.js";
import { refreshSoon } from "./committee-live.js";
import { translator } from "./committee-i18n.js";
import { $, goals } from "../shared/common.js";

const SIDES = ["home", "away"];
let watch = null;
const seen = {};      // game -> its goals on handicap as last seen on the feed (JSON)

export function init() {
  const form = $("#handicap-form");
  form.addEventListener("submit", (e) => { e.preventDefault(); change(false); });
  form.querySelector("[data-act=rework]").addEventListener("click", () => change(true));
  form.querySelector("[data-act=cancel]").addEventListener("click", () => { form.hidden = true; });
  bus.addEventListener("data", drawForm);
  bus.addEventListener("lang", drawForm);
}

/** Follow the day view's socket: a game's goals on handicap appearing or changing reads again. */
export function start(dayWatch) {
  watch = dayWatch;
  watch.addEventListener("change", (e) => {
    const id = e.detail?.game;
    const gh = id ? watch.games[id]?.goals_on_handicap ?? null : null;
    const key = JSON.stringify(gh);
    if (!id || seen[id] === key) return;
    const first = !(id in seen);
    seen[id] = key;
    if (!first || gh) refreshSoon();
  });
}

/** The game's goals on handicap as its view has them (null: none, or not known yet). */
export function onHandicap(game) {
  return watch?.games[game]?.goals_on_handicap ?? null;
}

/** The mark beside a side's score that includes goals on handicap ("incl. 1½ hcp"), or "". */
export function hcpMark(gh, side) {
  const n = gh ? Number(gh[side]) || 0 : 0;
  if (!n) return "";
  return el("span", { class: "hcp", "data-hcp": side, title: t("hcp_title", { n: goals(n) }), text: t("hcp_incl", { n: goals(n) }) });
}

/** "1½–0" */
export function scoreText(home, away) {
  return `${goals(home)}–${goals(away)}`;
}

/** What a game's goals on handicap are, in words: "Aiken Arena 1½ · worked out from 7 v 10". */
export function hcpText(gh, home, away) {
  if (!gh) return t("hcp_none");
  const given = SIDES.filter((s) => Number(gh[s]) > 0).map((s) => `${teamName(s === "home" ? home : away)} ${goals(gh[s])}`);
  const how = gh.source === "matrix" ? t("hcp_from", { home: gh.home_handicap, away: gh.away_handicap })
    : t("hcp_by_committee");
  return `${given.join(", ") || t("hcp_level")} · ${how}`;
}

// ------------------------------------------------------------------ the committee's change

/** Open the change form for a game of the games list (`row`: its GET /api/games entry). */
export function open(row) {
  const form = $("#handicap-form");
  form.hidden = false;
  form.dataset.game = row.game;
  const gh = onHandicap(row.game);
  form.elements.home.value = gh ? String(gh.home) : "";
  form.elements.away.value = gh ? String(gh.away) : "";
  form.elements.reason.value = "";
  if (!form.elements.by.value) form.elements.by.value = S.by || session.claims?.official || "";
  for (const n of form.querySelectorAll(".field-error, .form-msg")) n.remove();
  drawForm();
  form.scrollIntoView({ block: "nearest" });
  form.elements.reason.focus();
}

function drawForm() {
  const form = $("#handicap-form");
  const game = form.dataset.game;
  if (form.hidden || !game) return;
  const row = S.games.find((g) => g.game === game);
  const [home, away] = [row?.home, row?.away];
  $("#handicap-title").textContent = t("hcp_title_form", { game, home: teamName(home), away: teamName(away) });
  form.querySelector(".hcp-home-label").textContent = t("hcp_side", { team: teamName(home) });
  form.querySelector(".hcp-away-label").textContent = t("hcp_side", { team: teamName(away) });
  const now = form.querySelector(".hcp-now");
  now.textContent = t("hcp_now", { what: hcpText(onHandicap(game), home, away) })
    + (row && row.status !== "scheduled" ? ` ${t("hcp_begun")}` : "");
  now.dataset.begun = String(Boolean(row && row.status !== "scheduled"));
}

/** Whole or half goals from an input ("" is none); a refusal in words otherwise. */
function halves(input, path) {
  const text = String(input.value).trim();
  const n = text === "" ? 0 : Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 40 || n * 2 !== Math.round(n * 2)) {
    throw { code: "invalid_field", detail: `at \`$.${path}\``, todo: [translator("en")("hcp_need_half"), translator("es")("hcp_need_half")] };
  }
  return n;
}

/** Check the games form's goals on handicap: {home, away} when entered, null when left to the matrix. */
export function entered(form) {
  const [h, a] = [form.elements.hcp_home, form.elements.hcp_away];
  if (String(h.value).trim() === "" && String(a.value).trim() === "") return null;
  return { home: halves(h, "goals_on_handicap.home"), away: halves(a, "goals_on_handicap.away") };
}

function need(path, key) {
  return { code: "invalid_field", detail: `at \`$.${path}\``, todo: [translator("en")(key), translator("es")(key)] };
}

async function change(rework) {
  const form = $("#handicap-form");
  const f = form.elements;
  const game = form.dataset.game;
  const body = { by: f.by.value.trim(), reason: f.reason.value.trim() };
  await run(form, async () => {
    if (!rework) body.goals = { home: halves(f.home, "goals.home"), away: halves(f.away, "goals.away") };
    if (!body.by) throw need("by", "hcp_need_by");
    if (!body.reason) throw need("reason", "hcp_need_reason");
    try {
      await submit(`/api/games/${encodeURIComponent(game)}/handicap`, body, "hcp");
    } catch (err) {
      // Said for this form: what the game's start fixed is its goals, not a ledger's entry.
      if (err.code === "game_begun") err.todo = ["en", "es"].map((lang) => translator(lang)("hcp_refused_begun"));
      throw err;
    }
    f.reason.value = "";
    const said = rework ? () => t("hcp_reworked", { game })
      : () => t("hcp_done", { game, score: scoreText(body.goals.home, body.goals.away) });
    formMessage(form, "ok", said);
    await reload();
  });
}
