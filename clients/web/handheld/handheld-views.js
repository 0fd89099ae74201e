// Arena Stream handheld: the screens. The score line and the connection pills on top, the
// roster (umpires, referees) or the clock (the timekeeper), the action bar, this device's
// outbox, the game feed and who else is connected; each redrawn only where it changed. The
// running clocks tick locally between updates from the server's clock (the device's sync).
import { L, cardName, clauseText, lang, reasonText, stripCitation, t } from "./handheld.js";
import { REASONS } from "../shared/refusals.js";
import {
  S, ago, clockFigures, entryLogId, esc, hhmmss, isOffline, isOfficial, isTimekeeper, lastUndoable, namedConduct, pendingCards,
  player, registered, serverNow, setHTML, teamColours, teamLetters, teamName, voidedTargets, describe,
} from "./handheld-state.js";
import { $, goals, mmss } from "../shared/common.js";
import { playerText, teamShort } from "../shared/roster.js";
import { renderAlerts } from "./handheld-alerts.js";
import { deviceWatchdog } from "./handheld-device.js";
import { feedState } from "./handheld-feed.js";
import { pendingEntries, waitingElsewhere } from "./handheld-outbox.js";
import * as timer from "./handheld-timer.js";

export function render() {
  document.documentElement.lang = lang;
  document.documentElement.classList.remove("boot");
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  const signedIn = !!S.claims;
  $("#signin").hidden = signedIn;
  const needGame = signedIn && !S.game;
  $("#picker").hidden = !needGame;
  $("#screen").hidden = !signedIn || needGame;
  $("#official").hidden = !signedIn || needGame || !isOfficial();
  $("#timekeeper").hidden = !signedIn || needGame || !isTimekeeper();
  $("#outbox-section").hidden = !signedIn;
  $("#feed-section").hidden = !signedIn || needGame;
  $("#about").hidden = !signedIn;
  $("#actions").hidden = !signedIn || needGame;
  document.body.dataset.role = S.role || "";
  document.body.dataset.status = (S.view && S.view.status) || "";
  document.body.dataset.feed = feedState();
  renderScore();
  renderConn();
  renderAlerts();
  if (needGame) renderPicker();
  if (isOfficial()) renderRoster();
  if (isTimekeeper()) renderTimekeeper();
  if (signedIn && !needGame) renderGamebar();
  renderActions();
  renderOutbox();
  renderFeed();
  renderAbout();
  tickTexts();
  timer.render();
  fitRecent();  // last: once everything on the game screen has its size
}

function tickTexts() {
  for (const el of document.querySelectorAll("[data-tick]")) {
    const v = tickValue(el);
    if (el.textContent !== v) el.textContent = v;
  }
}

function renderScore() {
  const el = $("#scoreline");
  if (!S.claims) { setHTML(el, `<div class="brand">Arena Stream</div>${langButton()}`); return; }
  const v = S.view;
  if (!v) {
    setHTML(el, `<div class="brand">${esc(S.game || S.arena || "")}</div>${langButton()}`);
    return;
  }
  const c = v.clock;
  const period = c.interval && !c.running ? t("interval", { n: c.period + 1 }).split(" · ")[0]
    : c.overtime ? t("overtime") : t("period", { n: c.period });
  setHTML(el, `
    <div class="side home"${colourStyle("home")}><span class="tname" title="${esc(teamName("home"))}">${esc(teamLetters("home"))}</span>${score(v, "home")}${onHandicap(v, "home")}</div>
    <div class="mid">
      <span class="clock ${c.running ? "running" : ""}" data-tick="clock"></span>
      <span class="period">${esc(period)} · ${esc(t("st_" + v.status))}</span>
    </div>
    <div class="side away"${colourStyle("away")}>${score(v, "away")}<span class="tname" title="${esc(teamName("away"))}">${esc(teamLetters("away"))}</span>${onHandicap(v, "away")}</div>
    ${langButton()}`);
  paintColours(el);
}

