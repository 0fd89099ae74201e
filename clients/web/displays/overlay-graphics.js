// The overlay's graphics, shared by the overlay (/overlay) and its control page (/overlay/control):
//
//   GraphicsGame  a LiveGame that also follows the game's broadcast graphics (a `graphics`
//                 frame after the snapshot and after every operator's command:
//                 docs/protocol-viewer.md, "Broadcast graphics"), and, given a control token, sends
//                 the operator's commands (`command({action, graphic, …})`).
//   lowerItems    the lower thirds one event makes, in broadcast words, composed from its
//                 notices and the game's roster: "SECOND YELLOW · #2 ORTEGA · 2:00 IN THE BOX".
//   loadFonts     the bundled display face (shared/fonts/barlow-condensed.css), loaded before the first draw.

import { LiveGame, label, splitCitation, translator } from "./live.js";
import { goals, mmss } from "../shared/common.js";
import { playerText, teamShort, teamText } from "../shared/roster.js";

// ------------------------------------------------------------------ words

/** The lower thirds' own words (the rest are live.js's DICT). Short: they sit on one line at 1080p. */
const WORDS = {
  en: {
    inBox: "{t} in the box", sentOffShort: "Sent off", penaltyTo: "Penalty to {team}", penaltyBox: "Penalty box",
    timeServed: "Time served", backInPlay: "Back in play", goalTitle: "Goal", mountLeft: "{t} to change",
    hcpShort: "HCP",
  },
  es: {
    inBox: "{t} en el área", sentOffShort: "Expulsado", penaltyTo: "Penal para {team}", penaltyBox: "Área de castigo",
    timeServed: "Tiempo cumplido", backInPlay: "Vuelve al juego", goalTitle: "Gol", mountLeft: "{t} para cambiar",
    hcpShort: "HCP",
  },
};

