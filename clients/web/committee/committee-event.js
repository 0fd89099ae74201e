// Section 1, the event: set up the tournament event (class, handicap, rule readings), register
// teams (name, score-bug letters, colours, logo) and players by form, or many at once from a CSV.
// A registration carries the revision the form was filled from: if someone saved the same team
// or player meanwhile, the service refuses it (stale_registration), and the form shows what
// changed and reloads the current registration.

import { api, submit, ApiError, session } from "./committee-api.js";
import { S, bus, t, el, tx, said, option, run, reload, formMessage, slug, swatch, team, errorText } from "./committee-ui.js";
import { fieldHint } from "../shared/refusals.js";
import { translator } from "./committee-i18n.js";
import { $, goals } from "../shared/common.js";

/** The USPA arena matrix (A5): goals on handicap per goal of difference, by the game's periods. */
const USPA_MATRIX = [{ periods: 2, goals_per_goal: 0.5 }, { periods: 3, goals_per_goal: 0.5 }, { periods: 4, goals_per_goal: 1 }];

export function init() {
  $("#event-form").addEventListener("submit", (e) => { e.preventDefault(); createEvent(); });
  $("#team-form").addEventListener("submit", (e) => { e.preventDefault(); saveTeam(); });
  $("#player-form").addEventListener("submit", (e) => { e.preventDefault(); savePlayer(); });
  $("#csv-form").addEventListener("submit", (e) => { e.preventDefault(); importCsv(); });
  $("#team-form [data-act=new]").addEventListener("click", () => fillTeam(null));
  $("#player-form [data-act=new]").addEventListener("click", () => fillPlayer(null));
  $("#team-form [name=name]").addEventListener("input", (e) => autoId($("#team-form"), "team", e.target.value));
  $("#player-form [name=name]").addEventListener("input", (e) => autoId($("#player-form"), "player", e.target.value));
  $("#event-form [name=name]").addEventListener("input", (e) => {
    const id = $("#event-form [name=event]");
    if (!id.readOnly && id.dataset.typed !== "true") id.value = slug(e.target.value);
  });
  for (const [form, name] of [["#team-form", "team"], ["#player-form", "player"], ["#event-form", "event"]]) {
    $(`${form} [name=${name}]`).addEventListener("input", (e) => { e.target.dataset.typed = "true"; });
  }
  for (const radio of document.querySelectorAll("#event-form [name=hcp_mode]")) radio.addEventListener("change", matrixMode);
  $("#event-form [data-act=add-row]").addEventListener("click", () => addRow({ periods: "", goals_per_goal: 1 }, true));
  for (const row of USPA_MATRIX) addRow(row);
  bus.addEventListener("data", render);
  bus.addEventListener("lang", render);
  bus.addEventListener("lang", () => { for (const tr of document.querySelectorAll("#event-form .matrix-table tbody tr")) sayRow(tr); });
  fillTeam(null);
  fillPlayer(null);
}

/** A new registration's id follows its name until someone types one. */
function autoId(form, name, text) {
  const input = form.elements[name];
  if (form.dataset.revision !== "0" || input.dataset.typed === "true") return;
  input.value = slug(text);
}