/** A side's score as people write it ("5½"). */
function score(v, side) {
  return `<span class="goals" data-score="${side}">${goals(v.score[side])}</span>`;
}

/** The goals on handicap a side's score includes (A5), on a line of their own under it. */
function onHandicap(v, side) {
  const hcp = v.goals_on_handicap?.[side] || 0;
  return hcp ? `<small class="hcp" data-hcp="${hcp}">${esc(t("hcp_incl", { n: goals(hcp) }))}</small>` : "";
}

/** A registered team's colours on what marks its side: the primary as the background, the
 * secondary as the accent, the ink by contrast (watch.js, teamColors). In data attributes, which
 * paintColours sets as custom properties: the page's Content-Security-Policy (style-src
 * 'self', stream/live/http/headers.py) refuses a style attribute in markup, not the CSSOM. */
function colourStyle(side) {
  const c = teamColours(side);
  return c ? ` data-colors="true" data-team-bg="${esc(c.primary)}" data-team-ink="${esc(c.ink)}" data-team-accent="${esc(c.secondary)}"` : "";
}

function paintColours(root) {
  for (const node of root.querySelectorAll("[data-colors=true]")) {
    node.style.setProperty("--team-bg", node.dataset.teamBg);
    node.style.setProperty("--team-ink", node.dataset.teamInk);
    node.style.setProperty("--team-accent", node.dataset.teamAccent);
  }
}

function langButton() {
  return `<button type="button" class="lang" data-act="lang" aria-label="${esc(t("lang_name"))}">${esc(t("lang_switch"))}</button>`;
}

/** Up front, one simple state (connected, offline, connecting) and what is left to send; the
 * detail (the device socket heard N s ago · round trip, the feed's heartbeat) behind one tap. */
export function renderConn() {
  const el = $("#conn");
  document.body.dataset.feed = feedState();
  if (!S.claims) { setHTML(el, ""); return; }
  const d = S.dev;
  const devState = { idle: "dev_connecting", connecting: "dev_connecting", syncing: "dev_syncing", online: "dev_online",
    offline: "dev_offline", retry: "dev_retry", denied: "dev_denied" }[d.state] || "dev_connecting";
  const devExtra = d.state === "online" && d.lastHeard
    ? ` · ${t("heard", { ago: ago(d.lastHeard) })}${d.rtt != null ? ` · ${d.rtt} ms` : ""}` : "";
  const feed = feedState();
  const feedKey = { live: "feed_live", stale: "feed_stale", offline: "feed_offline" }[feed] || "feed_connecting";
  const lastBeat = S.live ? S.live.lastFrame : 0;
  const feedExtra = lastBeat ? ` · ${t("beat", { ago: ago(lastBeat) })}` : "";
  const n = pendingEntries().length;
  const simple = d.state === "denied" ? "refused" : d.state === "online" ? "connected"
    : d.state === "offline" || isOffline() ? "offline" : "connecting";
  const open = !!S.connOpen;
  setHTML(el, `
    <button type="button" class="pill conn-${simple}" data-act="conn-detail" data-conn="summary" data-state="${simple}"
      aria-expanded="${open}" aria-controls="conn-detail" title="${esc(t("conn_detail"))}"><i></i>${esc(t("conn_" + simple))}</button>
    <span class="pill ${n ? "pending" : "clear"}" data-conn="outbox" data-pending="${n}"><i></i>${esc(n ? t("pending", { n }) : t("all_sent"))}</span>
    <span id="conn-detail" class="conn-detail"${open ? "" : " hidden"}>
      <span class="pill dev-${esc(d.state)}" data-conn="device" data-state="${esc(d.state)}"><i></i>${esc(t("dev"))}: ${esc(t(devState))}${esc(devExtra)}</span>
      <span class="pill feed-${esc(feed)}" data-conn="feed" data-state="${esc(feed)}"><i></i>${esc(t("feed"))}: ${esc(t(feedKey))}${esc(feedExtra)}</span>
    </span>
    ${d.denied ? `<p class="error">${esc(reasonText(d.denied, false))} ${esc(t("denied_help"))}
      <button type="button" class="relogin" data-act="signout">${esc(t("sign_in_again"))}</button></p>` : ""}`);
}

