// Refusals in the officials' words, for the committee's console and the handheld alike: what
// happened (REASONS, by the API's `code`), what to do about it (ADVICE), and for a field that
// does not fit (`invalid_field`: the field is named in `detail`, "at `$.reason`"), which field
// and what it takes. The API's codes and details stay as they are: this only says them.
//
//   refusalWords({code, detail}, "es", {label: "Motivo", todo: [en, es]})
//     -> "Motivo: indique el motivo de la anulación."

/** Refusal codes (docs/log-format.md, docs/protocol.md), in both languages; the Spanish ones
 * are stream/rules/vocabulary.py's REASONS_ES. (Written inside a function because tests/test_docs.py
 * reads this table from this file's text: from `const REASONS = {` to its indented `};`.) */
function refusalReasons() {
  const REASONS = {
    duplicate_id: ["the event id is already in the log", "el id del evento ya está en el registro"],
    unknown_game: ["no such game has been set up", "ese partido no existe"],
    unknown_player: ["the player is on neither roster", "el jugador no está en ninguna de las dos listas"],
    unknown_event: ["no such event has been set up", "ese evento no existe"],
    unknown_target: ["there is no event with that id to void", "no hay ningún evento con ese id para anular"],
    already_voided: ["that event was already voided", "ese evento ya fue anulado"],
    cannot_void_void: ["a void can't be voided; record the event again", "una anulación no se anula; vuelva a cargar el evento"],
    cannot_void_setup: ["a setup can't be voided; set up a corrected one", "una configuración no se anula; cargue una corregida"],
    cannot_void: ["that event can't be voided", "ese evento no se puede anular"],
    wrong_game: ["that event belongs to another game", "ese evento es de otro partido"],
    duplicate_game: ["the game is already set up", "el partido ya está configurado"],
    duplicate_event: ["the event is already set up", "el evento ya está configurado"],
    duplicate_player: ["a player is listed twice", "un jugador figura dos veces en las listas"],
    same_team: ["a team can't play itself", "un equipo no puede jugar contra sí mismo"],
    player_not_on_field: ["the player is not on the field", "el jugador no está en la cancha"],
    player_sent_off: ["the player has been sent off", "el jugador fue expulsado"],
    bad_count: ["a red card is a single card", "una tarjeta roja es una sola tarjeta"],
    not_in_box: ["the player is not in the penalty box", "el jugador no está en el área de castigo"],
    not_in_lineup: ["the player is not in the lineup", "el jugador no está en la formación"],
    not_on_bench: ["the player is not a substitute on the bench", "el jugador no es un sustituto en el banco"],
    sitting_out: ["the player is serving a box trip; the team plays short", "el jugador cumple una suspensión; el equipo juega con uno menos"],
    no_substitute_yet: ["no substitute is allowed yet", "todavía no se permite un sustituto"],
    mount_window_open: ["a mount is already being replaced", "ya hay un caballo en reemplazo"],
    no_mount_window: ["no mount is being replaced", "no hay ningún caballo en reemplazo"],
    game_over: ["the game is over (use a post-game card)", "el partido ya terminó"],
    game_not_started: ["the game has not begun yet", "el reloj todavía no se puso en marcha"],
    game_not_over: ["the game is not over yet", "el partido todavía no terminó"],
    player_suspended: ["the player is suspended for this game", "el jugador está suspendido para este partido"],
    record_closed: ["a game that has begun already serves that penalty; it can't be changed", "un partido que ya comenzó cumple esa sanción; no se puede cambiar"],
    card_target: ["a card names a player or a team official, not both", "una tarjeta se muestra a un jugador o a un miembro del equipo, no a ambos"],
    class_mismatch: ["the event is of another class", "el evento es de otra clase"],
    stale_registration: ["someone registered this again meanwhile: reload it", "otro lo registró mientras tanto: vuelva a cargarlo"],
    event_completed: ["the event is completed", "el evento está terminado"],
    not_a_card: ["that card is not on record in this game", "esa tarjeta no consta en este partido"],
    game_begun: ["the game has begun: what it took and its goals on handicap were fixed then", "el partido ya empezó: lo que tomó y sus goles de hándicap quedaron fijados entonces"],
    not_worked_out: ["the goals on handicap can't be worked out", "no se pueden calcular los goles de hándicap: indíquenlos"],
    bad_matrix: ["the handicap matrix lists a number of periods twice", "la tabla de hándicap repite un número de períodos"],
    bad_timezone: ["the time zone is not one the zone database knows", "la zona horaria no es una que conozca la base de zonas horarias"],
    unknown_team: ["the team is not entered in that event", "el equipo no está inscrito en ese evento"],
    already_eliminated: ["the team is already out of that event", "el equipo ya quedó eliminado de ese evento"],
    unknown_obligation: ["no such penalty is owed", "no hay ninguna sanción pendiente con ese id"],
    not_decreasable: ["that penalty owes no play time; the committee can rescind it", "esa sanción no debe tiempo de juego; el Comité puede revocarla"],
    not_a_decrease: ["a decrease must leave less time than now", "una reducción debe dejar menos tiempo que el actual"],
    bad_limits: ["the lowest team handicap is over the highest", "el hándicap de equipo mínimo es mayor que el máximo"],
    draw_format: ["that draw's format can't be", "ese formato de cuadro no es posible"],
    duplicate_team: ["a team is in the draw twice", "un equipo figura dos veces en el cuadro"],
    already_drawn: ["the draw has games set up already: it is not drawn again", "el cuadro ya tiene partidos configurados; no se sortea de nuevo"],
    draw_event: ["that game is of another event's draw", "ese partido es del cuadro de otro evento"],
    draw_kind: ["the game's kind is not the draw's", "el tipo del partido no es el que dice el cuadro"],
    draw_not_ready: ["that game of the draw waits for its teams", "el partido del cuadro espera a sus equipos"],
    draw_teams: ["the teams are not the draw's", "los equipos no son los que dice el cuadro"],
    nothing_to_add: ["an increase adds games or a sit-out", "un aumento agrega partidos o tiempo fuera"],
    forbidden: ["this device's role may not send that", "el rol de este dispositivo no puede enviar eso"],
    out_of_scope: ["this token is for another game", "este token es para otro partido"],
    invalid_field: ["the event is malformed", "el evento está mal formado"],
    missing_type: ["the event is malformed", "el evento está mal formado"],
    malformed_json: ["the event is malformed", "el evento está mal formado"],
    invalid_frame: ["the event is malformed", "el evento está mal formado"],
    id_conflict: ["this id was already used for a different event", "ese id ya se usó para otro evento"],
    rate_limited: ["too many events at once", "demasiados eventos a la vez"],
    not_stored: ["the service could not store it", "el servicio no pudo guardarlo"],
    unknown: ["the service may have stored it: sending it again", "puede que el servicio lo haya guardado: se reenvía"],
    bad_token: ["the token is not valid for this service", "el token no es válido para este servicio"],
    expired: ["the token has expired: ask the committee for a new one", "el token venció: pida uno nuevo al Comité"],
    revoked: ["the token has been revoked", "el token fue revocado"],
    auth_required: ["the token was refused", "el token fue rechazado"],
    too_many_connections: ["this device has too many connections open", "este dispositivo tiene demasiadas conexiones abiertas"],
    unscoped: ["a token needs a game or an arena", "un token necesita un partido o una arena"],
    unknown_logo: ["no such logo is stored", "ese escudo no está guardado"],
    too_large: ["the file is too large (64 KiB at most)", "el archivo es demasiado grande (64 KiB como máximo)"],
    unsupported_media: ["the file is not a PNG, JPEG, WebP or GIF image", "el archivo no es una imagen PNG, JPEG, WebP o GIF"],
    invalid_csv: ["some rows of the file can't be imported", "algunas filas del archivo no se pueden importar"],
  };
  return REASONS;
}
export const REASONS = refusalReasons();

