// Arena Stream handheld: the sheets an action opens (a modal <dialog>): what to do with a
// player, a card (colour, conduct, penalty), a goal, a substitution, a mount, a post-game
// card, a void (a recent event, then a confirmation) and the end of the game. Each sheet is
// a function that draws it, redrawn when the language changes; its Record button puts the
// event in the outbox.
import { CONDUCTS, cardName, conductLabel, lang, t } from "./handheld.js";
import { S, h, hhmmss, lastUndoable, pendingCards, player, recentEvents, sideOf, teamName, who } from "./handheld-state.js";
import { $ } from "../shared/common.js";
import { record } from "./handheld-outbox.js";

const sheet = () => $("#sheet");

export function openSheet(build) {
  S.sheet = build;
  drawSheet();
  const d = sheet();
  if (!d.open) d.showModal();
}
export function drawSheet() { if (S.sheet) sheet().replaceChildren(S.sheet()); }
function closeSheet() { S.sheet = null; const d = sheet(); if (d.open) d.close(); d.replaceChildren(); }
function cancelSheet() { S.actionAt = null; closeSheet(); }

function head(title, sub) {
  return h("div", { class: "sheet-head" }, h("h2", {}, title), sub ? h("p", { class: "muted" }, sub) : null);
}

function choices(opts, value, onPick, cls) {
  const wrap = h("div", { class: "choices " + (cls || ""), role: "radiogroup" });
  for (const o of opts) {
    const b = h("button", { type: "button", class: "opt " + (o.cls || ""), role: "radio",
      "aria-checked": String(o.value === value), "data-value": String(o.value), ...(o.attrs || {}) }, o.label);
    b.addEventListener("click", () => {
      for (const x of wrap.children) x.setAttribute("aria-checked", String(x === b));
      onPick(o.value);
    });
    wrap.append(b);
  }
  return wrap;
}

function foot(label, enabled, onRecord, cls) {
  const btn = h("button", { type: "button", class: "primary " + (cls || ""), "data-act": "record", disabled: !enabled },
    label);
  btn.addEventListener("click", async () => {
    if (btn.disabled) return;
    btn.disabled = true;
    closeSheet();
    await onRecord();
  });
  return h("div", { class: "sheet-foot" },
    h("button", { type: "button", class: "secondary", "data-act": "cancel", onclick: cancelSheet }, t("cancel")), btn);
}

function penaltyField(onChange, value) {
  const input = h("input", { type: "text", inputmode: "text", maxlength: "64", placeholder: t("penalty_ph"),
    id: "penalty", autocomplete: "off", "aria-label": t("penalty"), value: value || null });
  input.addEventListener("input", () => onChange(input.value.trim()));
  return h("label", { class: "field" }, h("span", {}, t("penalty")), input);
}
const penaltyValue = (s) => (s === "" ? undefined : /^\d{1,2}$/.test(s) ? Number(s) : s);

function standing(pid) {
  const p = player(pid);
  const side = p ? p.side : null;
  const bits = [teamName(side), t(side || "home")];
  if (p && p.yellows) bits.push(t("n_yellows", { n: p.yellows }));
  if (p && p.box) bits.push(t("in_box"));
  if (p && p.sent_off) bits.push(t("tag_sent_off").toLowerCase());
  return bits.join(" · ");
}

/** A player's sheet: the card first (colour, then Record: three taps from the game screen,
 * player → colour → record), its conduct optional (named now, or later from the card's entry);
 * the rarer facts below. "2 yellows" and "3 yellows" ask for a confirmation naming the player. */
