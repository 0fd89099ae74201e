// Arena Stream handheld: the alerts panel. An `alert` notice (the rules took a fact they did
// not expect, and say what to check), from this device's acks and from the feed, stays on
// top of the page until the official dismisses it; kept per game in localStorage.
import { L, t } from "./handheld.js";
import { LS, S, esc, h, hhmmss, lsGet, lsSet, setHTML } from "./handheld-state.js";
import { $ } from "../shared/common.js";

/** The same alert reaches this page twice (the ack, then the feed's delta): one key for both. */
const alertKey = (n) => [n.cause, n.code, n.subject || "", n.player || "", n.at].join("|");

/** Keep every new `alert` among ``notices`` until it is dismissed. */
export function addAlerts(notices, game) {
  let added = 0;
  for (const n of notices || []) {
    if (!n || n.type !== "alert" || !n.text) continue;
    const key = alertKey(n);
    if (S.dismissed.includes(key) || S.alerts.some((a) => a.key === key)) continue;
    S.alerts.push({ key, code: n.code, text: n.text, clause: n.clause, cause: n.cause, at: n.at,
      game: n.game || game || S.game });
    added += 1;
  }
  if (!added) return;
  S.alerts.sort((a, b) => a.at - b.at);
  saveAlerts();
  renderAlerts();
  if (navigator.vibrate) navigator.vibrate([200, 100, 200, 100, 200]);
}

export function dismissAlert(key) {
  S.alerts = S.alerts.filter((a) => a.key !== key);
  S.dismissed = S.dismissed.concat(key).slice(-300);
  saveAlerts();
  renderAlerts();
}

function saveAlerts() {
  if (S.game) lsSet(LS.alerts(S.game), JSON.stringify({ alerts: S.alerts, dismissed: S.dismissed }));
}

export function loadAlerts() {
  S.alerts = [];
  S.dismissed = [];
  try {
    const saved = JSON.parse((S.game && lsGet(LS.alerts(S.game))) || "null");
    if (saved) Object.assign(S, { alerts: saved.alerts || [], dismissed: saved.dismissed || [] });
  } catch { /* ignore a damaged copy */ }
}

/** Alerts on top of the page, oldest first. Nodes are kept by key, so an alert that is
 * already shown is not redrawn (nor animated in again) when another arrives. */
export function renderAlerts() {
  const el = $("#alerts");
  const shown = S.claims ? S.alerts.filter((a) => !S.game || a.game === S.game) : [];
  el.hidden = !shown.length;
  document.body.dataset.alerts = String(shown.length);
  let headEl = el.querySelector(".alerts-head");
  if (shown.length > 1) {
    if (!headEl) { headEl = h("p", { class: "alerts-head" }); el.prepend(headEl); }
    headEl.textContent = t("alerts_n", { n: shown.length });
  } else if (headEl) {
    headEl.remove();
  }
  const nodes = new Map([...el.querySelectorAll(".alert")].map((n) => [n.dataset.key, n]));
  const keep = new Set(shown.map((a) => a.key));
  for (const [key, node] of nodes) if (!keep.has(key)) node.remove();
  let before = null;                   // the node the next alert goes after
  for (const a of shown) {
    let node = nodes.get(a.key);
    if (!node) {
      node = h("div", { class: "alert", role: "alert", "data-code": a.code, "data-key": a.key });
      (before ? before.after(node) : headEl ? headEl.after(node) : el.prepend(node));
    }
    setHTML(node, `<p class="alert-text"><b class="alert-label">⚠ ${esc(t("alert"))} · ${esc(hhmmss(a.at))}</b> ${esc(L([a.text.en, a.text.es]))}</p>
      <button type="button" class="alert-ok" data-act="dismiss-alert" data-key="${esc(a.key)}">${esc(t("alert_ok"))}</button>`);
    before = node;
  }
}
