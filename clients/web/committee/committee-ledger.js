// Section 5, the suspension ledger: who owes what (a sit-out, a suspension, a yellow status),
// from which game and clause, its status and the game that takes it; what each scheduled game
// will apply when it begins; the committee's increase, decrease and rescind, each with who, when
// and why (a rescinded obligation stays listed, struck through); and the event's end (completed)
// or a team's (eliminated).

import { api, submit } from "./committee-api.js";
import { S, bus, t, el, option, run, reload, formMessage, playerName, teamName, parseMmss, errorText } from "./committee-ui.js";
import { stamp } from "./committee-live.js";
import { translator } from "./committee-i18n.js";
import { $, mmss } from "../shared/common.js";

let obligations = [];
let shown = [];          // the previews read last: [{g, applies} | {g, err}]
let generation = 0;      // the latest refresh: an older one's answers, landing later, are dropped

export function init() {
  const by = $("#ledger-by");
  by.value = S.by;
  by.addEventListener("change", () => { S.by = by.value.trim(); localStorage.setItem("arena.committee.by", S.by); });
  $("#ledger-all").addEventListener("change", draw);
  $("#ledger-refresh").addEventListener("click", () => reload().catch(() => refresh()));
  $("#decision-form").addEventListener("submit", (e) => { e.preventDefault(); decide(); });
  $("#decision-form [data-act=cancel]").addEventListener("click", () => { $("#decision-form").hidden = true; });
  $("#increase-form").addEventListener("submit", (e) => { e.preventDefault(); increase(); });
  $("#complete-form").addEventListener("submit", (e) => { e.preventDefault(); complete(); });
  $("#eliminate-form").addEventListener("submit", (e) => { e.preventDefault(); eliminate(); });
  bus.addEventListener("data", (e) => { const done = refresh(); e.detail?.wait?.push(done); });
  bus.addEventListener("lang", draw);
}

function signer() {
  return S.by || $("#ledger-by").value.trim() || t("ld_by_default");
}

/** Read the ledger and every scheduled game's preview; the "as of" time is when they were
 * asked for, once every part answered. */
export async function refresh() {
  const mine = ++generation;
  const asked = Date.now();
  const [answer, cards] = await Promise.all([
    api("GET", "/api/obligations").then((list) => ({ list }), (err) => ({ err })),
    previews()]);
  if (mine !== generation) return;   // a newer refresh is under way: it shows what is current
  const failed = answer.err;
  const error = $("#ledger-error");
  error.hidden = !failed;
  error._say = failed ? () => errorText(failed) : null;      // said again on a language switch
  error.toggleAttribute("data-say", Boolean(failed));
  if (failed) error.replaceChildren(errorText(failed));
  else obligations = answer.list;
  shown = cards.read;
  draw();
  if (!failed && cards.ok) stamp($("#ledger-asof"), asked);
}

function ofEvent(o) {
  return $("#ledger-all").checked || !S.event || o.origin_event === S.event;
}

function kindText(o) {
  if (o.kind === "sit_out") return `${t("ob_sit_out")} ${mmss(o.owed_ms)}`;
  if (o.kind === "suspension" && o.owed_ms) return `${t("ob_suspension")} · ${t("ld_no_sub", { time: mmss(o.owed_ms) })}`;
  return t(`ob_${o.kind}`);
}

/** One decision of the committee on a row: what, who, when (a <time>) and why. */
function decided(kind, key, d, vars = {}) {
  const when = new Date(d.at);
  const [before, after] = t(key, { ...vars, by: d.by, reason: d.reason, when: "\u0000" }).split("\u0000");
  return el("span", { class: `decided ${kind}`, "data-decided": kind, "data-cause": d.cause }, before,
    el("time", { dateTime: when.toISOString(), text: when.toLocaleString(S.lang, { dateStyle: "short", timeStyle: "short" }) }),
    after ?? "");
}