export function playerSheet(pid) {
  let pick = null;                    // "yellow1", "yellow2", "yellow3", "red1"
  let conduct = null;
  let penalty = "";
  let openConduct = false;
  const build = () => {
    const p = player(pid);
    const side = p ? p.side : sideOf(pid);
    const ended = S.view && S.view.status === "ended";
    const onBench = S.view && side && S.view.teams[side].bench.includes(pid);
    const acts = [];
    const act = (key, cls, fn) => acts.push(h("button", { type: "button", class: "opt big " + cls, "data-act": key, onclick: fn }, t("act_" + key)));
    if (ended) {
      act("postgame", "card", () => openSheet(postgameSheet(pid)));
      return h("div", { class: "sheet-body", "data-sheet": "player" },
        head(who(pid), standing(pid)),
        h("div", { class: "grid2" }, acts),
        h("div", { class: "sheet-foot" }, h("button", { type: "button", class: "secondary wide", "data-act": "cancel", onclick: cancelSheet }, t("cancel"))));
    }
    act("goal", "goal", () => openSheet(goalSheet(side, pid)));
    act("sub", "sub", () => openSheet(subSheet(pid, side, !!onBench)));
    act("box_early", "warn", () => openSheet(confirmPlayerSheet(pid, "box.left_early", t("act_box_early"), t("box_warn"))));
    act("arena", "danger", () => openSheet(confirmPlayerSheet(pid, "arena.left", t("act_arena"), t("arena_warn"))));
    act("mount_removed", "mount", () => openSheet(mountSheet(pid)));
    act("mount_replaced", "mount", async () => { closeSheet(); await record("mount.replaced", { player: pid }); });

    const color = () => (pick ? pick.slice(0, -1) : "yellow");
    const count = () => (pick ? Number(pick.slice(-1)) : 1);
    const label = () => (pick ? `${t("record")}: ${cardName(color(), count())} · ${who(pid)}${conduct ? " · " + conductLabel(conduct) : ""}` : t("pick_card"));
    const fields = () => ({ player: pid, color: color(), ...(color() === "yellow" ? { count: count() } : {}),
      ...(conduct ? { conduct } : {}), ...(penaltyValue(penalty) !== undefined ? { penalty: penaltyValue(penalty) } : {}) });
    const recordBtn = h("button", { type: "button", class: "primary card-" + color(), "data-act": "record", disabled: !pick }, label());
    recordBtn.addEventListener("click", async () => {
      if (!pick || recordBtn.disabled) return;
      if (count() > 1) { openSheet(cardConfirmSheet(pid, fields(), () => openSheet(build))); return; }
      recordBtn.disabled = true;
      closeSheet();
      await record("card", fields());
    });
    const refresh = () => {
      recordBtn.textContent = label();
      recordBtn.disabled = !pick;
      recordBtn.className = "primary card-" + color();
    };
    const drawn = (n, c) => h("span", { class: "cards", "aria-hidden": "true" }, Array.from({ length: n }, () => h("i", { class: c })));
    const colors = [
      { value: "yellow1", label: [drawn(1, "y"), h("span", { class: "lbl" }, t("yellow"))], cls: "yellow", attrs: { "data-card": "yellow1" } },
      { value: "yellow2", label: [drawn(2, "y"), h("span", { class: "lbl" }, t("yellow2"))], cls: "yellow", attrs: { "data-card": "yellow2" } },
      { value: "yellow3", label: [drawn(3, "y"), h("span", { class: "lbl" }, t("yellow3"))], cls: "yellow", attrs: { "data-card": "yellow3" } },
      { value: "red1", label: [drawn(1, "r"), h("span", { class: "lbl" }, t("red"))], cls: "red", attrs: { "data-card": "red1" } },
    ];
    const details = h("details", { class: "conduct-pick", ...(openConduct ? { open: true } : {}) },
      h("summary", { "data-act": "conduct-open" }, t("conduct_optional")),
      choices(CONDUCTS.map(([code, en, es]) => ({ value: code, label: lang === "es" ? es : en, attrs: { "data-conduct": code } })),
        conduct, (v) => { conduct = conduct === v ? null : v; refresh(); }, "conducts"),
      penaltyField((v) => { penalty = v; }, penalty));
    details.addEventListener("toggle", () => { openConduct = details.open; });
    const pending = pendingCards(pid);
    const body = h("div", { class: "sheet-body", "data-sheet": "player" },
      head(who(pid), standing(pid)),
      pending.length ? h("p", { class: "warning pending-warn", "data-pending-card": pending.length },
        t("card_pending_warn", { card: cardName(pending[0].ev.color, pending[0].ev.count || 1), player: who(pid) })) : null,
      h("h3", {}, t("act_card")),
      choices(colors, pick, (v) => { pick = v; refresh(); }, "four cardpick"),
      details,
      h("h3", {}, t("more_actions")),
      h("div", { class: "grid2 more" }, acts),
      h("div", { class: "sheet-foot" },
        h("button", { type: "button", class: "secondary", "data-act": "cancel", onclick: cancelSheet }, t("cancel")), recordBtn));
    return body;
  };
  return build;
}