function render() {
  const form = $("#event-form");
  const tour = S.tournament;
  if (S.event && document.activeElement !== form.elements.event) form.elements.event.value = S.event;
  form.elements.event.readOnly = Boolean(session.claims?.event);
  form.hidden = Boolean(tour);
  const summary = $("#event-summary");
  summary.hidden = !tour;
  if (tour) {
    const rules = tour.rules || {};
    summary.replaceChildren(
      el("h3", { text: tour.name || tour.id }),
      tour.name ? el("p", { class: "muted", text: tour.id }) : "",
      el("dl", {},
        el("dt", { text: t("ev_class") }), el("dd", { text: t(`class_${tour.class}`) }),
        el("dt", { text: t("ev_handicap") }), el("dd", { text: String(tour.handicap) }),
        el("dt", { text: t("ev_team_limits") }), el("dd", { "data-limits": "",
          text: tour.team_handicap_min == null && tour.team_handicap_max == null ? "—"
            : `${tour.team_handicap_min ?? ""}–${tour.team_handicap_max ?? ""}` }),
        el("dt", { text: t("ev_left_early") }), el("dd", { text: t(`le_${rules.left_early || "sequential"}`) }),
        el("dt", { text: t("ev_third_red") }), el("dd", { text: t(`tr_${rules.third_offense_red_no_sub_ms || 120000}`) }),
        el("dt", { text: t("ev_hcp") }), el("dd", { "data-matrix": JSON.stringify(tour.handicap_matrix ?? null), text: matrixText(tour.handicap_matrix) }),
        el("dt", { text: t("ev_tz_short") }), el("dd", { "data-timezone": tour.timezone ?? "", text: tour.timezone || "UTC" }),
        el("dt", { text: t("ev_public") }), el("dd", { "data-private": String(Boolean(tour.private)),
          text: tour.private ? t("ev_is_private") : t("ev_is_public") }),
        el("dt", { text: t("ev_teams") }), el("dd", { text: (tour.teams || []).map((x) => team(x)?.name || x).join(", ") || "—" }),
        el("dt", { text: t("ev_state") }), el("dd", { "data-completed": String(Boolean(tour.completed)),
          text: tour.completed ? t("ev_completed") : t("ev_open") })));
  }
  const entered = new Set(tour?.teams || []);
  const teams = S.teams.filter((x) => entered.has(x.team)).concat(S.teams.filter((x) => !entered.has(x.team)));
  $("#teams-table tbody").replaceChildren(...teams.map((x) => el("tr", { "data-team": x.team },
    el("td", {}, swatch(x.colors), x.logo ? el("img", { class: "logo", src: `/logos/${x.logo}`, alt: "" }) : ""),
    el("td", { text: x.name }), el("td", { class: "short", text: x.short.toUpperCase() }),
    el("td", { class: "muted", text: x.team }),
    el("td", { text: entered.has(x.team) ? "✓" : "" }),
    el("td", { class: "muted", text: `r${x.revision}` }),
    el("td", {}, el("button", { type: "button", class: "small", text: t("edit"), onclick: () => fillTeam(x) })))));
  $("#teams-empty").hidden = S.teams.length > 0;
  const players = [...S.players].sort((a, b) => String(a.team).localeCompare(String(b.team)) || (a.number ?? 99) - (b.number ?? 99));
  $("#players-table tbody").replaceChildren(...players.map((p) => el("tr", { "data-player": p.player },
    el("td", { class: "num", text: p.number ?? "" }), el("td", { text: p.name }),
    el("td", { text: p.handicap ?? "" }), el("td", {}, p.team ? swatch(team(p.team)?.colors) : "", team(p.team)?.name || p.team || ""),
    el("td", { class: "muted", text: p.player }), el("td", { class: "muted", text: `r${p.revision}` }),
    el("td", {}, el("button", { type: "button", class: "small", text: t("edit"), onclick: () => fillPlayer(p) })))));
  $("#players-empty").hidden = S.players.length > 0;
  const select = $("#player-form [name=team]");
  const keep = select.value;
  select.replaceChildren(option("", t("pl_no_team")), ...S.teams.map((x) => option(x.team, `${x.name} (${x.short.toUpperCase()})`)));
  select.value = keep;
  $("#csv-form [name=event]").value = S.event;
}

// ------------------------------------------------------------------ the event

async function createEvent() {
  const form = $("#event-form");
  const f = form.elements;
  const body = {
    event: f.event.value.trim(), name: f.name.value.trim() || null, class: f.class.value, handicap: numberOr(f.handicap.value),
    team_handicap_min: numberOr(f.team_min.value), team_handicap_max: numberOr(f.team_max.value),
    teams: [], rules: { left_early: f.left_early.value, third_offense_red_no_sub_ms: Number(f.third_red.value) },
    timezone: f.timezone.value.trim() || (Intl.DateTimeFormat().resolvedOptions().timeZone ?? null),
    private: f.private.checked,
  };
  await run(form, async () => {
    body.handicap_matrix = f.hcp_mode.value === "matrix" ? matrixRows() : null;
    await submit("/api/events", body, "event");
    S.event = body.event;
    localStorage.setItem("arena.committee.event", S.event);
    formMessage(form, "ok", () => t("ev_created"));
    await reload();
  }, { duplicate_event: "event", unknown_event: "event", out_of_scope: "event", bad_matrix: "handicap_matrix",
      bad_timezone: "timezone" });
}

// ------------------------------------------------------------------ the handicap matrix (A5)

/** "Handicap event: 2 periods ½ · 3 periods ½ · 4 periods 1 per goal of difference", or none. */
function matrixText(matrix) {
  if (!matrix) return t("ev_hcp_none");
  return t("ev_hcp_rows", { rows: matrix.map((r) => t("ev_hcp_row", { periods: r.periods, rate: goals(r.goals_per_goal) })).join(" · ") });
}

function matrixMode() {
  $("#event-form .matrix").hidden = $("#event-form").elements.hcp_mode.value !== "matrix";
}