function draw() {
  const rows = obligations.filter(ofEvent);
  $("#ledger-empty").hidden = rows.length > 0;
  $("#ledger-table").hidden = !rows.length;
  $("#ledger-table tbody").replaceChildren(...rows.map((o) => {
    const open = o.status === "pending";
    // A rescinded obligation stays listed, struck through, with who rescinded it, when and why.
    const gone = o.status === "rescinded";
    return el("tr", { "data-obligation": o.id, "data-player": o.player, "data-status": o.status, class: gone ? "rescinded" : "" },
      el("td", {}, el("b", { text: playerName(o.player) }), el("br"), el("span", { class: "muted", text: teamName(o.team) })),
      el("td", { "data-kind": o.kind }, gone ? el("del", { text: kindText(o) }) : kindText(o)),
      el("td", {}, o.origin_game, el("span", { class: "clause", text: ` ${o.clause}` })),
      el("td", { class: `st st-${o.status}`, text: t(`ob_st_${o.status}`) }),
      el("td", { "data-applied": o.applied_in || "", text: o.applied_in || "—" }),
      el("td", { class: "muted decisions" },
        o.increased ? decided("increased", "ld_increased_by", o.increased)
          : o.by ? `${o.by}: ${o.reason || ""}` : "",
        // A decrease goes beyond Rule 14 (R6 grants only an increase): who, when, why, from what.
        o.decreased ? decided("decreased", "ld_decreased_by", o.decreased,
          { from: mmss(o.decreased.from_ms), to: mmss(o.owed_ms) }) : "",
        gone && o.rescinded ? decided("rescinded", "ld_rescinded_by", o.rescinded) : ""),
      el("td", { class: "actions" },
        open ? el("button", { type: "button", class: "small danger", "data-act": "rescind", text: t("ld_rescind"), onclick: () => openDecision(o, "rescind") }) : "",
        open && o.owed_ms > 0 ? el("button", { type: "button", class: "small", "data-act": "decrease", text: t("ld_decrease"), onclick: () => openDecision(o, "decrease") }) : ""));
  }));
  const ended = S.games.filter((g) => g.status === "ended");
  const f = $("#increase-form").elements;
  const keepGame = f.origin_game.value;
  f.origin_game.replaceChildren(option("", t("ld_pick_game")), ...ended.map((g) => option(g.game, `${g.game}: ${teamName(g.home)} – ${teamName(g.away)}`)));
  f.origin_game.value = keepGame;
  const keepPlayer = f.player.value;
  f.player.replaceChildren(option("", t("ld_pick_player")), ...S.players.map((p) => option(p.player, `${playerName(p.player)} · ${teamName(p.team)}`)));
  f.player.value = keepPlayer;
  const el2 = $("#eliminate-form").elements.team;
  const keepTeam = el2.value;
  const gone = new Set(S.tournament?.eliminated || []);
  el2.replaceChildren(option("", t("ld_pick_team")), ...(S.tournament?.teams || []).filter((x) => !gone.has(x)).map((x) => option(x, teamName(x))));
  el2.value = keepTeam;
  $("#eliminated-list").textContent = gone.size ? `${t("ld_eliminated")}: ${[...gone].map(teamName).join(", ")}` : "";
  const done = Boolean(S.tournament?.completed);
  $("#complete-form button").disabled = done || !S.tournament;
  $("#complete-state").textContent = done ? t("ev_completed") : "";
  drawPreviews();
}

function drawPreviews() {
  $("#previews").replaceChildren(...shown.map(({ g, applies, err }) => el("article", { class: "card preview", "data-game": g.game },
    el("h4", {}, `${teamName(g.home)} – ${teamName(g.away)}`, el("span", { class: "muted", text: ` · ${g.game}` })),
    err ? el("p", { class: "error" }, errorText(err))
      : applies.length ? el("ul", {}, ...applies.map((o) => el("li", { "data-obligation": o.id, "data-player": o.player },
        el("b", { text: playerName(o.player) }), ` · ${kindText(o)} · ${t("ld_from", { game: o.origin_game })}`,
        el("span", { class: "clause", text: ` ${o.clause}` }))))
        : el("p", { class: "muted", "data-empty": "true", text: t("ld_preview_none") }))));
  $("#previews-empty").hidden = shown.length > 0;
}

