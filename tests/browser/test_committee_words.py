"""The committee console in the officials' own words (README, "The committee console";
docs/clients.md): a refusal names the field as the form labels it and says what to do, in
English and Spanish, never the service's schema text; the rescind form checks its reason
before sending anything; a language switch says again what was already on screen; and
changing an auto-filled starter moves the player displaced to the substitutes."""

from __future__ import annotations

from playwright.async_api import expect

from ..live.conftest import Server
from .conftest import Console
from .test_committee import EVENT, G1, bad_csv, good_csv, import_rosters, new_event, shot_page, sign_in_admin


async def test_a_rescind_without_a_reason_is_refused_by_the_form_in_words(server: Server,
                                                                         console: Console) -> None:
    await new_event(server)
    await server.setup_game(G1, arena="main", event=EVENT)
    tk = await server.device("timekeeper", G1, name="tk-words")
    ump = await server.device("umpire", G1, name="ump-words")
    try:
        await tk.send({"type": "clock.start", "game": G1})
        await ump.send({"type": "card", "game": G1, "player": "h2", "color": "red", "conduct": "striking"})
        await tk.send({"type": "game.end", "game": G1})
    finally:
        await tk.close()
        await ump.close()
    page = console.page
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    await sign_in_admin(page, server)
    await console.tab("ledger")
    row = page.locator("#ledger-table tr[data-player=h2]")
    await row.locator("[data-act=rescind]").click()
    await page.click("#decision-form [type=submit]")
    error = page.locator("#decision-form .field-error")
    await expect(error).to_have_text("Reason: Give a reason for the rescind.")
    await expect(error).to_have_attribute("data-code", "invalid_field")
    assert not [u for u in posted if "/api/committee/" in u], posted        # checked before sending
    await shot_page(page, "words-01-rescind-needs-a-reason")

    # In Spanish: the refusal on screen is said again, and a new one is in Spanish too.
    await page.click("#lang")
    await expect(error).to_have_text("Motivo: Indique el motivo de la anulación.")
    await page.click("#decision-form [type=submit]")
    await expect(page.locator("#decision-form .field-error")).to_have_text(
        "Motivo: Indique el motivo de la anulación.")
    await expect(page.locator("#decision-form")).not_to_contain_text("Expected")
    assert not [u for u in posted if "/api/committee/" in u], posted

    # The API keeps its code and detail (clients rely on them).
    status, err = await server.api("POST", "/api/committee/rescind", {
        "id": "r-x", "obligation": await row.get_attribute("data-obligation"), "by": "HTC", "reason": ""})
    assert (status, err["code"]) == (400, "invalid_field") and "$.reason" in err["detail"]  # its words kept


async def test_a_bad_colour_in_a_roster_file_is_explained_in_words(server: Server, console: Console) -> None:
    await new_event(server)
    page = console.page
    await sign_in_admin(page, server)
    await import_rosters(page, bad_csv())
    colour = page.locator("#csv-result table.csv-errors tbody tr[data-line='4']")
    await expect(colour).to_contain_text("primary")
    await expect(colour).to_contain_text("A colour is # and six hex digits, e.g. #1A2B3C.")
    await expect(page.locator("#csv-result")).not_to_contain_text("Expected `str`")
    await expect(page.locator("#csv-result [data-result=refused]")).to_contain_text("Nothing was imported")
    await page.click("#lang")
    await expect(page.locator("#csv-result [data-result=refused]")).to_contain_text("No se importó nada")
    await shot_page(page, "words-02-bad-colour")


async def test_spanish_is_spoken_at_once_everywhere(server: Server, console: Console) -> None:
    await new_event(server)
    page = console.page
    await sign_in_admin(page, server)
    await import_rosters(page, good_csv())
    done = page.locator("#csv-result [data-result=imported]")
    await expect(done).to_contain_text("Imported: 4 teams")
    await page.fill("#player-form [name=name]", "Nuevo Jugador")
    await page.click("#player-form [type=submit]")                   # no team, no id issue: saved
    saved = page.locator("#player-form .form-msg.ok")
    await expect(saved).to_contain_text("is saved")
    await expect(page.locator("#team-form-title")).to_have_text("New team")
    await page.click("#lang")
    await expect(page.locator("#team-form-title")).to_have_text("Equipo nuevo")
    await expect(page.locator("#player-form-title")).to_have_text("Jugador nuevo")
    await expect(done).to_contain_text("Importados: 4 equipos")
    await expect(saved).to_contain_text("quedó guardado")
    await shot_page(page, "words-03-spanish-at-once")