/** Away from the thumb, at the top of the game screen: undo the last event, void another one,
 * end the game. Each asks for a confirmation. */
function renderGamebar() {
  const ended = S.view && S.view.status === "ended";
  const last = lastUndoable();
  setHTML($("#gamebar"), `
    <button type="button" class="gb undo" data-act="undo" ${last ? "" : "disabled"}>↶ ${esc(t("undo"))}</button>
    <button type="button" class="gb void" data-act="void">${esc(t("void_more"))}</button>
    <button type="button" class="gb end" data-act="end" ${ended ? "disabled" : ""}>${esc(t("act_end"))}</button>`);
  // The last event, then the ones before it, newest first, in the room left above the players
  // (who stay at the bottom, in the thumb's reach): as many as fit, never pushing them down.
  const recent = S.notices.filter((x) => x.text && !["obligation.applied", "game.ready"].includes(x.type))
    .slice(-RECENT).reverse();
  const line = (n) => `<span class="time">${esc(hhmmss(n.at))}</span> ${esc(stripCitation(L([n.text.en, n.text.es])))}`;
  setHTML($("#lastev"), recent.map((n, i) => i === 0
    ? `<p class="ev last"><b>${esc(t("last_event"))}:</b> ${line(n)}</p>`
    : `<p class="ev earlier">${line(n)}</p>`).join(""));
}

const RECENT = 12;  // at most: fitRecent keeps what the room takes

/** Drop the oldest of the earlier lines while the game screen is taller than its room. */
function fitRecent() {
  const screen = $("#screen");
  if (screen.hidden) return;
  const room = parseFloat(getComputedStyle(screen).minHeight) || 0;
  const earlier = [...$("#lastev").querySelectorAll(".ev.earlier")];
  while (earlier.length && screen.getBoundingClientRect().height > room + 1) earlier.pop().remove();
}

function renderPicker() {
  const games = Object.entries(S.arenaGames);
  setHTML($("#picker"), `
    <h1>${esc(t("pick_game", { arena: S.arena }))}</h1>
    ${games.length ? games.map(([g, v]) => `<button type="button" class="big pickgame" data-act="pick-game" data-game="${esc(g)}">
       <b>${esc(g)}</b> <span>${esc(teamShort(S.arenaRosters[g], "home", v.teams.home.team) || v.teams.home.team)} ${goals(v.score.home)} – ${goals(v.score.away)} ${esc(teamShort(S.arenaRosters[g], "away", v.teams.away.team) || v.teams.away.team)} · ${esc(t("st_" + v.status))}</span></button>`).join("")
      : `<p>${esc(t("no_games"))}</p>`}`);
}

function playerTags(p) {
  const tags = [];
  const c = S.view.clock;
  if (p.sent_off) tags.push(`<b class="tag red">${esc(t("tag_sent_off"))}</b>`);
  if (p.suspended) tags.push(`<b class="tag red">${esc(t("tag_susp"))}</b>`);
  if (p.shootout_excluded) tags.push(`<b class="tag">${esc(t("tag_no_shootout"))}</b>`);
  if (p.box) {
    if (p.box.eligible || p.box.release === "next_stoppage") tags.push(`<b class="tag box out">${esc(t("tag_out_next"))}</b>`);
    else tags.push(`<b class="tag box" data-tick="play" data-key="tag_box" data-ms="${p.box.remaining_ms}" data-at="${c.at}"></b>`);
  }
  if (p.no_sub) {
    if (p.no_sub.eligible || p.no_sub.release === "next_stoppage") tags.push(`<b class="tag nosub">${esc(t("tag_sub_ok"))}</b>`);
    else tags.push(`<b class="tag nosub" data-tick="play" data-key="tag_no_sub" data-ms="${p.no_sub.remaining_ms}" data-at="${c.at}"></b>`);
  }
  if (p.mount) tags.push(`<b class="tag mount" data-tick="wall" data-deadline="${p.mount.deadline_at}"></b>`);
  return tags.join("");
}