/** What to do, by code (said after what happened). */
const ADVICE = {
  duplicate_id: ["Nothing to do: it is already recorded.", "No hace falta nada: ya está registrado."],
  unknown_game: ["Check the game, or schedule it first.", "Revise el partido, o prográmelo primero."],
  unknown_player: ["Pick a player of this game.", "Elija un jugador de este partido."],
  unknown_event: ["Create the event first (tab 1).", "Cree primero el evento (pestaña 1)."],
  duplicate_game: ["Give the game another id.", "Dé otro identificador al partido."],
  duplicate_event: ["Pick it in the list instead.", "Elíjalo en la lista."],
  duplicate_player: ["Pick each player once, in one lineup or the other.", "Elija a cada jugador una sola vez, en una u otra formación."],
  same_team: ["Pick another team for one side.", "Elija otro equipo para uno de los lados."],
  player_sent_off: ["Nothing more can be recorded for him in this game.", "No se puede registrar nada más para él en este partido."],
  game_over: ["Open the post-game card instead.", "Use la tarjeta posterior al partido."],
  game_not_started: ["Start the clock first.", "Ponga primero el reloj en marcha."],
  unknown_target: ["Pick the event again from the outbox.", "Elija de nuevo el evento en la bandeja de salida."],
  already_voided: ["Nothing to do.", "No hace falta nada."],
  cannot_void_void: ["Record the event again instead.", "Vuelva a cargar el evento."],
  cannot_void_setup: ["Ask the committee to set up a corrected game.", "Pida al Comité que configure un partido corregido."],
  cannot_void: ["Ask the committee to correct it.", "Pida al Comité que lo corrija."],
  wrong_game: ["Open that game to void it.", "Abra ese partido para anularlo."],
  player_not_on_field: ["Pick a player who is on the field.", "Elija un jugador que esté en la cancha."],
  bad_count: ["Give a red card alone.", "Muestre la tarjeta roja sola."],
  not_in_box: ["Pick the player who is in the box.", "Elija al jugador que está en el área de castigo."],
  not_in_lineup: ["Check the team sheet.", "Revise la planilla del equipo."],
  not_on_bench: ["Pick a substitute from the bench.", "Elija un sustituto del banco."],
  sitting_out: ["Wait until the box time is served.", "Espere a que cumpla el tiempo de castigo."],
  no_substitute_yet: ["Wait until a substitute is allowed.", "Espere a que se permita un sustituto."],
  mount_window_open: ["Finish that change of horse first.", "Termine primero ese cambio de caballo."],
  no_mount_window: ["Open a change of horse first.", "Abra primero un cambio de caballo."],
  player_suspended: ["He may not play this game: check the lineup.", "No puede jugar este partido: revise la formación."],
  card_target: ["Pick either the player or the team official.", "Elija al jugador o al miembro del equipo."],
  not_a_card: ["Pick a card recorded in this game.", "Elija una tarjeta registrada en este partido."],
  game_not_over: ["Wait until the game has ended.", "Espere a que termine el partido."],
  record_closed: ["Decide it with an increase, or in the game that serves it.", "Resuélvalo con un aumento, o en el partido que la cumple."],
  class_mismatch: ["Use the event's class and handicap.", "Use la clase y el hándicap del evento."],
  stale_registration: ["Check the form, which now shows the current registration, and save again.", "Revise el formulario, que ahora muestra el registro actual, y guarde de nuevo."],
  event_completed: ["Nothing more can be added to it.", "Ya no se le puede agregar nada."],
  game_begun: ["It took what it owed, and its goals on handicap were fixed, when it began: see the ledger.", "Tomó lo que debía, y sus goles de hándicap quedaron fijados, al comenzar: vea el registro."],
  not_worked_out: ["Give the goals on handicap yourself, or register every starter's handicap.", "Indique usted los goles de hándicap, o inscriba el hándicap de cada titular."],
  bad_matrix: ["List each number of periods once.", "Incluya cada número de períodos una sola vez."],
  bad_timezone: ["Give an IANA time zone name, such as America/Chicago.", "Indique un nombre de zona horaria IANA, como America/Chicago."],
  unknown_team: ["Pick a team entered in the event.", "Elija un equipo inscrito en el evento."],
  already_eliminated: ["Nothing to do.", "No hace falta nada."],
  unknown_obligation: ["Refresh the ledger: it may have been decided already.", "Actualice el registro: quizá ya se resolvió."],
  not_decreasable: ["Rescind it instead.", "Anúlela en su lugar."],
  not_a_decrease: ["Give less play time than it owes now.", "Indique menos tiempo de juego que el que debe ahora."],
  bad_limits: ["Give a lowest team handicap no higher than the highest.", "Indique un hándicap de equipo mínimo no mayor que el máximo."],
  draw_format: ["Pick a format the teams can play.", "Elija un formato que los equipos puedan jugar."],
  duplicate_team: ["List each team once.", "Incluya cada equipo una sola vez."],
  already_drawn: ["Keep the draw made: its games are set up.", "Mantenga el cuadro hecho: sus partidos ya están configurados."],
  draw_event: ["Set it up in the event whose draw it is.", "Configúrelo en el evento al que pertenece el cuadro."],
  draw_kind: ["Set it up with the kind the draw says.", "Configúrelo con el tipo que dice el cuadro."],
  draw_not_ready: ["Wait until the games before it have ended.", "Espere a que terminen los partidos anteriores."],
  draw_teams: ["Set it up with the teams the draw says.", "Configúrelo con los equipos que dice el cuadro."],
  nothing_to_add: ["Give more games, a sit-out, or both.", "Indique más partidos, un tiempo fuera, o ambos."],
  forbidden: ["Sign in with a token that may do it.", "Entre con un token que pueda hacerlo."],
  out_of_scope: ["Sign in with the token for that game or event.", "Entre con el token de ese partido o evento."],
  id_conflict: ["Send it again as a new event.", "Envíelo de nuevo como un evento nuevo."],
  rate_limited: ["Wait a moment: it is sent again.", "Espere un momento: se reenvía."],
  not_stored: ["Try again in a moment.", "Inténtelo de nuevo en un momento."],
  unknown: ["Try again: it will not be recorded twice.", "Inténtelo de nuevo: no se registrará dos veces."],
  bad_token: ["Paste the token again, or ask for a new one.", "Pegue el token de nuevo, o pida uno nuevo."],
  expired: ["", ""],                     // the reason says it: ask the committee for a new one
  revoked: ["Ask for a new token.", "Pida un token nuevo."],
  auth_required: ["Sign in again.", "Vuelva a entrar."],
  unauthorized: ["Paste the token again, or ask the service's administrator for one.", "Pegue el token de nuevo, o pídale uno al administrador del servicio."],
  no_token: ["Paste a token first.", "Pegue primero un token."],
  too_many_connections: ["Close this page on other tabs or devices.", "Cierre esta página en otras pestañas o dispositivos."],
  too_large: ["Choose a smaller image.", "Elija una imagen más pequeña."],
  unsupported_media: ["Choose a PNG, JPEG, WebP or GIF image.", "Elija una imagen PNG, JPEG, WebP o GIF."],
  invalid_csv: ["Correct the rows listed and import the file again.", "Corrija las filas indicadas e importe el archivo de nuevo."],
  offline: ["Check the connection and try again.", "Revise la conexión e inténtelo de nuevo."],
  not_found: ["Refresh the page.", "Actualice la página."],
  missing_team: ["Pick the team.", "Elija el equipo."],
  no_file: ["Choose a CSV file first.", "Elija primero un archivo CSV."],
};