/** "2 yellows" / "3 yellows": recorded only once confirmed, the player named. */
function cardConfirmSheet(pid, fields, back) {
  return () => {
    const name = cardName(fields.color, fields.count || 1);
    return h("div", { class: "sheet-body", "data-sheet": "card-confirm", role: "alertdialog" },
      head(t("card_confirm", { card: name, player: who(pid) }), standing(pid)),
      h("p", { class: "target card-target" }, `${name} · ${who(pid)}`),
      h("p", { class: "warning" }, fields.count === 3 ? t("card_confirm_3y") : t("card_confirm_2y")),
      h("div", { class: "sheet-foot" },
        h("button", { type: "button", class: "secondary", "data-act": "back", onclick: back }, t("back")),
        h("button", { type: "button", class: "primary card-yellow", "data-act": "confirm-card", onclick: async () => {
          closeSheet();
          await record("card", fields);
        } }, t("confirm_record", { card: name }))));
  };
}

/** Name the conduct of a card already recorded (acked or still queued): a card.amended. */
export function conductSheet(target, label) {
  let conduct = null;
  return () => {
    const recordBtn = foot(t("pick_conduct"), false, () => record("card.amended", { target, conduct }));
    return h("div", { class: "sheet-body", "data-sheet": "conduct" },
      head(t("name_conduct_title"), label),
      choices(CONDUCTS.map(([code, en, es]) => ({ value: code, label: lang === "es" ? es : en, attrs: { "data-conduct": code } })),
        conduct, (v) => {
          conduct = v;
          const b = recordBtn.querySelector("[data-act=record]");
          b.disabled = false;
          b.textContent = `${t("record")}: ${conductLabel(v)}`;
        }, "conducts"),
      recordBtn);
  };
}

/** Undo this device's last event: a void of it, once confirmed. */
export function undoSheet() {
  return () => {
    const last = lastUndoable();
    if (!last) {
      return h("div", { class: "sheet-body", "data-sheet": "undo" }, head(t("undo_title"), null),
        h("p", { class: "muted" }, t("void_none")),
        h("div", { class: "sheet-foot" }, h("button", { type: "button", class: "secondary wide", "data-act": "cancel", onclick: cancelSheet }, t("cancel"))));
    }
    return h("div", { class: "sheet-body", "data-sheet": "undo", role: "alertdialog" },
      head(t("undo_title"), null),
      h("p", { class: "target" }, last.label),
      h("p", { class: "muted logid" }, `${hhmmss(last.at)} · ${last.logId}`),
      h("p", { class: "muted" }, t("undo_explain")),
      h("div", { class: "sheet-foot" },
        h("button", { type: "button", class: "secondary", "data-act": "keep", onclick: cancelSheet }, t("keep")),
        h("button", { type: "button", class: "primary danger", "data-act": "confirm-undo", onclick: async () => {
          closeSheet();
          await record("void", { target: last.logId });
        } }, t("undo_do"))));
  };
}

