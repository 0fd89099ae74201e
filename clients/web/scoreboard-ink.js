// The scoreboard's contrast rule (docs/clients.md, "Scoreboard at arena distance"): every
// text at least 7:1 against what is behind it (WCAG 2 AAA, relative luminance). A team's registered colour is used
// as a panel's background only when an ink reaches 7:1 on it; otherwise the team's texts
// sit on a neutral plate and the colour frames them.

export const AAA = 7;
export const LIGHT_INK = "#ffffff";
export const DARK_INK = "#0b0f17";

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

/** The contrast ratio of two colours (1 to 21). */
export function contrast(a, b) {
  const la = luminance(a), lb = luminance(b);
  if (la === null || lb === null) return 1;
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** The ink for a background: {ink, ratio, plate}. `plate`: neither ink reaches 7:1, so the
 * texts go on a neutral plate (and the ink is the light one, for that plate). */
export function inkFor(bg) {
  const light = contrast(LIGHT_INK, bg), dark = contrast(DARK_INK, bg);
  const [ink, ratio] = light >= dark ? [LIGHT_INK, light] : [DARK_INK, dark];
  return ratio >= AAA ? { ink, ratio, plate: false } : { ink: LIGHT_INK, ratio, plate: true };
}