function playerButton(p, bench) {
  const yellows = Math.min(p.yellows || 0, 4);
  const pips = Array.from({ length: yellows }, () => `<i class="pip"></i>`).join("")
    + (p.carried_yellow ? `<i class="pip carried" title="carried"></i>` : "");
  // This device's cards for him not acked yet: on his tile, so that no one cards him twice.
  const pend = pendingCards(p.id);
  const pendPips = pend.map(({ ev }) => Array.from({ length: ev.color === "red" ? 1 : ev.count || 1 },
    () => `<i class="pip pending ${ev.color === "red" ? "r" : "y"}"></i>`).join("")).join("");
  const pendTags = pend.map(({ entry, ev }) => `<b class="tag cardpending" data-state="${esc(entry.state)}">⏳ ${esc(t(entry.state === "sent" ? "tag_card_unacked" : "tag_card_pending",
    { card: cardName(ev.color, ev.count || 1).toUpperCase() }))}</b>`).join("");
  const cls = ["player", p.side, bench ? "bench" : "", p.sent_off ? "off" : "", p.box ? "inbox" : "", p.on_field ? "" : "notfield",
    pend.length ? "pending-card" : ""].join(" ");
  // "#2 Ortega": the number and the name the umpire knows him by (the id when not registered).
  const r = registered(p.id);
  const name = r ? `${r.number != null ? `<b class="num">#${esc(r.number)}</b> ` : ""}${esc(r.name)}` : esc(p.id);
  return `<button type="button" class="${cls}" data-act="player" data-player="${esc(p.id)}" data-pending-cards="${pend.length}" aria-label="${esc(playerText(S.roster, p.id))}">
    <span class="pid" data-name="${r ? "true" : "false"}">${name}</span><span class="pips" data-yellows="${p.yellows || 0}">${pips}${pendPips}</span>
    <span class="tags">${pendTags}${playerTags(p)}</span></button>`;
}

function renderRoster() {
  const el = $("#roster");
  const v = S.view;
  if (!v) { setHTML(el, `<p class="waiting">${esc(t("no_view"))}</p>`); return; }
  const col = (side) => {
    const team = v.teams[side];
    const ps = (ids) => ids.map((id) => player(id)).filter(Boolean);
    return `<div class="col ${side}"${colourStyle(side)}>
      <h2 class="teamhead"><span>${esc(teamName(side))}</span><small>${esc(t(side))}</small></h2>
      ${ps(team.lineup).map((p) => playerButton(p, false)).join("")}
      ${team.bench.length ? `<div class="benchrow"><small>${esc(t("bench"))}</small>${ps(team.bench).map((p) => playerButton(p, true)).join("")}</div>` : ""}
    </div>`;
  };
  setHTML(el, col("home") + col("away"));
  paintColours(el);
}

function renderTimekeeper() {
  const v = S.view;
  const c = v && v.clock;
  const running = !!(c && c.running);
  const interval = !!(c && c.interval && !running);
  const sub = !c ? t("no_view")
    : interval ? t("interval", { n: c.period + 1 })
    : t("of_periods", { n: c.period, of: c.periods }) + " · " + (running ? t("running") : t("stopped"));
  setHTML($("#tk-clock"), `
    <div class="bigclock ${running ? "running" : "stopped"}" data-interval="${interval}">
      <span data-tick="clock"></span>
      <small>${esc(sub)}</small>
    </div>`);
  setHTML($("#tk"), `
    <div class="tkgrid">
      <button type="button" class="big horn" data-act="horn">${esc(t("tk_horn"))}<small>${esc(t("tk_horn_help"))}</small></button>
      <button type="button" class="big split" data-act="horn-split">${esc(t("tk_split"))}<small>${esc(t("tk_split_help"))}</small></button>
    </div>`);
  timer.renderSettings();
}