async def test_changing_an_auto_filled_starter_puts_him_on_the_bench(server: Server,
                                                                    console: Console) -> None:
    await new_event(server)
    page = console.page
    await sign_in_admin(page, server)
    await import_rosters(page, good_csv())
    await expect(page.locator("#csv-result [data-result=imported]")).to_be_visible()
    await console.tab("games")
    form = page.locator("#game-form")
    await page.select_option("#game-form [name=home_team]", "aiken")
    await page.select_option("#game-form [name=away_team]", "wellington")
    lineup = form.locator("[data-side=home] select.lineup")
    assert await lineup.evaluate_all("s => s.map(x => x.value)") == ["ruiz", "ortega", "mahoney"]
    await lineup.nth(1).select_option("diaz")                              # Díaz starts instead of Ortega
    await expect(form.locator("[data-side=home] .subs input[value=ortega]")).to_be_checked()
    await expect(form.locator("[data-side=home] .subs input[value=ortega]")).to_be_enabled()
    await expect(form.locator("[data-side=home] .subs input[value=diaz]")).not_to_be_checked()
    await page.fill("#game-form [name=game]", G1)
    await page.click("#game-form [type=submit]")
    await expect(form.locator(".form-msg.ok")).to_contain_text(G1)
    status, doc = await server.api("GET", f"/api/games/{G1}")
    assert status == 200
    home = doc["view"]["teams"]["home"]
    assert home["lineup"] == ["ruiz", "diaz", "mahoney"] and home["bench"] == ["ortega"], home


async def test_a_status_line_said_in_one_language_is_said_again_in_the_other(server: Server,
                                                                              console: Console) -> None:
    await new_event(server)
    await server.setup_game(G1, arena="main", event=EVENT)
    page = console.page
    await sign_in_admin(page, server)

    # An export saved in English: its status line turns Spanish with the page; and back.
    await console.tab("export")
    toasts = page.locator("#flash .flash")
    async with page.expect_download():
        await page.click("#export-log")
    await expect(toasts.last).to_contain_text(f"{EVENT}.jsonl saved (")
    await page.click("#lang")
    await expect(toasts.last).to_contain_text(f"{EVENT}.jsonl guardado (")
    await expect(page.locator("#flash .flash", has_text="saved")).to_have_count(0)
    async with page.expect_download():
        await page.click("#export-log")
    await expect(toasts.last).to_contain_text(f"{EVENT}.jsonl guardado (")
    await page.click("#lang")
    await expect(toasts.last).to_contain_text(f"{EVENT}.jsonl saved (")
    await expect(page.locator("#flash .flash", has_text="guardado")).to_have_count(0)

    # A game's schedule saved in English, from the order of play: the same, and back.
    await console.tab("order")
    await page.click(f"#order-untimed li[data-game={G1}] [data-act=edit]")
    edit = page.locator(f"#order-edit form[data-game={G1}]")
    await edit.locator("[name=starts_at]").fill("2026-12-05T14:00")
    await edit.locator("[type=submit]").click()
    saved = edit.locator(".form-msg.ok")
    await expect(saved).to_have_text("The schedule is saved.")
    await page.click("#lang")
    await expect(saved).to_have_text("El horario está guardado.")
    await expect(edit.locator("[type=submit]")).to_have_text("Guardar el horario")
    await edit.locator("[name=referee]").fill("Ana Gómez")
    await edit.locator("[type=submit]").click()
    await expect(saved).to_have_text("El horario está guardado.")
    await page.click("#lang")
    await expect(saved).to_have_text("The schedule is saved.")
    await shot_page(page, "words-04-status-lines-in-either-language")
