// Arena Stream: what a display shows of a game's roster (the `roster` frame,
// docs/protocol-viewer.md): players' numbers and names, teams' names, short letters, logos and
// colours with a readable ink; the raw id only when nothing is registered.

/** The frame's roster, kept as a display uses it (null: no roster frame yet). */
export function rosterOf(frame) {
  if (!frame || typeof frame !== "object") return null;
  return { home: frame.home || null, away: frame.away || null, players: frame.players || {},
    event_name: frame.event_name || null, kits: frame.kits || {} };
}

/** A registered player as displays show him: "#2 Ortega" (number and name), "Ortega" (no
 * number), or `fallback(id)` (the raw id, or a prettier form of it) when he is not registered. */
export function playerText(roster, id, fallback = (x) => String(x ?? "")) {
  const p = roster && id ? roster.players[id] : null;
  if (!p || !p.name) return fallback(id);
  return p.number === null || p.number === undefined ? p.name : `#${p.number} ${p.name}`;
}

/** The registered team of a side ("home" / "away") of the roster, if it is the team named. */
export function teamEntry(roster, side, team) {
  const entry = roster ? roster[side] : null;
  return entry && (!team || entry.team === team) ? entry : null;
}

/** A team's name, or `fallback(team)` when it is not registered. */
export function teamText(roster, side, team, fallback = (x) => String(x ?? "")) {
  const entry = teamEntry(roster, side, team);
  return entry ? entry.name : fallback(team);
}

/** A team's short letters as a score bug shows them (upper-case), or null. */
export function teamShort(roster, side, team) {
  const entry = teamEntry(roster, side, team);
  return entry && entry.short ? entry.short.toLocaleUpperCase() : null;
}

/** The logo's address (`/logos/{sha}`), or null. */
export function teamLogo(roster, side, team) {
  const entry = teamEntry(roster, side, team);
  return entry && entry.logo ? `/logos/${entry.logo}` : null;
}

/** Relative luminance of "#rrggbb" (WCAG 2), or null. */
export function luminance(hex) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(String(hex || ""));
  if (!m) return null;
  const [r, g, b] = m.slice(1).map((x) => {
    const c = parseInt(x, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The ink that reads best on `hex` (WCAG contrast): near-black or white. */
export function inkOn(hex) {
  const l = luminance(hex);
  if (l === null) return "#ffffff";
  const onWhite = 1.05 / (l + 0.05), onBlack = (l + 0.05) / 0.05;
  return onBlack >= onWhite ? "#0b0f17" : "#ffffff";
}

/** A registered team's colours: {primary, secondary, ink (on primary), accentInk (on
 * secondary)}, or null when the team is not registered. */
export function teamColors(roster, side, team) {
  const entry = teamEntry(roster, side, team);
  // The kit this game's set-up chose (a clash with the other team) wins over the registered colours.
  const c = (roster && roster.kits && roster.kits[side]) || (entry && entry.colors);
  if (!c || luminance(c.primary) === null || luminance(c.secondary) === null) return null;
  return { primary: c.primary, secondary: c.secondary, ink: inkOn(c.primary), accentInk: inkOn(c.secondary) };
}