export function goalSheet(side, scorer) {
  let team = side || null;
  let points = 1;
  let scorerId = scorer || null;
  return () => {
    const summary = () => (team ? `${t("record")}: ${t("act_goal")} ${teamName(team)}${scorerId ? " · " + who(scorerId) : ""} · ${t("pt", { n: points })}` : t("team"));
    const recordBtn = foot(summary(), !!team, () => record("goal", { team, ...(scorerId ? { player: scorerId } : {}), points }));
    const refresh = () => {
      const b = recordBtn.querySelector("[data-act=record]");
      b.textContent = summary();
      b.disabled = !team;
    };
    const scorers = h("div", { class: "scorers" });
    const drawScorers = () => {
      if (!team || !S.view) { scorers.replaceChildren(); return; }
      const ids = S.view.teams[team].lineup.filter((id) => { const p = player(id); return !p || p.on_field; });
      scorers.replaceChildren(h("h3", {}, t("scorer")), choices(
        [{ value: "", label: t("no_scorer"), attrs: { "data-scorer": "" } }, ...ids.map((id) => ({ value: id, label: who(id), attrs: { "data-scorer": id } }))],
        scorerId || "", (v) => { scorerId = v || null; refresh(); }, "three"));
    };
    drawScorers();
    return h("div", { class: "sheet-body", "data-sheet": "goal" },
      head(t("act_goal"), null),
      choices(["home", "away"].map((s) => ({ value: s, label: `${teamName(s)} (${t(s)})`, cls: s, attrs: { "data-team": s } })),
        team, (v) => { if (v !== team) scorerId = null; team = v; drawScorers(); refresh(); }, "two"),
      h("h3", {}, t("points")),
      choices([{ value: 1, label: t("pts1"), attrs: { "data-points": "1" } }, { value: 2, label: t("pts2"), attrs: { "data-points": "2" } }],
        points, (v) => { points = v; refresh(); }, "two"),
      scorers,
      recordBtn);
  };
}

function confirmPlayerSheet(pid, type, title, warning) {
  let penalty = "";
  return () => h("div", { class: "sheet-body", "data-sheet": type },
    head(`${title} · ${who(pid)}`, teamName(sideOf(pid))),
    h("p", { class: "warning" }, warning),
    penaltyField((v) => { penalty = v; }),
    foot(`${t("record")}: ${title}`, true, () => record(type, {
      player: pid, ...(penaltyValue(penalty) !== undefined ? { penalty: penaltyValue(penalty) } : {}) }), "danger"));
}

function mountSheet(pid) {
  let reason = null;
  let penalty = "";
  return () => {
    const recordBtn = foot(t("act_mount_removed"), false, () => record("mount.removed", {
      player: pid, reason, ...(penaltyValue(penalty) !== undefined ? { penalty: penaltyValue(penalty) } : {}) }));
    return h("div", { class: "sheet-body", "data-sheet": "mount" },
      head(`${t("act_mount_removed")} · ${who(pid)}`, teamName(sideOf(pid))),
      h("h3", {}, t("mount_reason")),
      choices([{ value: "unfit", label: t("mount_unfit"), attrs: { "data-reason": "unfit" } },
        { value: "abuse", label: t("mount_abuse"), cls: "red", attrs: { "data-reason": "abuse" } }],
      reason, (v) => {
        reason = v;
        const b = recordBtn.querySelector("[data-act=record]");
        b.disabled = false;
        b.textContent = `${t("record")}: ${t("act_mount_removed")} (${v === "abuse" ? t("mount_abuse") : t("mount_unfit")})`;
      }, "two"),
      penaltyField((v) => { penalty = v; }),
      recordBtn);
  };
}