/** A row of the matrix table: periods, goals per goal of difference (in halves), remove. */
function addRow(r, focus = false) {
  const periods = el("input", { type: "number", min: 1, max: 12, step: 1, value: r.periods, class: "m-periods", inputMode: "numeric" });
  const rate = el("input", { type: "number", min: 0.5, max: 40, step: 0.5, value: r.goals_per_goal, class: "m-rate", inputMode: "decimal" });
  const tr = el("tr", {},
    el("td", {}, periods),
    el("td", {}, rate, el("span", { class: "rate-says" })),
    el("td", {}, el("button", { type: "button", class: "small", "data-act": "remove-row", onclick: () => tr.remove() })));
  periods.addEventListener("input", () => sayRow(tr));
  rate.addEventListener("input", () => sayRow(tr));
  $("#event-form .matrix-table tbody").append(tr);
  sayRow(tr);
  if (focus) periods.focus();
}

/** A row's labels in the current language, and its rate as people write it (½). */
function sayRow(tr) {
  const [periods, rate] = [tr.querySelector(".m-periods"), tr.querySelector(".m-rate")];
  periods.setAttribute("aria-label", t("ev_hcp_periods"));
  rate.setAttribute("aria-label", t("ev_hcp_rate"));
  const n = Number(rate.value);
  tr.querySelector(".rate-says").textContent = rate.value !== "" && Number.isFinite(n)
    ? t("ev_hcp_says", { rate: goals(n) }) : "";
  tr.querySelector("[data-act=remove-row]").textContent = t("ev_hcp_remove");
}

/** The matrix as entered; a refusal in words when a row is not whole periods and half goals. */
function matrixRows() {
  const rows = [...document.querySelectorAll("#event-form .matrix-table tbody tr")].map((tr) => ({
    periods: Number(tr.querySelector(".m-periods").value), goals_per_goal: Number(tr.querySelector(".m-rate").value) }));
  const fine = (r) => Number.isInteger(r.periods) && r.periods >= 1 && r.periods <= 12
    && r.goals_per_goal > 0 && r.goals_per_goal <= 40 && r.goals_per_goal * 2 === Math.round(r.goals_per_goal * 2);
  const key = !rows.length ? "ev_hcp_need_row" : rows.every(fine) ? "" : "ev_hcp_need_valid";
  if (key) throw { code: "invalid_field", detail: "at `$.handicap_matrix`", todo: [translator("en")(key), translator("es")(key)] };
  return rows;
}

function numberOr(text) {
  const s = String(text).trim();
  return s === "" ? null : Number(s);
}

// ------------------------------------------------------------------ teams

function fillTeam(x) {
  const form = $("#team-form");
  const f = form.elements;
  form.dataset.revision = String(x?.revision ?? 0);
  f.team.value = x?.team || "";
  f.team.readOnly = Boolean(x);
  f.team.dataset.typed = "false";
  f.name.value = x?.name || "";
  f.short.value = x?.short || "";
  f.primary.value = x?.colors?.primary || "#1f4fb4";
  f.secondary.value = x?.colors?.secondary || "#ffffff";
  f.logo.value = "";
  form.dataset.logo = x?.logo || "";
  f.enter.checked = !x || (S.tournament?.teams || []).includes(x.team) || !S.tournament;
  const title = $("#team-form-title");
  title.textContent = x ? t("tm_edit", { name: x.name }) : t("tm_new");
  title.dataset.i18n = x ? "" : "tm_new";   // retranslated on a language switch
  title._say = x ? () => t("tm_edit", { name: x.name }) : null;
  $("#team-logo-now").replaceChildren(x?.logo ? el("img", { class: "logo", src: `/logos/${x.logo}`, alt: t("tm_logo") }) : "");
  for (const n of form.querySelectorAll(".field-error")) n.remove();
}

async function saveTeam() {
  const form = $("#team-form");
  const f = form.elements;
  const id = f.team.value.trim() || slug(f.name.value);
  await run(form, async () => {
    let logo = form.dataset.logo || null;
    const file = f.logo.files[0];
    if (file) {
      try {
        const up = await api("POST", `/api/teams/${encodeURIComponent(id)}/logo`, { raw: file, type: file.type || "application/octet-stream" });
        logo = up.logo;
      } catch (err) {
        if (err instanceof ApiError && !err.body.field) err.body.field = "logo";
        throw err;
      }
    }
    const body = { team: id, name: f.name.value.trim(), short: f.short.value.trim(),
      colors: { primary: f.primary.value, secondary: f.secondary.value }, logo,
      event: f.enter.checked && S.event ? S.event : null, revision: Number(form.dataset.revision) };
    try {
      await submit("/api/teams", body, "team");
    } catch (err) {
      if (err.code === "stale_registration") await stale(form, err, `/api/teams/${encodeURIComponent(id)}`, fillTeam);
      throw err;
    }
    await reload();
    fillTeam(team(id));
    formMessage(form, "ok", () => t("tm_saved", { name: body.name }));
  }, { unknown_event: "enter", event_completed: "enter", duplicate_event: "enter", too_large: "logo", unsupported_media: "logo" });
}

