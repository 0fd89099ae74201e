// The scoreboard's last-event line: the latest notices of the game said in words, with the
// names the roster gives ("SECOND YELLOW · #2 ORTEGA · 2:00 IN THE BOX"). Notices come from
// each delta (`live` "delta" events) and, on (re)connecting, from the snapshot's `recent`.
// The words are built when the board is drawn, so a later registration renames them.
import { goals, mmss } from "../shared/common.js";

const WORDS = {
  en: {
    interval: "Interval", inBox: "{t} in the box", sentOffWord: "sent off", penaltyTo: "Penalty to {team}",
    substitution: "Substitution", subFor: "{in} for {out}", mountDue: "{t}",
    startsInBox: "starts in the box", lastEvents: "Last events", mounts: "Mount replacement",
    noEvents: "No events yet", disallowed: "Goal disallowed",
  },
  es: {
    interval: "Intervalo", inBox: "{t} en el área", sentOffWord: "expulsado", penaltyTo: "Penal para {team}",
    substitution: "Cambio", subFor: "{in} por {out}", mountDue: "{t}",
    startsInBox: "empieza en el área", lastEvents: "Últimas jugadas", mounts: "Reemplazo de caballo",
    noEvents: "Sin jugadas todavía", disallowed: "Gol anulado",
  },
};

/** The scoreboard's own words, falling back to the displays' shared ones (live.js). */
export function words(lang, t) {
  const table = WORDS[lang] || WORDS.en;
  return (key, vars = {}) => (key in table
    ? table[key].replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`))
    : t(key, vars));
}

// What a notice is worth showing, by its cause's most telling notice.
const RANK = ["card.recorded", "goal.scored", "sent_off", "box.enter", "box.release", "box.eligible",
  "sub.allowed", "substitution.made", "penalty.awarded", "mount.deadline", "game.ended"];

/** The notices grouped by the event that caused them, oldest first, only the shown kinds. */
export function groups(notices) {
  const byCause = new Map();
  for (const n of notices || []) {
    if (!RANK.includes(n.type)) continue;
    const key = `${n.cause}|${n.type === "box.eligible" || n.type === "mount.deadline" ? n.at : ""}`;
    if (!byCause.has(key)) byCause.set(key, []);
    byCause.get(key).push(n);
  }
  return [...byCause.entries()].map(([key, list]) => ({ key, notices: list, at: Math.max(...list.map((n) => n.at)) }));
}

function cardTitle(n, w) {
  if (n.color === "red") return w("redCard");
  if (n.count > 1) return w("yellowCards", { n: n.count });
  if (n.yellows === 2) return w("secondYellow");
  if (n.yellows === 3) return w("thirdYellow");
  return w("yellowCard");
}

/**
 * One group of notices in words: {icon, side, parts: [title, who, detail…]} or null.
 * `who(id)` and `team(side)` give the names to show.
 */
export function describe(group, { w, who, team }) {
  const by = (type) => group.notices.find((n) => n.type === type);
  const card = by("card.recorded");
  if (card) {
    const box = by("box.enter"), off = by("sent_off"), pen = by("penalty.awarded");
    const detail = box ? w("inBox", { t: mmss(box.owed_ms) }) : off ? w("sentOffWord")
      : pen ? w("penaltyTo", { team: team(pen.to) }) : team(card.side);
    return { icon: card.color === "red" ? "red" : "yellow", side: card.side, player: card.player,
      parts: [cardTitle(card, w), who(card.player), detail] };
  }
  const goal = by("goal.scored");
  if (goal) {
    return { icon: "goal", side: goal.side, player: goal.player,
      parts: [w("goal"), team(goal.side), goal.player ? who(goal.player) : "", `${goals(goal.home)}–${goals(goal.away)}`] };
  }
  const off = by("sent_off");
  if (off) return { icon: "red", side: off.side, player: off.player, parts: [w("sentOffTitle"), who(off.player)] };
  const enter = by("box.enter");
  if (enter) {
    return { icon: "box", side: enter.side, player: enter.player,
      parts: [w("toBox"), who(enter.player), w("inBox", { t: mmss(enter.owed_ms) })] };
  }
  const release = by("box.release");
  if (release) return { icon: "release", side: release.side, player: release.player, parts: [w("released"), who(release.player)] };
  const eligible = by("box.eligible");
  if (eligible) return { icon: "clock", side: eligible.side, player: eligible.player, parts: [w("eligible"), who(eligible.player)] };
  const sub = by("sub.allowed");
  if (sub) return { icon: "release", side: sub.side, player: sub.player, parts: [w("subAllowedTitle"), team(sub.side)] };
  const made = by("substitution.made");
  if (made) {
    return { icon: "release", side: made.side, player: made.in,
      parts: [w("substitution"), team(made.side), w("subFor", { in: who(made.in), out: who(made.out) })] };
  }
  const pen = by("penalty.awarded");
  if (pen) return { icon: "penalty", side: pen.to, player: pen.player, parts: [w("penaltyTo", { team: team(pen.to) })] };
  const mount = by("mount.deadline");
  if (mount) {
    return { icon: "mount", side: mount.side, player: mount.player,
      parts: mount.status === "expired" ? [w("mountLate"), who(mount.player)]
        : [w("mountOpen"), who(mount.player), w("mountDue", { t: mmss(mount.deadline_at - mount.at) })] };
  }
  const end = by("game.ended");
  if (end) return { icon: "final", side: null, player: null, parts: [w("final"), `${goals(end.home)}–${goals(end.away)}`] };
  return null;
}

/** The last events kept (newest last), at most `keep`. */
export class EventLog {
  constructor(keep = 3) { this.keep = keep; this.items = []; }

  /** A snapshot's `recent`: what the game said last, replacing what we had. */
  reset(recent) { this.items = []; this.add(recent); }

  add(notices) {
    for (const g of groups(notices)) {
      const i = this.items.findIndex((x) => x.key === g.key);
      if (i >= 0) this.items[i] = { ...g, notices: [...this.items[i].notices, ...g.notices] };
      else this.items.push(g);
    }
    this.items.sort((a, b) => a.at - b.at);
    this.items = this.items.slice(-this.keep);
  }
}