const HAPPENED = {
  unauthorized: ["the token was not accepted", "el token no fue aceptado"],
  offline: ["the service could not be reached", "no se pudo contactar con el servicio"],
  not_found: ["it is no longer there", "ya no existe"],
  no_token: ["there is no token", "no hay token"],
  missing_team: ["a side has no team", "un lado no tiene equipo"],
  no_file: ["no file was chosen", "no se eligió ningún archivo"],
};

/** What a field takes, by its name in the request (its last key). */
const FIELD = {
  reason: ["give a reason.", "indique un motivo."],
  primary: ["a colour is # and six hex digits, e.g. #1A2B3C.", "un color es # y seis dígitos hexadecimales, p. ej. #1A2B3C."],
  secondary: ["a colour is # and six hex digits, e.g. #1A2B3C.", "un color es # y seis dígitos hexadecimales, p. ej. #1A2B3C."],
  short: ["2 to 4 letters or digits, e.g. AIK.", "de 2 a 4 letras o dígitos, p. ej. AIK."],
  name: ["give a name (up to 80 characters).", "indique un nombre (hasta 80 caracteres)."],
  number: ["a whole number from 0 to 99, or empty.", "un número entero de 0 a 99, o vacío."],
  handicap: ["a whole number in range (a player: -2 to 10).", "un número entero dentro del rango (un jugador: de -2 a 10)."],
  by: ["say who decides (Decisions signed by).", "indique quién decide (Decisiones firmadas por)."],
  owed_ms: ["play time as m:ss, e.g. 2:00.", "tiempo de juego como m:ss, p. ej. 2:00."],
  sit_out_ms: ["a sit-out as m:ss, e.g. 2:00, or empty.", "un tiempo fuera como m:ss, p. ej. 2:00, o vacío."],
  period_ms: ["a period as m:ss, e.g. 7:30.", "un período como m:ss, p. ej. 7:30."],
  periods: ["a whole number from 1 to 12.", "un número entero de 1 a 12."],
  games: ["a whole number from 0 to 10.", "un número entero de 0 a 10."],
  players: ["three players, each once.", "tres jugadores, cada uno una vez."],
  subs: ["up to 16 substitutes.", "hasta 16 sustitutos."],
  game: ["an id of letters, digits and dashes, no spaces or dots.", "un identificador de letras, dígitos y guiones, sin espacios ni puntos."],
  team: ["pick a team.", "elija un equipo."],
  player: ["pick a player.", "elija un jugador."],
  origin_game: ["pick an ended game.", "elija un partido terminado."],
  event: ["an id of letters, digits and dashes.", "un identificador de letras, dígitos y guiones."],
  official: ["up to 80 characters.", "hasta 80 caracteres."],
};

