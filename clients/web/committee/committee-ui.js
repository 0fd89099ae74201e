// What every section of the committee console shares: the data it shows (the event, teams,
// players, games, reloaded together), the words (committee-i18n.js), small DOM helpers, and
// how a refusal is shown: beside the field it is about, with the API's reason, code and clause.

import { api } from "./committee-api.js";
import { translator } from "./committee-i18n.js";
import { pickLang } from "../shared/common.js";
import { el } from "../displays/live.js";
import { refusalWords } from "../shared/refusals.js";

export { el };

export const S = {
  lang: "en",
  t: translator("en"),
  event: "",          // the tournament event this console runs (a committee token's `event`)
  tournament: null,   // its entry in GET /api/events, once set up
  events: [],
  teams: [],
  players: [],
  games: [],          // GET /api/games rows of this event
  by: localStorage.getItem("arena.committee.by") || "",
};

export const bus = new EventTarget();

export function t(key, vars) { return S.t(key, vars); }

export function setLang(lang) {
  S.lang = pickLang(lang);
  S.t = translator(S.lang);
  document.documentElement.lang = S.lang;
  localStorage.setItem("arena.committee.lang", S.lang);
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-ph]")) node.placeholder = t(node.dataset.i18nPh);
  for (const node of document.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
  for (const node of document.querySelectorAll("[data-i18n-n]")) node.textContent = t("csv_nothing", { n: node.dataset.i18nN });
  // What was said before (a form's message, a refusal, a title, a toast): said again in the new language.
  for (const node of document.querySelectorAll(".form-msg, .field-error, h3, [data-result], [data-say]")) {
    if (typeof node._say === "function") node.replaceChildren(...[node._say()].flat());
  }
  bus.dispatchEvent(new Event("lang"));
}

/** Read everything the sections show, then tell them ("data"), and wait for what they read
 * in turn (a listener pushes its promise to the event's `detail.wait`: the ledger's
 * obligations and previews). A part that fails is left as it was. */
