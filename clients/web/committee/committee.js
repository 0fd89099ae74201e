// The tournament committee's console: /committee[?lang=es]. Sign in by pasting a committee
// token (kept in this browser's localStorage and sent only in the Authorization header); then
// seven sections, one per tab: the event and its rosters, the games, the handhelds' pairing,
// the order of play, the day live, the suspension ledger, and the exports. Each section is its
// own module (committee-*.js); committee-ui.js holds what they share, committee-live.js keeps
// them current (from the day view's socket, open while signed in; a tab switch and the page
// showing read again too; a slow poll for what the socket can't see).

import { api, restore, signIn, signOut, session, ApiError } from "./committee-api.js";
import { S, bus, t, setLang, reload, run, flash, errorText } from "./committee-ui.js";
import * as eventSection from "./committee-event.js";
import * as gamesSection from "./committee-games.js";
import * as drawSection from "./committee-draw.js";
import * as pairSection from "./committee-pair.js";
import * as orderSection from "./committee-order.js";
import * as daySection from "./committee-day.js";
import * as ledgerSection from "./committee-ledger.js";
import * as exportSection from "./committee-export.js";
import * as handicap from "./committee-handicap.js";
import * as live from "./committee-live.js";
import { $ } from "../shared/common.js";

const TABS = ["event", "games", "pair", "order", "day", "ledger", "export"];

const params = new URLSearchParams(location.search);
setLang(params.get("lang") || localStorage.getItem("arena.committee.lang") || navigator.language);

for (const m of [eventSection, gamesSection, drawSection, pairSection, orderSection, daySection, ledgerSection, exportSection, handicap]) m.init();

$("#lang").addEventListener("click", () => setLang(S.lang === "es" ? "en" : "es"));
$("#signout").addEventListener("click", () => {
  signOut();
  location.reload();
});
$("#signin-form").addEventListener("submit", (e) => { e.preventDefault(); trySignIn(); });
$("#event-pick").addEventListener("change", (e) => chooseEvent(e.target.value));
for (const tab of document.querySelectorAll("#tabs [data-tab]")) {
  tab.addEventListener("click", () => { show(tab.dataset.tab); live.refreshSoon(); });
}
addEventListener("hashchange", () => { show(location.hash.slice(1)); live.refreshSoon(); });
bus.addEventListener("data", header);
bus.addEventListener("lang", header);

if (restore()) start();
else signInScreen();

function signInScreen(reason = null) {
  document.body.dataset.signedIn = "false";
  $("#signin").hidden = false;
  $("#console").hidden = true;
  if (reason) {
    const form = $("#signin-form");
    run(form, async () => { throw reason; }, { unauthorized: "token", forbidden: "token", bad_token: "token" });
  }
  $("#token-input").focus();
}

async function trySignIn() {
  const form = $("#signin-form");
  const token = $("#token-input").value.trim();
  await run(form, async () => {
    if (!token) throw new ApiError(400, { code: "no_token", detail: t("si_paste"), field: "token" });
    signIn(token);
    try {
      await api("GET", "/api/events");     // the token is good, and of a role that may run an event
    } catch (err) {
      signOut();
      throw err;
    }
    $("#token-input").value = "";
    await start();
  }, { unauthorized: "token", forbidden: "token", no_token: "token" });
}

async function start() {
  const c = session.claims || {};
  S.event = c.event || localStorage.getItem("arena.committee.event") || "";
  document.body.dataset.signedIn = "true";
  document.body.dataset.role = c.role || "";
  $("#signin").hidden = true;
  $("#console").hidden = false;
  show(TABS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "event");
  const watch = daySection.start();
  handicap.start(watch);
  live.start(watch);
  try {
    await reload();
    if (!S.event && c.role === "admin" && S.events.length) {
      // An admin signing in runs the last event listed until it picks another (or "New event…").
      const last = S.events[S.events.length - 1];
      S.event = last.id;
      await reload();
    }
  } catch (err) {
    if (err.status === 401 || err.status === 403) {
      signOut();
      signInScreen(err);
      return;
    }
    flash(() => errorText(err), "error");
  }
  document.body.dataset.ready = "true";
}

function chooseEvent(event) {
  S.event = event;
  localStorage.setItem("arena.committee.event", event);
  reload().catch((err) => flash(() => errorText(err), "error"));
}

function show(tab) {
  if (!TABS.includes(tab)) return;
  for (const name of TABS) {
    $(`#${name}-section`).hidden = name !== tab;
    const button = $(`#tabs [data-tab=${name}]`);
    button.setAttribute("aria-selected", String(name === tab));
  }
  if (location.hash.slice(1) !== tab) history.replaceState(null, "", `#${tab}`);
}

function header() {
  const c = session.claims || {};
  $("#who").textContent = c.sub ? t("si_who", { sub: c.sub, role: t(`role_${c.role}`) }) : "";
  const pick = $("#event-pick");
  const admin = c.role === "admin";
  pick.hidden = !admin;
  $("#event-name").hidden = admin;
  $("#event-name").textContent = S.tournament?.name || S.event || t("ev_none");
  if (admin) {
    const ids = S.events.map((e) => e.id);
    if (S.event && !ids.includes(S.event)) ids.push(S.event);
    const names = Object.fromEntries(S.events.map((e) => [e.id, e.name]));
    pick.replaceChildren(new Option(t("ev_new"), ""), ...ids.map((id) => new Option(names[id] || id, id, false, id === S.event)));
    pick.value = S.event;
  }
  $("#lang").textContent = S.lang === "es" ? "English" : "Español";
}