/** The field's name in a request, as the API's detail gives it (``at `$.teams.home.players[2]` ``). */
export function fieldPath(detail) {
  const m = /at \x60\$\.?([^\x60]*)\x60/.exec(String(detail || ""));  // \x60: a backtick
  return m ? m[1].replace(/\[\d+\]/g, "") : "";
}

/** What a field takes, in `lang` ("" when there is nothing to say about it): a CSV row's column. */
export function fieldHint(key, lang) {
  const pair = FIELD[{ team_name: "name", player_name: "name" }[key] || key];
  return pair ? sentence(pair[lang === "es" ? 1 : 0]) : "";
}

const sentence = (s) => (s ? s.charAt(0).toUpperCase() + s.slice(1).replace(/([^.!?])$/, "$1.") : "");
const MALFORMED = new Set(["invalid_field", "invalid_frame", "missing_type", "malformed_json", "too_deep"]);

/**
 * A refusal in plain words, in `lang`: which field (`ctx.label`, the field's label as the form
 * shows it) and what to do (`ctx.todo`: the form's own advice, [en, es] or words in `lang`;
 * `ctx.advice: false`: what happened only).
 */
export function refusalWords(err, lang, ctx = {}) {
  const L = (pair) => (typeof pair === "string" ? pair : pair ? pair[lang === "es" ? 1 : 0] : "");
  const code = err?.code || "";
  const key = (ctx.key || fieldPath(err?.detail) || "").split(".").pop();
  const label = ctx.label ? `${ctx.label}: ` : "";
  if (MALFORMED.has(code) || ctx.todo) {
    const todo = L(ctx.todo) || L(FIELD[key]);
    if (todo) return label + (label ? todo : sentence(todo));
    if (MALFORMED.has(code)) {
      return label + L(label ? ["this is not valid: check it and try again.", "no es válido: revíselo e inténtelo de nuevo."]
        : ["Something in the form is not valid: check it and try again.", "Algo del formulario no es válido: revíselo e inténtelo de nuevo."]);
    }
  }
  const what = L(REASONS[code] || HAPPENED[code]) || (code.startsWith("http_")
    ? L(["the service could not do it", "el servicio no pudo hacerlo"])
    : L(["it was refused", "fue rechazado"]));
  const todo = ctx.advice === false ? ""
    : code in ADVICE ? L(ADVICE[code]) : L(["Check it and try again.", "Revíselo e inténtelo de nuevo."]);
  return `${label}${label ? what.replace(/([^.!?])$/, "$1.") : sentence(what)}${todo ? ` ${todo}` : ""}`;
}
