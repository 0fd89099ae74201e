// Section 4, the order of play: the day's games by arena and start time, each with its teams,
// kind and officials by name; a game's time and officials changed in place (`game.scheduled`,
// POST /api/games/{game}/schedule); the day printed as one page (the browser's Print), and the
// day sheet: every named official's pairing code for every game of the day, ready to print
// and hand out (each code a device token for that game, role and name: POST /api/pairings).

import { api, submit } from "./committee-api.js";
import { S, bus, t, el, tx, said, keyed, run, reload, formMessage, teamName, errorText } from "./committee-ui.js";
import { $, goals } from "../shared/common.js";

const ROLES = [["umpires", 0, "umpire"], ["umpires", 1, "umpire"], ["referee", null, "referee"], ["timekeeper", null, "timekeeper"]];
const urls = [];

export function init() {
  $("#order-day").addEventListener("change", render);
  $("#order-print").addEventListener("click", () => print());
  $("#order-sheet-make").addEventListener("click", () => daySheet());
  bus.addEventListener("data", render);
  bus.addEventListener("lang", render);
}

// ------------------------------------------------------------------ time

const pad = (n) => String(n).padStart(2, "0");

/** A moment as a datetime-local value (the browser's time zone), and back. */
export function localValue(ms) {
  if (ms === null || ms === undefined) return "";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocal(value) {
  const ms = value ? new Date(value).getTime() : NaN;
  return Number.isNaN(ms) ? null : ms;
}

const dayOf = (ms) => localValue(ms).slice(0, 10);
const clock = (ms) => new Date(ms).toLocaleTimeString(S.lang, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

/** The officials a form's four name fields give (blank ones left out). */
export function officialsOf(form) {
  const f = form.elements;
  const name = (k) => f[k].value.trim();
  const out = { umpires: [name("umpire1"), name("umpire2")].filter(Boolean) };
  if (name("referee")) out.referee = name("referee");
  if (name("timekeeper")) out.timekeeper = name("timekeeper");
  return out;
}

function officialsText(o) {
  if (!o) return "";
  const parts = [];
  if (o.umpires?.length) parts.push(`${t("od_umpires")}: ${o.umpires.join(", ")}`);
  if (o.referee) parts.push(`${t("role_referee")}: ${o.referee}`);
  if (o.timekeeper) parts.push(`${t("role_timekeeper")}: ${o.timekeeper}`);
  return parts.join(" · ");
}

const label = (g) => `${teamName(g.home)} – ${teamName(g.away)}`;
const kindText = (g) => (g.kind && g.kind !== "regular" ? t(`kind_${g.kind}`) : "");

// ------------------------------------------------------------------ the day

function days() {
  return [...new Set(S.games.map((g) => g.roster?.schedule?.starts_at).filter((x) => x != null).map(dayOf))].sort();
}

/** The games of the day shown, by arena then start time; and the games with no time yet. */
function ofDay(day) {
  const timed = S.games.filter((g) => g.roster?.schedule?.starts_at != null && dayOf(g.roster.schedule.starts_at) === day);
  timed.sort((a, b) => a.arena.localeCompare(b.arena) || a.roster.schedule.starts_at - b.roster.schedule.starts_at
    || a.game.localeCompare(b.game));
  return { timed, untimed: S.games.filter((g) => g.roster?.schedule?.starts_at == null) };
}

/** What a game's line of the day shows, and what its day sheet codes were made for. */
const scheduleSig = (g) => JSON.stringify([g.arena, g.roster?.schedule?.starts_at ?? null, g.roster?.schedule?.officials ?? null]);
const rowSig = (g) => JSON.stringify([S.lang, scheduleSig(g), g.status, g.score, g.kind, label(g)]);

// Drawn again whenever the console reads again (committee-live.js): only what changed is
// replaced (keyed: an arena, a game's row, a game of the day sheet); the rest stays as it is.
function render() {
  const pick = $("#order-day");
  const known = days();
  if (!pick.value || (!known.includes(pick.value) && known.length)) pick.value = known[0] || dayOf(Date.now());
  const { timed, untimed } = ofDay(pick.value);
  const title = t("od_title_day", {
    event: S.tournament?.name || S.event,
    day: new Date(`${pick.value}T12:00`).toLocaleDateString(S.lang, { weekday: "long", day: "numeric", month: "long", year: "numeric" }),
  });
  if ($("#order-title").textContent !== title) $("#order-title").textContent = title;
  const arenas = [...new Set(timed.map((g) => g.arena))];
  const cards = keyed($("#order-arenas"), arenas.map((arena) => ({ key: arena, sig: S.lang, make: () =>
    el("div", { class: "card order-arena", "data-arena": arena },
      el("h3", { text: t("od_arena", { arena: arena || "—" }) }),
      el("table", { class: "list order" },
        el("thead", {}, el("tr", {}, ...["od_time", "od_game", "od_officials", "od_state", ""].map((k) => el("th", { text: k ? t(k) : "" })))),
        el("tbody"))) })));
  cards.forEach((card, i) => keyed(card.querySelector("tbody"), timed.filter((g) => g.arena === arenas[i])
    .map((g) => ({ key: g.game, sig: rowSig(g), make: () => row(g) }))));
  $("#order-empty").hidden = timed.length > 0;
  $("#order-untimed").hidden = !untimed.length;
  keyed($("#order-untimed ul"), untimed.map((g) => ({ key: g.game, sig: JSON.stringify([S.lang, label(g)]), make: () =>
    el("li", { "data-game": g.game }, el("span", { text: `${label(g)} · ${g.game}` }), " ", editButton(g)) })));
  drawSheet();
}

function row(g) {
  const s = g.roster.schedule;
  const state = g.status === "scheduled" ? t("status_scheduled") : `${t(`status_${g.status}`)} · ${goals(g.score.home)}–${goals(g.score.away)}`;
  return el("tr", { "data-game": g.game, "data-status": g.status },
    el("td", { class: "num time", text: clock(s.starts_at) }),
    el("td", {}, el("b", { text: label(g) }), el("br"),
      el("span", { class: "muted", text: [g.game, kindText(g)].filter(Boolean).join(" · ") })),
    el("td", { class: "officials", text: officialsText(s.officials) || "—" }),
    el("td", { text: state }),
    el("td", {}, editButton(g)));
}

function editButton(g) {
  return el("button", { type: "button", class: "small", "data-act": "edit", text: t("edit"), onclick: () => edit(g) });
}

/** The game's time and officials in a form of their own, under the day. */
function edit(g) {
  const s = g.roster?.schedule;
  const o = s?.officials || {};
  const input = (name, value, attrs = {}) => el("input", { name, value: value ?? "", autocomplete: "off", maxLength: 80, ...attrs });
  const field = (key, node, path) => el("label", { class: "field grow", "data-path": path }, tx("span", key), node);
  const form = el("form", { class: "card order-edit", "data-game": g.game, noValidate: true },
    el("h3", { text: `${label(g)} · ${g.game}` }),
    el("div", { class: "row" }, field("gm_starts", input("starts_at", localValue(s?.starts_at), { type: "datetime-local" }), "starts_at")),
    el("div", { class: "row" },
      field("gm_umpire1", input("umpire1", o.umpires?.[0]), "officials.umpires"),
      field("gm_umpire2", input("umpire2", o.umpires?.[1]), "officials.umpires")),
    el("div", { class: "row" },
      field("role_referee", input("referee", o.referee), "officials.referee"),
      field("role_timekeeper", input("timekeeper", o.timekeeper), "officials.timekeeper")),
    tx("button", "od_save", { type: "submit", class: "primary" }),
    " ", tx("button", "cancel", { type: "button", onclick: () => form.remove() }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    await run(form, async () => {
      const body = { starts_at: fromLocal(form.elements.starts_at.value), officials: officialsOf(form) };
      await submit(`/api/games/${encodeURIComponent(g.game)}/schedule`, body, "schedule");
      formMessage(form, "ok", () => t("od_saved"));
      await reload();
    }, { unknown_game: "starts_at", out_of_scope: "starts_at" });
  });
  $("#order-edit").replaceChildren(form);
  form.elements.starts_at.focus();
}

function print() {
  window.print();
}

// ------------------------------------------------------------------ the day sheet

/** The day sheet made last: its day, and each game's codes with what they were made for. */
let sheet = null;

/** Every named official's pairing code, game by game: minted now, to print and hand out. */
async function daySheet() {
  const box = $("#order-sheet");
  const button = $("#order-sheet-make");
  const day = $("#order-day").value;
  const { timed } = ofDay(day);
  for (const src of urls.splice(0)) URL.revokeObjectURL(src);
  sheet = null;
  box.replaceChildren(el("p", { class: "muted", "data-i18n": "loading", text: t("loading") }));
  button.disabled = true;
  try {
    const games = [];
    for (const g of timed) {
      const o = g.roster.schedule.officials || {};
      const codes = [];
      for (const [key, i, role] of ROLES) {
        const name = i === null ? o[key] : o[key]?.[i];
        if (!name) continue;
        const p = await api("POST", "/api/pairings", { game: g.game, role, official: name });
        const src = URL.createObjectURL(new Blob([p.qr_svg], { type: "image/svg+xml" }));
        urls.push(src);
        codes.push({ role, name, src });
      }
      games.push({ g, made: scheduleSig(g), codes });
    }
    sheet = { day, games };
    box.replaceChildren();
    drawSheet();
  } catch (err) {
    box.replaceChildren(said("p", { class: "error" }, () => errorText(err)));
  } finally {
    button.disabled = false;
  }
}

/** The sheet, drawn again in place: a game whose time, arena or officials changed since is
 * marked (its codes were made for the schedule it had); another day shown: no sheet. */
function drawSheet() {
  const box = $("#order-sheet");
  if (!sheet) return;       // none made, or being made (its "loading", or its refusal, stays)
  if (sheet.day !== $("#order-day").value) {
    sheet = null;
    for (const src of urls.splice(0)) URL.revokeObjectURL(src);
    box.replaceChildren();
    return;
  }
  keyed(box, [
    { key: "#title", sig: S.lang, make: () => el("h3", { text: t("od_sheet_title") }) },
    { key: "#explain", sig: S.lang, make: () => el("p", { class: "muted", text: t("od_sheet_explain") }) },
    ...sheet.games.map((x) => {
      const now = S.games.find((g) => g.game === x.g.game);
      const changed = !now || scheduleSig(now) !== x.made;
      return { key: x.g.game, sig: JSON.stringify([S.lang, changed, label(x.g)]), make: () => sheetGame(x, changed) };
    }),
  ]);
}

function sheetGame({ g, codes }, changed) {
  return el("section", { class: "sheet-game", "data-game": g.game, "data-changed": String(changed) },
    el("h4", { text: `${clock(g.roster.schedule.starts_at)} · ${g.arena} · ${label(g)}` }),
    changed ? el("p", { class: "error", role: "alert", text: t("od_sheet_changed") }) : "",
    codes.length ? el("div", { class: "qr-grid" }, ...codes.map(({ role, name, src }) =>
      el("figure", { class: "qr", "data-role": role, "data-official": name },
        el("img", { src, alt: t("pr_qr_alt", { role: t(`role_${role}`) }), width: 160, height: 160 }),
        el("figcaption", {}, el("b", { text: t(`role_${role}`) }), ` · ${name}`))))
      : el("p", { class: "muted", text: t("od_no_officials") }));
}