function renderActions() {
  const el = $("#actions");
  const ended = S.view && S.view.status === "ended";
  let html = "";
  if (isOfficial()) {
    html = `
      <button type="button" class="act whistle" data-act="whistle" ${ended ? "disabled" : ""}>${esc(t("act_whistle"))}</button>
      <button type="button" class="act goal" data-act="goal" ${ended ? "disabled" : ""}>${esc(t("act_goal"))}</button>`;
  } else if (isTimekeeper()) {
    // the clock's two buttons where the thumb is; the suggested one stands out, both always work
    const running = !!(S.view && S.view.clock && S.view.clock.running);
    html = `
      <button type="button" class="act start ${running ? "" : "suggest"}" data-act="clock.start" ${ended ? "disabled" : ""}>${esc(t("tk_start"))}</button>
      <button type="button" class="act stop ${running ? "suggest" : ""}" data-act="clock.stop" ${ended ? "disabled" : ""}>${esc(t("tk_stop"))}</button>`;
  }
  setHTML(el, html);
}

function entryState(e) {
  if (e.state === "acked") {
    const voided = e.ack && voidedTargets().has(e.ack.log_id);
    return (e.ack && e.ack.seq != null ? t("st_acked", { seq: e.ack.seq }) : t("st_acked_noseq"))
      + (e.ack && e.ack.duplicate ? ` · ${t("st_duplicate")}` : "") + (voided ? ` · ${t("st_voided")}` : "");
  }
  return t("st_" + e.state);
}

function renderOutbox() {
  const el = $("#outbox");
  const shown = S.entries.filter((e) => e.game === S.game || !S.game).slice(-40).reverse();
  if (!shown.length) { setHTML(el, `<li class="empty">${esc(t("outbox_empty"))}</li>`); return; }
  setHTML(el, shown.map((e) => {
    const ev = JSON.parse(e.body);
    const refused = e.state === "refused" && e.error;
    const first = e.state === "acked" && e.notices && e.notices.length
      ? (e.notices.find((n) => n.type === "alert") || e.notices[0]) : null;
    const notice = first && first.text
      ? `<div class="sub${first.type === "alert" ? " alert" : ""}">${first.type === "alert" ? "⚠ " : ""}${esc(stripCitation(L([first.text.en, first.text.es])))}</div>` : "";
    return `<li class="entry st-${esc(e.state)}" data-id="${esc(e.id)}" data-state="${esc(e.state)}" data-type="${esc(e.type)}"
               data-seq="${e.ack && e.ack.seq != null ? e.ack.seq : ""}" data-code="${refused ? esc(e.error.code) : ""}">
      <div class="row"><span class="what">${esc(describe(ev))}</span><span class="state">${esc(entryState(e))}</span></div>
      <div class="meta">${esc(hhmmss(ev.at))}${e.note ? " · " + esc(t("retrying", { why: L(REASONS[e.note]) || e.note })) : ""}</div>
      ${refused ? `<div class="reason"><b>${esc(t("reason"))}:</b> <span class="why">${esc(reasonText(e.error))}</span>${e.error.clause ? ` <span class="clause">(${esc(clauseText(e.error.clause))})</span>` : ""}</div>` : ""}
      ${notice}
      ${canName(e, ev) ? `<button type="button" class="quiet name-conduct" data-act="name-conduct" data-target="${esc(entryLogId(e))}">${esc(t("name_conduct"))}</button>` : ""}
    </li>`;
  }).join(""));
}

/** A card of this device without a conduct yet (not refused, not voided): it may be named. */
function canName(e, ev) {
  if (e.type !== "card" || e.state === "refused" || ev.conduct) return false;
  const logId = entryLogId(e);
  return !voidedTargets().has(logId) && !namedConduct(e.game, logId);
}