export async function reload() {
  const [events, teams, players, games] = await Promise.allSettled([
    api("GET", "/api/events"), api("GET", "/api/teams"), api("GET", "/api/players"), api("GET", "/api/games")]);
  if (events.status === "fulfilled" && Array.isArray(events.value)) {
    S.events = events.value;
    S.tournament = S.events.find((e) => (e.id ?? e.event) === S.event) || null;
  }
  if (teams.status === "fulfilled" && Array.isArray(teams.value)) S.teams = teams.value;
  if (players.status === "fulfilled" && Array.isArray(players.value)) S.players = players.value;
  if (games.status === "fulfilled" && Array.isArray(games.value)) {
    S.games = games.value.filter((g) => !S.event || g.event === S.event);
  }
  const wait = [];
  bus.dispatchEvent(new CustomEvent("data", { detail: { wait } }));
  await Promise.allSettled(wait);
  const failed = [events, teams, players, games].find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

// ------------------------------------------------------------------ names

export function team(id) { return S.teams.find((x) => x.team === id) || null; }
export function player(id) { return S.players.find((x) => x.player === id) || null; }

export function teamName(id) { return team(id)?.name || id || ""; }

/** "#7 Ortega" (or the id when no one is registered under it). */
export function playerName(id, roster = null) {
  const p = roster?.players?.[id] || player(id);
  if (!p) return id;
  return p.number === null || p.number === undefined ? p.name : `#${p.number} ${p.name}`;
}

export function swatch(colors) {
  const c = colors || { primary: "#888888", secondary: "#dddddd" };
  return el("span", { class: "swatch", "aria-hidden": "true", style: `--c1:${c.primary};--c2:${c.secondary}` });
}

/** "Aiken Arena" -> "aiken-arena": an id from a name (any script's letters kept). */
export function slug(text) {
  return String(text || "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 48);
}

export function option(value, text, selected = false) {
  const o = el("option", { text });
  o.value = value;
  o.selected = selected;
  return o;
}

/** A data-i18n'd node for `key`: retranslated on a language switch. */
export function tx(tag, key, attrs = {}) {
  return el(tag, { ...attrs, "data-i18n": key, text: t(key) });
}

// ------------------------------------------------------------------ errors beside their fields

export function clearErrors(form) {
  for (const n of form.querySelectorAll(".field-error")) n.remove();
  for (const n of form.querySelectorAll("[aria-invalid]")) n.removeAttribute("aria-invalid");
  const msg = form.querySelector(".form-msg");
  if (msg) { msg.replaceChildren(); msg.hidden = true; msg.className = "form-msg"; }
}

/** The field an error is about: the API's `field`, the `$.path` a schema error names, or the code's field. */
function fieldOf(form, err, codes) {
  const named = [];
  if (err.body?.field) named.push(String(err.body.field));
  const m = /at \x60\$\.?([^\x60]*)\x60/.exec(err.detail || "");  // \x60: a backtick
  if (m) named.push(m[1].replace(/\[\d+\]/g, ""));
  if (codes[err.code]) named.push(codes[err.code]);
  for (const path of named) {
    const parts = path.split(".");
    for (let n = parts.length; n > 0; n--) {
      const key = parts.slice(0, n).join(".");
      const node = form.querySelector(`[data-path="${CSS.escape(key)}"]`) || form.querySelector(`[name="${CSS.escape(key)}"]`);
      if (node) return node;
    }
  }
  return null;
}

/** The label a form shows for a field ("Reason", "Primary"), or "". */
function labelOf(field) {
  const box = field?.closest("label, .field, fieldset");
  const text = box?.querySelector(":scope > span, :scope > legend")?.textContent || "";
  return text.trim();
}

/** A refusal in the officials' words (refusals.js): the field's `label` and what to do; the
 * rule's clause after it. The API's code stays on the node (`data-code`), not in the words. */
export function errorText(err, ctx = {}) {
  const words = refusalWords(err, S.lang, { todo: err.todo, ...ctx });
  return el("span", { "data-code": err.code || "" }, words, err.clause ? el("span", { class: "code", text: ` (${err.clause})` }) : "");
}

/** Show a refusal beside its field (or at the top of the form when it is about no one field). */
export function showError(form, err, codes = {}) {
  const field = fieldOf(form, err, codes);
  const ctx = field ? { label: labelOf(field), key: field.dataset.path || field.name || "" } : {};
  const note = el("p", { class: "field-error", role: "alert", "data-code": err.code || "" }, errorText(err, ctx));
  note._say = () => errorText(err, { ...ctx, label: field ? labelOf(field) : "" });
  if (field) {
    field.setAttribute("aria-invalid", "true");
    (field.closest("label, .field") || field).after(note);
    return;
  }
  formMessage(form, "error", () => errorText(err), err.code);
}

export function formMessage(form, kind, content, code = "") {
  let msg = form.querySelector(".form-msg");
  if (!msg) {
    msg = el("div", { class: "form-msg", role: "status" });
    form.prepend(msg);
  }
  msg.className = `form-msg ${kind}`;
  msg.dataset.code = code || "";
  msg.hidden = false;
  // Content given as a function (() => t(...)) is said again on a language switch.
  msg._say = typeof content === "function" ? content : null;
  msg.replaceChildren(...[msg._say ? msg._say() : content].flat());
}

/** Run a form's action with its button disabled; a refusal goes beside its field. */
export async function run(form, action, codes = {}) {
  clearErrors(form);
  const buttons = [...form.querySelectorAll("button")];
  for (const b of buttons) b.disabled = true;
  try {
    return await action();
  } catch (err) {
    if (err && err.code) showError(form, err, codes);
    else formMessage(form, "error", String(err?.message || err));
    return undefined;
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

/** A node whose words are `say()`'s, said again on a language switch. */
export function said(tag, attrs, say) {
  const node = el(tag, { ...attrs, "data-say": "" }, ...[say()].flat());
  node._say = say;
  return node;
}

/** Toast-like status for actions outside forms: `say`, a function giving its words (said
 * again on a language switch). */
export function flash(say, kind = "ok") {
  const box = document.getElementById("flash");
  if (!box) return;
  const item = said("div", { class: `flash ${kind}`, role: kind === "error" ? "alert" : "status" }, say);
  box.append(item);
  setTimeout(() => item.remove(), 6000);
}

/**
 * Make `host`'s children the nodes of `items` ({key, sig, make}), in their order: a child of
 * the same key and signature (a string of all it shows) stays, the very same node; one whose
 * signature changed is made again; one no item names goes. Answers the nodes.
 */
export function keyed(host, items) {
  const before = new Map([...host.children].map((n) => [n._key, n]));
  const nodes = items.map(({ key, sig, make }) => {
    const old = before.get(key);
    if (old && old._sig === sig) return old;
    const node = make();
    node._key = key;
    node._sig = sig;
    return node;
  });
  const keep = new Set(nodes);
  for (const n of [...host.children]) if (!keep.has(n)) n.remove();
  nodes.forEach((n, i) => { if (host.children[i] !== n) host.insertBefore(n, host.children[i] || null); });
  return nodes;
}

/**
 * Offer `value` in a text field that a redraw fills in until someone types there (the next
 * game's id, the event's handicap). A redraw comes at any moment (a frame, the poll), so it
 * never writes into the field being typed in, which would splice its value into the typing,
 * nor over what was typed: only into a field empty or still holding its last offer.
 */
export function offer(input, value) {
  if (document.activeElement === input) return;
  if (input.value && input.value !== input.dataset.offered) return;
  input.value = value;
  input.dataset.offered = value;
}

/** "7:30" or "450" (seconds) -> ms; NaN when it reads as neither. */
export function parseMmss(text) {
  const m = /^\s*(\d+)(?::(\d{1,2}))?\s*$/.exec(String(text || ""));
  if (!m) return NaN;
  return m[2] === undefined ? Number(m[1]) * 60000 : (Number(m[1]) * 60 + Number(m[2])) * 1000;
}
