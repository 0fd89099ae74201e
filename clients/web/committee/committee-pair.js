// Section 3, pair the officials' handhelds: for each game, a QR code per role that opens
// /handheld with its token in the fragment (#pair=…, which never reaches a server), the link
// itself for a device that can't scan, and the devices paired so far with a one-click revoke
// (its sockets close everywhere).

import { api } from "./committee-api.js";
import { S, bus, t, el, run, flash, teamName, formMessage, errorText } from "./committee-ui.js";
import { $ } from "../shared/common.js";

const ROLES = ["umpire", "referee", "timekeeper"];
const made = new Map();   // `${game}/${role}` -> the last pairing made (kept across re-renders)
const urls = [];
const known = new Set();  // games drawn before: their cards keep open or closed as the member left them

export function init() {
  bus.addEventListener("data", render);
  bus.addEventListener("lang", render);
}

function render() {
  const box = $("#pair-games");
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.game));
  const opened = (g) => (known.has(g.game) ? open.has(g.game) : g.status !== "ended");
  // Drawn again whenever the console reads again (committee-live.js): a name being typed stays.
  const typed = new Map([...box.querySelectorAll("details[data-game] [name=official]")]
    .map((input) => [input.closest("details").dataset.game, input]));
  const focused = document.activeElement?.name === "official" ? document.activeElement.closest("details")?.dataset.game : null;
  for (const src of urls.splice(0)) URL.revokeObjectURL(src);
  box.replaceChildren(...S.games.map((g) => gameCard(g, opened(g))));
  for (const [game, before] of typed) {
    const input = box.querySelector(`details[data-game="${CSS.escape(game)}"] [name=official]`);
    if (!input) continue;
    input.value = before.value;
    if (game === focused) { input.focus(); input.setSelectionRange(before.selectionStart, before.selectionEnd); }
  }
  $("#pair-empty").hidden = S.games.length > 0;
  for (const g of S.games) {
    if (opened(g)) devices(g.game);
    known.add(g.game);
  }
}

function gameCard(g, open) {
  const official = el("input", { type: "text", name: "official", maxLength: 80, placeholder: t("pr_official_ph") });
  // A role is chosen by its button: Enter in the name field submits nothing.
  const form = el("form", { class: "pair-form", noValidate: true, onsubmit: (e) => e.preventDefault() },
    el("label", { class: "field" }, el("span", { text: t("pr_official") }), official),
    el("div", { class: "role-buttons" }, ...ROLES.map((role) => el("button", {
      type: "button", class: "primary", "data-role": role, text: t("pr_make", { role: t(`role_${role}`) }),
      onclick: () => pair(form, g.game, role, official.value.trim()),
    }))));
  const codes = el("div", { class: "qr-grid" }, ...ROLES.map((role) => qrSlot(g.game, role)));
  const list = el("div", { class: "devices", "data-devices": g.game }, el("p", { class: "muted", text: t("loading") }));
  const details = el("details", { class: "card game-pair", "data-game": g.game, open },
    el("summary", {}, el("b", { text: `${teamName(g.home)} – ${teamName(g.away)}` }),
      el("span", { class: "muted", text: ` · ${g.game}${g.arena ? ` · ${g.arena}` : ""} · ${t(`status_${g.status}`)}` })),
    form, codes,
    el("div", { class: "row-head" }, el("h4", { text: t("pr_devices") }),
      el("button", { type: "button", class: "small", text: t("refresh"), onclick: () => devices(g.game) })),
    list);
  details.addEventListener("toggle", () => { if (details.open) devices(g.game); });
  return details;
}

function qrSlot(game, role) {
  const p = made.get(`${game}/${role}`);
  const slot = el("figure", { class: "qr", "data-role": role });
  if (!p) {
    slot.append(el("figcaption", { class: "muted", text: t(`role_${role}`) }));
    return slot;
  }
  const blob = new Blob([p.qr_svg], { type: "image/svg+xml" });
  const src = URL.createObjectURL(blob);
  urls.push(src);
  slot.append(
    el("img", { src, alt: t("pr_qr_alt", { role: t(`role_${role}`) }), width: 220, height: 220 }),
    el("figcaption", {}, el("b", { text: t(`role_${role}`) }), p.claims?.official ? ` · ${p.claims.official}` : "",
      el("br"), el("a", { class: "pair-link", href: p.url, target: "_blank", rel: "noopener", text: t("pr_link") }),
      " ", el("button", { type: "button", class: "small", text: t("pr_copy"), onclick: () => copy(p.url) })));
  return slot;
}

async function pair(form, game, role, official) {
  await run(form, async () => {
    const body = { game, role };
    if (official) body.official = official;
    const p = await api("POST", "/api/pairings", body);
    made.set(`${game}/${role}`, p);
    const card = document.querySelector(`details.game-pair[data-game="${CSS.escape(game)}"]`);
    card.querySelector(`.qr[data-role=${role}]`).replaceWith(qrSlot(game, role));
    formMessage(form, "ok", () => t("pr_made", { role: t(`role_${role}`) }));
    await devices(game);
  }, { unknown_game: "official", out_of_scope: "official" });
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    flash(() => t("pr_copied"));
  } catch {
    flash(() => t("pr_copy_failed"), "error");
  }
}

/** The devices paired for a game: who, which role, connected now, and Revoke. */
async function devices(game) {
  const box = document.querySelector(`[data-devices="${CSS.escape(game)}"]`);
  if (!box) return;
  let rows;
  try {
    rows = await api("GET", `/api/tokens?game=${encodeURIComponent(game)}`);
  } catch (err) {
    box.replaceChildren(el("p", { class: "error" }, errorText(err)));
    return;
  }
  rows = Array.isArray(rows) ? rows : rows?.tokens || [];
  if (!rows.length) {
    box.replaceChildren(el("p", { class: "muted", text: t("pr_none") }));
    return;
  }
  box.replaceChildren(el("table", { class: "list" },
    el("thead", {}, el("tr", {}, ...["pr_device", "pr_role", "pr_official_h", "pr_issued", "pr_state", ""].map((k) => el("th", { text: k ? t(k) : "" })))),
    el("tbody", {}, ...rows.map((r) => deviceRow(game, r)))));
}

function deviceRow(game, r) {
  const c = r.claims || r;
  const at = r.at ?? r.issued_at;
  const state = r.revoked ? t("pr_revoked") : r.connected ? t("pr_connected", { n: r.connected }) : t("pr_not_connected");
  const revoke = el("button", { type: "button", class: "small danger", "data-act": "revoke", text: t("pr_revoke"),
    disabled: Boolean(r.revoked), onclick: () => revokeToken(game, c, revoke) });
  return el("tr", { "data-jti": c.jti, "data-revoked": String(Boolean(r.revoked)), "data-connected": String(r.connected || 0) },
    el("td", { text: c.sub }), el("td", { text: t(`role_${c.role}`) }), el("td", { text: c.official || "" }),
    el("td", { class: "muted", text: at ? new Date(at > 1e12 ? at : at * 1000).toLocaleTimeString(S.lang) : "" }),
    el("td", { class: "state", text: state }), el("td", {}, revoke));
}

async function revokeToken(game, claims, button) {
  button.disabled = true;
  try {
    const done = await api("POST", "/api/tokens/revoke", { jti: claims.jti, reason: t("pr_revoke_reason") });
    const n = done?.sockets_closed ?? 0;
    flash(() => t("pr_revoked_n", { device: claims.sub, n }));
  } catch (err) {
    flash(() => errorText(err), "error");
    button.disabled = false;
  }
  await devices(game);
}