/** For each scheduled game: what it will apply when it begins (the engine's preview). */
async function previews() {
  const scheduled = S.games.filter((g) => g.status === "scheduled");
  let ok = true;
  const read = await Promise.all(scheduled.map(async (g) => {
    try {
      const p = await api("GET", `/api/games/${encodeURIComponent(g.game)}/preview`);
      return { g, applies: p.applies };
    } catch (err) {
      if (err.code === "game_begun") return null;   // under way since the list was read: it has taken what it owed
      ok = false;
      return { g, err };
    }
  }));
  return { read: read.filter(Boolean), ok };
}

// ------------------------------------------------------------------ the committee's decisions

function openDecision(o, mode) {
  const form = $("#decision-form");
  form.hidden = false;
  form.dataset.mode = mode;
  form.dataset.obligation = o.id;
  form.elements.reason.value = "";
  form.elements.owed.value = mmss(o.owed_ms);
  $("#decision-owed").hidden = mode !== "decrease";
  const title = $("#decision-title");
  title._say = () => t(mode === "rescind" ? "ld_rescind_title" : "ld_decrease_title",
    { player: playerName(o.player), what: kindText(o), game: o.origin_game });
  title.textContent = title._say();
  const button = form.querySelector("button[type=submit]");
  button.dataset.i18n = mode === "rescind" ? "ld_rescind_do" : "ld_decrease_do";
  button.textContent = t(button.dataset.i18n);
  for (const n of form.querySelectorAll(".field-error, .form-msg")) n.remove();
  form.scrollIntoView({ block: "nearest" });
  form.elements.reason.focus();
}

async function decide() {
  const form = $("#decision-form");
  const mode = form.dataset.mode;
  const body = { obligation: form.dataset.obligation, by: signer(), reason: form.elements.reason.value.trim() };
  if (mode === "decrease") {
    const ms = parseMmss(form.elements.owed.value);
    body.owed_ms = Number.isNaN(ms) ? form.elements.owed.value : ms;
  }
  await run(form, async () => {
    needReason(body.reason, mode);
    await submit(`/api/committee/${mode}`, body, mode);
    form.hidden = true;
    await reload();
    formMessage($("#ledger-section"), "ok", () => t(mode === "rescind" ? "ld_rescinded" : "ld_decreased"));
  }, { not_decreasable: "owed_ms", not_a_decrease: "owed_ms", unknown_obligation: "reason", record_closed: "reason" });
}

async function increase() {
  const form = $("#increase-form");
  const f = form.elements;
  const sit = f.sit_out.value.trim() ? parseMmss(f.sit_out.value) : 0;
  const body = { player: f.player.value, origin_game: f.origin_game.value, games: Number(f.games.value || 0),
    sit_out_ms: Number.isNaN(sit) ? f.sit_out.value : sit, by: signer(), reason: f.reason.value.trim() };
  await run(form, async () => {
    needReason(body.reason, "increase");
    await submit("/api/committee/increase", body, "increase");
    formMessage(form, "ok", () => t("ld_increased", { player: playerName(body.player) }));
    f.reason.value = "";
    await reload();
  }, { unknown_player: "player", game_not_over: "origin_game", unknown_game: "origin_game", nothing_to_add: "games" });
}

/** A decision needs a reason: checked here, before anything is sent (the API refuses it too). */
function needReason(reason, mode) {
  const key = `ld_need_reason_${mode}`;
  if (!reason) throw { code: "invalid_field", detail: "at `$.reason`", todo: [translator("en")(key), translator("es")(key)] };
}

async function complete() {
  const form = $("#complete-form");
  if (!confirm(t("ld_complete_confirm", { event: S.event }))) return;
  await run(form, async () => {
    await api("POST", `/api/events/${encodeURIComponent(S.event)}/complete`, {});
    formMessage(form, "ok", () => t("ld_completed"));
    await reload();
  });
}

async function eliminate() {
  const form = $("#eliminate-form");
  const teamId = form.elements.team.value;
  await run(form, async () => {
    if (!teamId) throw { code: "missing_team", detail: t("ld_pick_team"), body: { field: "team" } };
    await api("POST", `/api/events/${encodeURIComponent(S.event)}/eliminate`, { team: teamId });
    formMessage(form, "ok", () => t("ld_eliminated_one", { team: teamName(teamId) }));
    await reload();
  }, { unknown_team: "team", already_eliminated: "team" });
}