/** A translator for `lang` that knows live.js's words and the lower thirds' own. */
export function words(lang) {
  const base = translator(lang), own = WORDS[lang] || WORDS.en;
  return (key, vars = {}) => (key in own
    ? own[key].replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`))
    : base(key, vars));
}

// ------------------------------------------------------------------ lower thirds

function cardTitle(t, n) {
  if (n.color === "red") return t("redCard");
  if (n.count > 1) return t("yellowCards", { n: n.count });
  if (n.yellows === 2) return t("secondYellow");
  if (n.yellows === 3) return t("thirdYellow");
  return t("yellowCard");
}

/**
 * The lower thirds of one event's notices (a card, its penalty and its box trip are one), in
 * `lang`: [{key, type, icon, side, player, headline, team, citation}]. `headline` is the
 * broadcast line, upper-cased: "SECOND YELLOW · #2 ORTEGA · 2:00 IN THE BOX"; `team` the
 * player's team by name; `citation` the rule ("Rule 14 · Second yellow: penalty box").
 * `player`: only his (a whistle may release two); `notice`: only the one of that notice type
 * (a card's event later brings its box trip's "time served" too).
 */
export function lowerItems(notices, { lang = "en", roster = null, view = null, player = null, notice = null } = {}) {
  const t = words(lang);
  const upper = (s) => s.toLocaleUpperCase(lang);
  const teamId = (side) => view?.teams?.[side]?.team;
  const short = (side) => teamShort(roster, side, teamId(side)) || upper(label(teamId(side) || side));
  const team = (side) => (teamId(side) ? teamText(roster, side, teamId(side), label) : label(side));
  const who = (id) => playerText(roster, id, label);
  const about = (type, p) => notices.find((n) => n.type === type && (p === undefined || n.player === p));
  const out = [];
  const make = (n, icon, parts, detail = n) => {
    if ((player && n.player !== player) || (notice && n.type !== notice)) return;
    const text = detail.text?.[lang] || detail.text?.en || "";
    out.push({ key: `${n.cause}:${n.type}:${n.player ?? ""}`, type: n.type, icon, side: n.side, player: n.player ?? null,
      headline: upper(parts.filter(Boolean).join(" · ")), team: n.side ? team(n.side) : "",
      citation: splitCitation(text).citation });
  };
  const card = about("card.recorded");
  if (card) {
    const box = about("box.enter", card.player), off = about("sent_off", card.player), pen = about("penalty.awarded");
    const tail = box ? t("inBox", { t: mmss(box.owed_ms) }) : off ? t("sentOffShort")
      : pen ? t("penaltyTo", { team: short(pen.to) }) : "";
    make(card, card.color === "red" ? "red" : "yellow", [cardTitle(t, card), who(card.player), tail], box || off || card);
  } else {
    for (const n of notices.filter((x) => x.type === "box.enter")) {
      make(n, "box", [t("penaltyBox"), who(n.player), t("inBox", { t: mmss(n.owed_ms) })]);
    }
  }
  for (const n of notices) {
    if (n.type === "box.eligible") make(n, "clock", [t("timeServed"), who(n.player), t("eligible")]);
    else if (n.type === "box.release") make(n, "release", [t("backInPlay"), who(n.player)]);
    else if (n.type === "sub.allowed") make(n, "release", [t("subAllowedTitle"), short(n.side)]);
    else if (n.type === "mount.deadline") {
      make(n, "mount", n.status === "expired" ? [t("mountLate"), who(n.player)]
        : [t("mountOpen"), who(n.player), t("mountLeft", { t: mmss(n.deadline_at - n.at) })]);
    } else if (n.type === "goal.scored") {
      const score = `${short("home")} ${goals(n.home)}–${goals(n.away)} ${short("away")}`;
      make(n, "goal", [t("goalTitle"), n.player ? who(n.player) : short(n.side), score]);
    }
  }
  return out;
}

// ------------------------------------------------------------------ the bundled typeface

/** Load the bundled face's weights (Latin and Latin Extended) before drawing: no fallback flash. */
export async function loadFonts() {
  if (!document.fonts) return;
  try {
    await Promise.all(["500", "600", "700"].map((w) => document.fonts.load(`${w} 32px "Barlow Condensed"`, "AÁÑ·–0")));
  } catch { /* drawn with the fallback faces */ }
}

// ------------------------------------------------------------------ the connection

/**
 * A LiveGame that follows the game's broadcast graphics too (`subscribe` with `graphics:
 * true`; `options.graphics: false`: it doesn't): `graphics` holds the latest state (null until it comes), and the "graphics" event
 * fires with each. With `controlToken`, it authenticates on opening (on a public service
 * too) and `command()` sends the operator's commands; a refusal comes as an "error" event
 * (its `id` the command's).
 */
export class GraphicsGame extends LiveGame {
  constructor(game, options = {}) {
    super(game, options);
    this.graphics = null;
    this.followGraphics = options.graphics !== false;  // false: a plain LiveGame (no graphics frames)
    this.controlToken = options.controlToken || null;
    this._commands = 0;
    if (this.controlToken) {
      this.addEventListener("connection", (e) => {
        if (e.detail === "open") this._send({ type: "auth", token: this.controlToken });
      });
    }
  }

  /** Send one command ({action, graphic?, cause?, player?, notice?, item?, lang?, cite?}); its id. */
  command(cmd) {
    const id = `c${++this._commands}`;
    if (!this.connected) return null;
    this._send({ type: "graphics", game: this.game, ...cmd, id });
    return id;
  }

  _query() {
    const q = super._query();
    if (this.followGraphics) q.set("graphics", "1");
    return q;
  }

  _subscription() { return { ...super._subscription(), graphics: this.followGraphics }; }

  _handle(m, received) {
    if (m.type === "graphics") {
      if (m.game !== this.game) return;
      this.graphics = m;
      this._emit("graphics", m);
      return;
    }
    super._handle(m, received);
  }
}