function subSheet(pid, side, fromBench) {
  let other = null;
  return () => {
    const team = S.view ? S.view.teams[side] : { lineup: [], bench: [] };
    const pool = fromBench ? team.lineup : team.bench;
    const fields = () => (fromBench ? { team: side, out: other, in: pid } : { team: side, out: pid, in: other });
    const summary = () => (other ? `${t("record")}: ${t("sub_in")} ${who(fields().in)} · ${t("sub_out")} ${who(fields().out)}` : (fromBench ? t("sub_pick_out") : t("sub_pick_in")));
    const recordBtn = foot(summary(), false, () => record("substitution", fields()));
    return h("div", { class: "sheet-body", "data-sheet": "substitution" },
      head(`${t("act_sub")} · ${teamName(side)}`, `${fromBench ? t("sub_in") : t("sub_out")}: ${who(pid)}`),
      h("h3", {}, fromBench ? t("sub_pick_out") : t("sub_pick_in")),
      choices(pool.map((id) => ({ value: id, label: who(id), attrs: { "data-other": id } })), other, (v) => {
        other = v;
        const b = recordBtn.querySelector("[data-act=record]");
        b.disabled = false;
        b.textContent = summary();
      }, "three"),
      recordBtn);
  };
}

function postgameSheet(pid) {
  let level = null;
  return () => {
    const names = { "2y": t("pg_2y"), "3y": t("pg_3y"), red: t("pg_red") };
    const recordBtn = foot(t("pg_level"), false, () => record("postgame.card", { player: pid, level }));
    return h("div", { class: "sheet-body", "data-sheet": "postgame" },
      head(`${t("act_postgame")} · ${who(pid)}`, teamName(sideOf(pid))),
      choices(["2y", "3y", "red"].map((v) => ({ value: v, label: names[v], cls: v === "red" ? "red" : "yellow", attrs: { "data-level": v } })),
        level, (v) => {
          level = v;
          const b = recordBtn.querySelector("[data-act=record]");
          b.disabled = false;
          b.textContent = `${t("record")}: ${names[v]}`;
        }, "three"),
      recordBtn);
  };
}

export function voidSheet() {
  let target = null;
  return () => {
    if (target) {
      return h("div", { class: "sheet-body", "data-sheet": "void-confirm", role: "alertdialog" },
        head(t("void_confirm"), null),
        h("p", { class: "target" }, target.label),
        h("p", { class: "muted logid" }, `${hhmmss(target.at)} · ${target.logId}`),
        h("p", { class: "muted" }, t("void_explain")),
        h("div", { class: "sheet-foot" },
          h("button", { type: "button", class: "secondary", "data-act": "keep", onclick: cancelSheet }, t("keep")),
          h("button", { type: "button", class: "primary danger", "data-act": "confirm-void", onclick: async () => {
            const logId = target.logId;
            closeSheet();
            await record("void", { target: logId });
          } }, t("void_do"))));
    }
    const items = recentEvents();
    return h("div", { class: "sheet-body", "data-sheet": "void" },
      head(t("void_title"), null),
      items.length
        ? h("ul", { class: "recent" }, items.map((it) => h("li", {},
          h("button", { type: "button", class: "recent-item", "data-target": it.logId,
            onclick: () => { target = it; drawSheet(); } },
          h("span", { class: "time" }, hhmmss(it.at)), " ", it.label,
          h("span", { class: "by" }, it.own ? t("this_device") : it.logId.split("/")[0])))))
        : h("p", { class: "muted" }, t("void_none")),
      h("div", { class: "sheet-foot" }, h("button", { type: "button", class: "secondary wide", "data-act": "cancel", onclick: cancelSheet }, t("cancel"))));
  };
}

export function endSheet() {
  let shootout = false;
  return () => {
    const option = S.view && S.view.shootout_option;
    const box = h("input", { type: "checkbox", id: "shootout" });
    box.addEventListener("change", () => { shootout = box.checked; });
    return h("div", { class: "sheet-body", "data-sheet": "end" },
      head(t("end_title"), t("end_explain")),
      option ? h("label", { class: "check" }, box, h("span", {}, t("end_shootout"))) : null,
      foot(t("end_do"), true, () => record("game.end", shootout ? { shootout: true } : {}), "danger"));
  };
}

/** The backdrop and the Escape key close a sheet without recording anything. */
export function initSheets() {
  sheet().addEventListener("click", (ev) => { if (ev.target === sheet()) cancelSheet(); });
  sheet().addEventListener("cancel", () => { S.sheet = null; S.actionAt = null; });
}
