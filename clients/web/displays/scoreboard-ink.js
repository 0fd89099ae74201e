// The scoreboard's contrast rule (docs/clients.md, "Scoreboard at arena distance"): every
// text at least 7:1 against what is behind it (WCAG 2 AAA, relative luminance). A team's registered colour is used
// as a panel's background only when an ink reaches 7:1 on it; otherwise the team's texts
// sit on a neutral plate and the colour frames them.

import { luminance } from "../shared/roster.js";

export const AAA = 7;
export const LIGHT_INK = "#ffffff";
export const DARK_INK = "#0b0f17";

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
