// Section 6, export: each game's report (printable HTML, CSV: public links), the day's reports
// in one CSV, the committee's decisions in one CSV and the event's log as JSON Lines (these need the token: fetched with the header
// and saved as a file, so the token never appears in a link).

import { download } from "./committee-api.js";
import { S, bus, t, el, flash, teamName, errorText } from "./committee-ui.js";
import { $ } from "../shared/common.js";

export function init() {
  $("#export-csv").addEventListener("click", () => save(`/api/events/${encodeURIComponent(S.event)}/reports.csv`, `${S.event}-reports.csv`));
  $("#export-log").addEventListener("click", () => save(`/api/events/${encodeURIComponent(S.event)}/log`, `${S.event}.jsonl`));
  $("#export-decisions").addEventListener("click", () => save(`/api/events/${encodeURIComponent(S.event)}/decisions.csv`, `${S.event}-decisions.csv`));
  bus.addEventListener("data", render);
  bus.addEventListener("lang", render);
}

async function save(path, name) {
  try {
    const blob = await download(path, name);
    const kb = Math.max(1, Math.round(blob.size / 1024));
    flash(() => t("ex_saved", { name, kb }));
  } catch (err) {
    flash(() => errorText(err), "error");
  }
}

function render() {
  const g = S.games;
  $("#export-empty").hidden = g.length > 0;
  $("#export-table tbody").replaceChildren(...g.map((x) => {
    const id = encodeURIComponent(x.game);
    return el("tr", { "data-game": x.game },
      el("td", {}, el("b", { text: `${teamName(x.home)} – ${teamName(x.away)}` }), el("span", { class: "muted", text: ` · ${x.game}` })),
      el("td", { text: t(`status_${x.status}`) }),
      el("td", {},
        el("a", { href: `/games/${id}/report?lang=${S.lang}`, target: "_blank", "data-link": "report-html", text: t("ex_html") }), " · ",
        el("a", { href: `/games/${id}/report.csv`, download: `${x.game}-report.csv`, "data-link": "report-csv", text: "CSV" }), " · ",
        el("a", { href: `/games/${id}/report.json`, target: "_blank", "data-link": "report-json", text: "JSON" }), " · ",
        el("a", { href: `/api/games/${id}/log`, download: `${x.game}.jsonl`, "data-link": "game-log", text: t("ex_game_log") })));
  }));
  for (const b of [$("#export-csv"), $("#export-log"), $("#export-decisions")]) b.disabled = !S.event;
}