/** Someone saved the same registration meanwhile: show what changed, load the current one. */
async function stale(form, err, path, fill) {
  try {
    const doc = await api("GET", path);
    fill(doc.current);
  } catch { /* the refusal below says enough */ }
  await reload().catch(() => {});
  // What changed (the service's list of the fields, before → now) after the lead, in words.
  err.todo = ["en", "es"].map((lang) => `${translator(lang)("stale_lead")} ${err.detail}`);
  err.body.field = "";
  form.dataset.stale = "true";
}

// ------------------------------------------------------------------ players

function fillPlayer(p) {
  const form = $("#player-form");
  const f = form.elements;
  form.dataset.revision = String(p?.revision ?? 0);
  f.player.value = p?.player || "";
  f.player.readOnly = Boolean(p);
  f.player.dataset.typed = "false";
  f.name.value = p?.name || "";
  f.number.value = p?.number ?? "";
  f.handicap.value = p?.handicap ?? "";
  f.team.value = p?.team || f.team.value || "";
  const title = $("#player-form-title");
  title.textContent = p ? t("pl_edit", { name: p.name }) : t("pl_new");
  title.dataset.i18n = p ? "" : "pl_new";
  title._say = p ? () => t("pl_edit", { name: p.name }) : null;
  for (const n of form.querySelectorAll(".field-error")) n.remove();
}

async function savePlayer() {
  const form = $("#player-form");
  const f = form.elements;
  const id = f.player.value.trim() || slug(f.name.value);
  const body = { player: id, name: f.name.value.trim(), number: numberOr(f.number.value),
    handicap: numberOr(f.handicap.value), team: f.team.value || null, revision: Number(form.dataset.revision) };
  await run(form, async () => {
    try {
      await submit("/api/players", body, "player");
    } catch (err) {
      if (err.code === "stale_registration") await stale(form, err, `/api/players/${encodeURIComponent(id)}`, fillPlayer);
      throw err;
    }
    await reload();
    const keepTeam = body.team;
    fillPlayer(null);
    f.team.value = keepTeam || "";
    formMessage(form, "ok", () => t("pl_saved", { name: body.name }));
  }, { unknown_team: "team" });
}

// ------------------------------------------------------------------ CSV import

async function importCsv() {
  const form = $("#csv-form");
  const file = form.elements.file.files[0];
  const out = $("#csv-result");
  out.replaceChildren();
  await run(form, async () => {
    if (!file) throw new ApiError(400, { code: "no_file", detail: t("csv_pick"), field: "file" });
    const event = S.event ? `?event=${encodeURIComponent(S.event)}` : "";
    try {
      const done = await api("POST", `/api/rosters/import${event}`, { raw: file, type: "text/csv" });
      out.replaceChildren(el("p", { class: "ok", "data-result": "imported",
        text: t("csv_done", { teams: done.teams, players: done.players, unchanged: done.unchanged }) }));
      out.firstChild._say = () => t("csv_done", { teams: done.teams, players: done.players, unchanged: done.unchanged });
      form.reset();
      await reload();
    } catch (err) {
      if (err.code !== "invalid_csv") throw err;
      const rows = err.body.rows || [];
      out.replaceChildren(
        el("p", { class: "error", "data-result": "refused", role: "alert", "data-i18n-n": rows.length, text: t("csv_nothing", { n: rows.length }) }),
        said("p", { class: "muted" }, () => errorText(err)),
        el("table", { class: "csv-errors" },
          el("thead", {}, el("tr", {}, tx("th", "csv_line"), tx("th", "csv_field"), tx("th", "csv_reason"))),
          el("tbody", {}, ...rows.map((r) => el("tr", { "data-line": r.line },
            el("td", { class: "num", text: r.line }), el("td", { text: r.field || "" }),
            // The column's own words when there are some (the service's reason stays in the title).
            said("td", { title: r.reason }, () => fieldHint(r.field, S.lang) || r.reason))))));
    }
  }, { no_file: "file", unknown_event: "file", event_completed: "file" });
}

