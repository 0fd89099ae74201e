"""The clauses the engine applies, each with the words of the rule it rests on.

Every notice and every refusal names one of these ids. ``R``-clauses are
USPA Arena Rule 14 (``shared/seed/rule14.txt``; the English text prevails and
is what is quoted). ``A``-clauses are the arena facts around it
(``shared/seed/arena-facts.md``). ``L`` is the log format itself.
docs/rules.md maps each clause to its behaviour and its tests.
"""

from __future__ import annotations

import msgspec


class Clause(msgspec.Struct, frozen=True):
    id: str
    heading_en: str
    heading_es: str
    quote: str


_CLAUSES = [
    Clause("R1", "Unsportsmanlike conduct", "Conducta antideportiva",
           "Unsportsmanlike conduct, including but not limited to the following, "
           "shall not be permitted. [...] Inappropriate behavior by any member of a team "
           "organization"),
    Clause("R2", "Every card: a penalty", "Cada tarjeta: un penal",
           "The player's first yellow card (offense) in a game will result in a penalty "
           "[...] Any subsequent yellow card or red card will also result in a penalty."),
    Clause("R3", "Second yellow: penalty box", "Segunda amarilla: área de castigo",
           "A second offense will be a second yellow card and the player will sit out "
           "until the first play stoppage (including a goal) that occurs following the "
           "next two minutes of play."),
    Clause("R4", "Third offense", "Tercera infracción",
           "A third offense will result in a third yellow card and the player will sit "
           "out [...] or a third offense may, if sufficiently severe, result in a red card "
           "and suspension for the remainder of the game with no substitute allowed until "
           "the first play stoppage (including a goal) that occurs following the next two "
           "minutes of play."),
    Clause("R5", "Fourth offense: red", "Cuarta infracción: roja",
           "A player's fourth offense shall, without exception, be a red card."),
    Clause("R6", "Red card", "Tarjeta roja",
           "A red card in a game will result in suspension for the remainder of the game "
           "with no substitute allowed until the first play stoppage (including a goal) "
           "that occurs following the next four minutes of play."),
    Clause("R7", "Two or three yellows at once", "Dos o tres amarillas a la vez",
           "The Umpire(s), in their sole discretion, may assess two or three yellow cards "
           "or a red card [...] for a player's first, second or third offense."),
    Clause("R8", "Leaving the penalty box early", "Abandonar el área de castigo antes de tiempo",
           "An appropriate penalty will be assessed against that player's team and that "
           "player will be returned to the penalty box to sit out the remainder of his or "
           "her original suspension and until the first play stoppage (including a goal) "
           "that occurs following the next two minutes of play with no substitute."),
    Clause("R9", "Cards after the game", "Tarjetas después del partido",
           "If a player demonstrates unsportsmanlike conduct after the game ends, the "
           "Umpire(s) [...] may award that player either two yellow cards, three yellow "
           "cards, or a red card."),
    Clause("R10", "Box time carried into the next game", "Tiempo de castigo trasladado",
           "A player who is in the penalty box at the end of a game [...] shall begin his "
           "or her next game of equal or higher handicap for the same team in the penalty "
           "box for the unexpired time of his or her original suspension."),
    Clause("R11", "Shootout exclusion (Arena Rule 5.c(2))", "Exclusión del shootout (5.c(2))",
           "A player with remaining time in the penalty box at the end of regulation play "
           "may not participate in any shootout, but if he or she is excluded from a "
           "shootout, he or she shall be deemed to have served his or her time."),
    Clause("R12", "Three yellows: carried yellow status", "Tres amarillas: condición trasladada",
           "A player who receives three yellow cards during a game without receiving a red "
           "card shall begin his or her next game [...] with the status of a player who "
           "has already received a yellow card."),
    Clause("R13", "Substitution cannot avoid a suspension", "La sustitución no evita la suspensión",
           "Substitutes do not acquire the yellow card status of the player for whom they "
           "are substituting. However, the suspension of any player [...] may not be "
           "avoided by the substitution of another player for that player."),
    Clause("R14", "Leaving the arena: automatic red", "Abandonar la arena: roja automática",
           "Unauthorized departure from the arena (automatic red card) will result in "
           "suspension for the next game of equal or higher handicap for the same team."),
    Clause("R15", "Team not entered in a further event", "Equipo no inscrito en otro evento",
           "The suspension [...] shall be served during the player's next game (or two "
           "games) of equal or higher handicap for any team."),
    Clause("R16", "Which game counts as the next", "Cuál es el siguiente partido",
           "[...] in the player's next game (or two games) of equal or higher handicap in "
           "a USPA Event that is not a consolation game, the first round game in a "
           "subsidiary event, or a shootout."),
    Clause("R17", "Protecting the horses", "Protección de los caballos",
           "If a mount is deemed physically unfit [...] the Umpires should remove the mount "
           "from the game and allow a maximum of 5 minutes for its replacement. If any "
           "player abuses a mount, play should be stopped immediately and the appropriate "
           "penalty awarded."),
    Clause("A1", "Periods and the game clock", "Períodos y reloj de juego",
           "Regulation is 4 periods of 7½ minutes. The timer's horn ends a period; the "
           "ball is dead at the horn."),
    Clause("A2", "Goals", "Goles",
           "Arena has 2-point goals: a goal scored from Penalty 2, and beyond the 2-point "
           "line (Arena Rule 6.a(2))."),
    Clause("A3", "Teams and substitutes", "Equipos y sustitutos",
           "Three players a side (No. 1-3), plus alternates (substitutes)."),
    Clause("A4", "Ties (Arena Rule 5.c)", "Empates (Regla de Arena 5.c)",
           "5.c(1): extra periods after a 10-minute interval, and the first goal wins. "
           "5.c(2): a shootout after a 4-minute interval."),
    Clause("A5", "Goals on handicap", "Goles de hándicap",
           "In a handicap event, the team with the lower team handicap (the sum of its players' "
           "handicaps) starts with goals on the scoreboard: per goal of net difference, ½ goal for "
           "2 or 3 periods and 1 goal for 4 periods (USPA Arena Handicap Matrix). Winners are "
           "decided on the total."),
    Clause("L1", "The event log", "El registro de eventos",
           "Each event has a unique id; a game is set up before its events; a void names "
           "an earlier event of the same game."),
    Clause("L2", "Team and player registrations", "Registro de equipos y jugadores",
           "Displays name teams and players as registered in the log, from each registration on; "
           "a registration made from an earlier revision than the current one is refused."),
    Clause("L3", "The draw", "El cuadro",
           "An event's draw fixes its games: each is set up with the draw's id, kind and "
           "teams; a game's winner takes its place in the next; the committee confirms "
           "who is out of the event."),
]

CLAUSES: dict[str, Clause] = {c.id: c for c in _CLAUSES}


def cite(clause_id: str) -> str:
    """A short citation for display: ``Rule 14 · Red card``."""
    c = CLAUSES[clause_id]
    prefix = "Rule 14" if clause_id.startswith("R") else "Arena" if clause_id.startswith("A") else "Log"
    return f"{prefix} · {c.heading_en}"


def cite_es(clause_id: str) -> str:
    c = CLAUSES[clause_id]
    prefix = "Regla 14" if clause_id.startswith("R") else "Arena" if clause_id.startswith("A") else "Registro"
    return f"{prefix} · {c.heading_es}"