function renderFeed() {
  const el = $("#feed");
  const shown = S.notices.filter((n) => n.text && n.type !== "obligation.applied").slice(-12).reverse();
  if (!shown.length) { setHTML(el, `<li class="empty">${esc(t("feed_empty"))}</li>`); return; }
  const voided = voidedTargets();
  const ownIds = new Set(S.entries.map(entryLogId));
  setHTML(el, shown.map((n) => {
    // Another official's card without its conduct: it may be named from here too.
    const nameable = (n.type === "card.recorded" || n.type === "official.carded") && !n.conduct && isOfficial()
      && !ownIds.has(n.cause) && !voided.has(n.cause) && !namedConduct(S.game, n.cause);
    return `<li class="notice n-${esc(n.type.replace(/\./g, "-"))}" data-cause="${esc(n.cause)}">
      <span class="time">${esc(hhmmss(n.at))}</span> ${esc(L([n.text.en, n.text.es]))}
      ${nameable ? `<button type="button" class="quiet name-conduct" data-act="name-conduct" data-target="${esc(n.cause)}">${esc(t("name_conduct"))}</button>` : ""}</li>`;
  }).join(""));
}

export function renderAbout() {
  const c = S.claims;
  if (!c) return;
  const official = (S.dev.welcome && S.dev.welcome.official) || c.official || "—";
  setHTML($("#about"), `
    <p class="who">${esc(t("signed_in_as", { official, role: t("role_" + S.role), device: S.device }))}</p>
    ${c.exp ? `<p class="muted">${esc(t("token_exp", { time: new Date(c.exp * 1000).toLocaleString(lang === "es" ? "es" : "en-GB") }))}</p>` : ""}
    <p class="muted">${esc(t("reload_offline"))}</p>
    ${waitingElsewhere().length ? `<p class="error" data-elsewhere="${waitingElsewhere().length}">${esc(t("elsewhere", {
      n: waitingElsewhere().length, games: [...new Set(waitingElsewhere().map((e) => e.game))].join(", ") }))}</p>` : ""}
    <p class="muted">${esc(t("others"))}:</p>
    <ul class="presence">${(S.presence || []).length ? S.presence.map((d) => `<li data-device="${esc(d.device)}">
      <b>${esc(d.official || d.device)}</b> · ${esc(t("role_" + d.role) || d.role)}${d.device === S.device ? " ✓" : ""}</li>`).join("")
      : `<li class="muted">${esc(t("nobody"))}</li>`}</ul>
    <button type="button" class="quiet" data-act="signout">${esc(t("sign_out"))}</button>`);
}

let toastTimer = 0;
export function toast(text, kind) {
  const el = $("#toast");
  el.textContent = text;
  el.className = "toast " + (kind || "");
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, kind === "bad" ? 6000 : 2200);
}

// ------------------------------------------------------------------ ticking

function tickValue(el) {
  const kind = el.dataset.tick;
  if (kind === "clock") {
    const c = clockFigures();
    if (c && c.interval && !c.running) return mmss(c.interval.ends_at - serverNow());   // the break, counted down
    return c ? mmss(c.left) : "–:––";
  }
  const ms = Number(el.dataset.ms);
  if (kind === "play") {               // box or no-sub time: falls only while the clock runs
    const c = clockFigures();
    const run = c && c.running && !c.stale;
    const left = run ? ms - (serverNow() - Number(el.dataset.at)) : ms;
    return t(el.dataset.key, { t: mmss(left) });
  }
  if (kind === "wall") {               // a mount's 5:00: wall-clock time
    const left = Number(el.dataset.deadline) - serverNow();
    return left > 0 ? t("tag_mount", { t: mmss(left) }) : t("tag_mount_over");
  }
  return el.textContent;
}

/** Twice a second: the watchdog, the running clocks, the connection pills. */
export function tick() {
  deviceWatchdog();
  tickTexts();
  renderConn();
  timer.tick();
}
