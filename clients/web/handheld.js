/* Arena Stream: the officials' handheld (docs/protocol.md).
 *
 * - The device token comes from the URL fragment (#token=…, never sent to the
 *   server) or is pasted; it is kept in localStorage and the fragment removed.
 * - Every event is written to the outbox (IndexedDB) *before* it is sent, with
 *   its id and its serialized bytes, and resent (the same bytes) until it gets
 *   one final answer: an ack (stored) or a refusal (error without retry).
 * - /ws/device: auth → welcome → answer the ping (clock sync) → resend the
 *   outbox in order, one event at a time.
 * - /ws/watch?game=G: the game state (snapshot, then deltas, resumed with
 *   since/epoch), kept in localStorage so a reload offline still shows it.
 * - Alerts (an `alert` notice: the rules took a fact they did not expect, and
 *   say what to check), from this device's acks and from the feed, stay on
 *   top of the page until the official dismisses each one; kept per game.
 *
 * No build step, no dependencies. */
"use strict";

(() => {
  // The service worker's scope is /clients/: the page at /handheld forwards
  // there (search and fragment kept) so that it opens offline too.
  if (location.pathname === "/handheld" && "serviceWorker" in navigator) {
    location.replace("/clients/handheld.html" + location.search + location.hash);
    return;
  }

  // ------------------------------------------------------------------ words

  const CONDUCTS = [
    ["appealing", "Appealing to officials", "Apelar a los umpires"],
    ["unwelcome_talking", "Unwelcome talking to an umpire", "Hablar al umpire sin ser bienvenido"],
    ["abusive_language", "Vulgar or abusive language", "Lenguaje vulgar u ofensivo"],
    ["disrespect", "Disrespectful attitude", "Actitud irrespetuosa"],
    ["arguing", "Arguing with officials", "Discutir con los oficiales"],
    ["team_member_behavior", "Team member behavior", "Conducta de un miembro del equipo"],
    ["tack_time_out", "Unnecessary tack time out", "Tiempo muerto innecesario (tack)"],
    ["mallet_windmill", "Windmill / helicopter mallet", "Taco como molino o helicóptero"],
    ["dangerous_riding", "Dangerous riding", "Monta peligrosa"],
    ["improper_mallet", "Improper use of the mallet", "Uso indebido del taco"],
    ["rough_play", "Rough or abusive play", "Juego brusco u ofensivo"],
    ["striking", "Striking a player or mount", "Golpear a un jugador o caballo"],
    ["artificial_aids", "Excessive artificial aids", "Ayudas artificiales excesivas"],
    ["hit_after_whistle", "Hit after whistle or horn", "Golpe tras silbato o bocina"],
    ["dangerous_ball", "Dangerous ball (spectators, officials)", "Bocha peligrosa (público, oficiales)"],
    ["appeal_demeaning", "Demeaning comment or gesture", "Comentario o gesto despectivo"],
    ["appeal_mallet_raised", "Mallet raised to appeal", "Levantar el taco para apelar"],
    ["left_box_deliberately", "Left the box deliberately", "Salió del área de castigo a propósito"],
    ["left_arena", "Left the arena", "Abandonó la arena"],
    ["other", "Other", "Otra"],
  ];

  // stream/rules/clauses.py: the heading each refusal cites.
  const CLAUSES = {
    R1: ["Rule 14 · Unsportsmanlike conduct", "Regla 14 · Conducta antideportiva"],
    R2: ["Rule 14 · Yellow cards: penalty", "Regla 14 · Tarjetas amarillas: penal"],
    R3: ["Rule 14 · Second yellow: penalty box", "Regla 14 · Segunda amarilla: área de castigo"],
    R4: ["Rule 14 · Third offense", "Regla 14 · Tercera infracción"],
    R5: ["Rule 14 · Fourth offense: red", "Regla 14 · Cuarta infracción: roja"],
    R6: ["Rule 14 · Red card", "Regla 14 · Tarjeta roja"],
    R7: ["Rule 14 · Umpire discretion", "Regla 14 · Criterio del umpire"],
    R8: ["Rule 14 · Leaving the penalty box early", "Regla 14 · Abandonar el área de castigo antes de tiempo"],
    R9: ["Rule 14 · Cards after the game", "Regla 14 · Tarjetas después del partido"],
    R10: ["Rule 14 · Box time carried into the next game", "Regla 14 · Tiempo de castigo trasladado"],
    R11: ["Rule 14 · Shootout exclusion", "Regla 14 · Exclusión del shootout"],
    R12: ["Rule 14 · Three yellows: carried yellow status", "Regla 14 · Tres amarillas: condición trasladada"],
    R13: ["Rule 14 · Substitution cannot avoid a suspension", "Regla 14 · La sustitución no evita la suspensión"],
    R14: ["Rule 14 · Leaving the arena: automatic red", "Regla 14 · Abandonar la arena: roja automática"],
    R15: ["Rule 14 · Team not entered in a further event", "Regla 14 · Equipo no inscrito en otro evento"],
    R16: ["Rule 14 · Which game counts as the next", "Regla 14 · Cuál es el siguiente partido"],
    R17: ["Rule 14 · Protecting the horses", "Regla 14 · Protección de los caballos"],
    A1: ["Arena · Periods and the game clock", "Arena · Períodos y reloj de juego"],
    A2: ["Arena · Goals", "Arena · Goles"],
    A3: ["Arena · Teams and substitutes", "Arena · Equipos y sustitutos"],
    A4: ["Arena · Ties (Arena Rule 5.c)", "Arena · Empates (Regla de Arena 5.c)"],
    L1: ["Log · The event log", "Registro · El registro de eventos"],
  };

  // Refusal codes (docs/log-format.md, docs/protocol.md), in both languages;
  // the Spanish ones are stream/rules/text.py's REASONS_ES.
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
    unknown_team: ["the team is not entered in that event", "el equipo no está inscrito en ese evento"],
    already_eliminated: ["the team is already out of that event", "el equipo ya quedó eliminado de ese evento"],
    unknown_obligation: ["no such penalty is owed", "no hay ninguna sanción pendiente con ese id"],
    not_decreasable: ["that penalty owes no play time; the committee can rescind it", "esa sanción no debe tiempo de juego; el Comité puede revocarla"],
    not_a_decrease: ["a decrease must leave less time than now", "una reducción debe dejar menos tiempo que el actual"],
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
    bad_token: ["the token is not valid for this service", "el token no es válido para este servicio"],
    expired: ["the token has expired: ask the committee for a new one", "el token venció: pida uno nuevo al Comité"],
    revoked: ["the token has been revoked", "el token fue revocado"],
    auth_required: ["the token was refused", "el token fue rechazado"],
    too_many_connections: ["this device has too many connections open", "este dispositivo tiene demasiadas conexiones abiertas"],
  };

  const I18N = {
    en: {
      signin_title: "Sign in this handheld",
      signin_help: "Paste the device token the tournament committee gave you, or open the link that carries it.",
      signin_label: "Device token",
      signin_use: "Use this token",
      signin_bad: "That is not a device token.",
      outbox_title: "This device's events",
      outbox_empty: "Nothing recorded on this device yet.",
      feed_title: "Game feed",
      feed_empty: "No notices yet.",
      dev: "Device",
      feed: "Feed",
      dev_connecting: "connecting…",
      dev_syncing: "syncing clock…",
      dev_online: "online",
      dev_offline: "offline",
      dev_retry: "reconnecting…",
      dev_denied: "refused",
      feed_live: "live",
      feed_stale: "stale",
      feed_connecting: "connecting…",
      feed_offline: "offline",
      ago: "{s} s ago",
      heard: "heard {ago}",
      beat: "heartbeat {ago}",
      pending: "{n} to send",
      all_sent: "all sent",
      st_queued: "Queued",
      st_sent: "Sent",
      st_acked: "Acked #{seq}",
      st_acked_noseq: "Acked",
      st_refused: "Refused",
      st_duplicate: "already stored",
      st_voided: "voided",
      retrying: "will retry: {why}",
      reason: "Reason",
      act_whistle: "Whistle",
      act_goal: "Goal",
      act_void: "Void",
      act_end: "End game",
      act_card: "Card",
      act_box_early: "Left box early",
      act_arena: "Left arena",
      act_mount_removed: "Mount removed",
      act_mount_replaced: "Mount replaced",
      act_sub: "Substitution",
      act_postgame: "Post-game card",
      tk_start: "Start clock",
      tk_stop: "Stop clock",
      tk_horn: "Horn",
      tk_horn_help: "ends the period",
      tk_split: "Split horn",
      tk_split_help: "a stoppage, the period goes on",
      yellow: "Yellow",
      yellow2: "2 yellows",
      yellow3: "3 yellows",
      red: "Red",
      conduct: "Conduct",
      penalty: "Penalty (optional)",
      penalty_ph: "e.g. 2",
      record: "Record",
      pick_conduct: "Pick the conduct",
      cancel: "Cancel",
      home: "Home",
      away: "Away",
      points: "Points",
      pts1: "1 point",
      pts2: "2 points",
      team: "Team",
      scorer: "Scorer (optional)",
      no_scorer: "No scorer",
      sub_out: "Out",
      sub_in: "In",
      sub_pick_in: "Who comes in?",
      sub_pick_out: "Who goes out?",
      mount_unfit: "Unfit",
      mount_abuse: "Abuse",
      mount_reason: "Why",
      pg_level: "Level",
      pg_2y: "2 yellows",
      pg_3y: "3 yellows",
      pg_red: "Red",
      void_title: "Void a recent event",
      void_none: "Nothing recent to void.",
      void_confirm: "Void this event?",
      void_explain: "It is taken out of the game (a voided goal is disallowed: its points come off, its stoppage stands) and everything after it is recomputed. This can't be undone from here.",
      void_do: "Void it",
      keep: "Keep it",
      end_title: "End the game?",
      end_explain: "After this, cards are post-game cards.",
      end_shootout: "Decided by a shootout (Arena Rule 5.c(2))",
      end_do: "End the game",
      arena_warn: "Leaving the arena without permission is an automatic red card (Rule 14).",
      box_warn: "The player goes back to the box for the rest of the time plus two minutes of play (Rule 14).",
      st_scheduled: "not started",
      st_live: "live",
      st_ended: "ended",
      period: "P{n}",
      of_periods: "Period {n} of {of}",
      overtime: "OT",
      running: "running",
      stopped: "stopped",
      tag_box: "BOX {t}",
      tag_out_next: "OUT NEXT STOP",
      tag_sent_off: "SENT OFF",
      tag_no_sub: "NO SUB {t}",
      tag_sub_ok: "SUB OK",
      tag_susp: "SUSPENDED",
      tag_mount: "MOUNT {t}",
      tag_mount_over: "MOUNT TIME UP",
      tag_bench: "bench",
      bench: "Bench",
      no_view: "Waiting for the game state… (it appears as soon as the feed connects)",
      pick_game: "This token is for arena {arena}. Which game?",
      no_games: "No games in this arena yet.",
      role_umpire: "Umpire",
      role_referee: "Referee",
      role_timekeeper: "Timekeeper",
      role_admin: "Admin",
      saved: "Saved: {what}",
      signed_in_as: "{official} · {role} · device {device}",
      token_exp: "Token valid until {time}",
      others: "Connected for this game",
      nobody: "no other device",
      sign_out: "Sign out of this handheld",
      sign_out_pending: "{n} events are not sent yet. They stay on this handheld and are sent when device {device} signs in again. Sign out?",
      reload_offline: "Works offline: events are kept on this handheld and sent when the network is back.",
      game_end_ev: "Game end",
      whistle_ev: "Whistle",
      clock_start_ev: "Clock start",
      clock_stop_ev: "Clock stop",
      horn_ev: "Horn",
      split_ev: "Split horn",
      goal_ev: "Goal {team}{who} · {pts}",
      card_ev: "{card} · {player} · {conduct}",
      box_ev: "Left box early · {player}",
      arena_ev: "Left the arena · {player}",
      sub_ev: "Substitution {team}: {in} for {out}",
      mount_removed_ev: "Mount removed ({why}) · {player}",
      mount_replaced_ev: "Mount replaced · {player}",
      postgame_ev: "Post-game {level} · {player}",
      void_ev: "Void: {what}",
      with_penalty: " · penalty {p}",
      pt: "{n} pt",
      lang_switch: "ES",
      lang_name: "Español",
      denied_help: "Sign in again with a new token.",
      clock: "Clock",
      n_yellows: "{n} yellow(s) in this game",
      this_device: "this device",
      sign_in_again: "Sign in again",
      elsewhere: "{n} unsent event(s) of game {games} wait on this handheld for a token of that game.",
      in_box: "in the box",
      alert: "Alert",
      alerts_n: "{n} alerts",
      alert_ok: "Got it",
      tag_no_shootout: "NO SHOOTOUT",
    },
    es: {
      signin_title: "Iniciar sesión en este dispositivo",
      signin_help: "Pegue el token de dispositivo que le dio el Comité del torneo, o abra el enlace que lo contiene.",
      signin_label: "Token del dispositivo",
      signin_use: "Usar este token",
      signin_bad: "Eso no es un token de dispositivo.",
      outbox_title: "Eventos de este dispositivo",
      outbox_empty: "Todavía no se registró nada en este dispositivo.",
      feed_title: "Novedades del partido",
      feed_empty: "Sin novedades todavía.",
      dev: "Dispositivo",
      feed: "Partido",
      dev_connecting: "conectando…",
      dev_syncing: "sincronizando reloj…",
      dev_online: "en línea",
      dev_offline: "sin conexión",
      dev_retry: "reconectando…",
      dev_denied: "rechazado",
      feed_live: "en vivo",
      feed_stale: "desactualizado",
      feed_connecting: "conectando…",
      feed_offline: "sin conexión",
      ago: "hace {s} s",
      heard: "respuesta {ago}",
      beat: "latido {ago}",
      pending: "{n} por enviar",
      all_sent: "todo enviado",
      st_queued: "En cola",
      st_sent: "Enviado",
      st_acked: "Confirmado n.º {seq}",
      st_acked_noseq: "Confirmado",
      st_refused: "Rechazado",
      st_duplicate: "ya estaba guardado",
      st_voided: "anulado",
      retrying: "se reintentará: {why}",
      reason: "Motivo",
      act_whistle: "Silbato",
      act_goal: "Gol",
      act_void: "Anular",
      act_end: "Fin del partido",
      act_card: "Tarjeta",
      act_box_early: "Salió antes del área",
      act_arena: "Abandonó la arena",
      act_mount_removed: "Caballo retirado",
      act_mount_replaced: "Caballo reemplazado",
      act_sub: "Sustitución",
      act_postgame: "Tarjeta posterior al partido",
      tk_start: "Poner en marcha",
      tk_stop: "Detener reloj",
      tk_horn: "Bocina",
      tk_horn_help: "termina el período",
      tk_split: "Bocina dividida",
      tk_split_help: "una detención, el período sigue",
      yellow: "Amarilla",
      yellow2: "2 amarillas",
      yellow3: "3 amarillas",
      red: "Roja",
      conduct: "Conducta",
      penalty: "Penal (opcional)",
      penalty_ph: "p. ej. 2",
      record: "Registrar",
      pick_conduct: "Elija la conducta",
      cancel: "Cancelar",
      home: "Local",
      away: "Visitante",
      points: "Puntos",
      pts1: "1 punto",
      pts2: "2 puntos",
      team: "Equipo",
      scorer: "Autor (opcional)",
      no_scorer: "Sin autor",
      sub_out: "Sale",
      sub_in: "Entra",
      sub_pick_in: "¿Quién entra?",
      sub_pick_out: "¿Quién sale?",
      mount_unfit: "No apto",
      mount_abuse: "Maltrato",
      mount_reason: "Motivo",
      pg_level: "Sanción",
      pg_2y: "2 amarillas",
      pg_3y: "3 amarillas",
      pg_red: "Roja",
      void_title: "Anular un evento reciente",
      void_none: "No hay nada reciente para anular.",
      void_confirm: "¿Anular este evento?",
      void_explain: "Se quita del partido (un gol anulado no vale: se restan sus puntos y la detención se mantiene) y se recalcula todo lo posterior. No se puede deshacer desde aquí.",
      void_do: "Anularlo",
      keep: "Conservarlo",
      end_title: "¿Terminar el partido?",
      end_explain: "Después, las tarjetas son tarjetas posteriores al partido.",
      end_shootout: "Definido por shootout (Regla de Arena 5.c(2))",
      end_do: "Terminar el partido",
      arena_warn: "Abandonar la arena sin permiso es tarjeta roja automática (Regla 14).",
      box_warn: "El jugador vuelve al área de castigo por el resto del tiempo y dos minutos de juego más (Regla 14).",
      st_scheduled: "sin empezar",
      st_live: "en juego",
      st_ended: "terminado",
      period: "P{n}",
      of_periods: "Período {n} de {of}",
      overtime: "Supl.",
      running: "en marcha",
      stopped: "detenido",
      tag_box: "ÁREA {t}",
      tag_out_next: "SALE EN LA DETENCIÓN",
      tag_sent_off: "EXPULSADO",
      tag_no_sub: "SIN SUST. {t}",
      tag_sub_ok: "SUST. OK",
      tag_susp: "SUSPENDIDO",
      tag_mount: "CABALLO {t}",
      tag_mount_over: "TIEMPO DE CABALLO AGOTADO",
      tag_bench: "banco",
      bench: "Banco",
      no_view: "Esperando el estado del partido… (aparece en cuanto se conecta)",
      pick_game: "Este token es para la arena {arena}. ¿Qué partido?",
      no_games: "Todavía no hay partidos en esta arena.",
      role_umpire: "Umpire",
      role_referee: "Referí",
      role_timekeeper: "Cronometrista",
      role_admin: "Administrador",
      saved: "Guardado: {what}",
      signed_in_as: "{official} · {role} · dispositivo {device}",
      token_exp: "Token válido hasta {time}",
      others: "Conectados para este partido",
      nobody: "ningún otro dispositivo",
      sign_out: "Cerrar sesión en este dispositivo",
      sign_out_pending: "Hay {n} eventos sin enviar. Quedan en este dispositivo y se envían cuando el dispositivo {device} vuelva a iniciar sesión. ¿Cerrar sesión?",
      reload_offline: "Funciona sin conexión: los eventos quedan guardados aquí y se envían cuando vuelve la red.",
      game_end_ev: "Fin del partido",
      whistle_ev: "Silbato",
      clock_start_ev: "Reloj en marcha",
      clock_stop_ev: "Reloj detenido",
      horn_ev: "Bocina",
      split_ev: "Bocina (período dividido)",
      goal_ev: "Gol {team}{who} · {pts}",
      card_ev: "{card} · {player} · {conduct}",
      box_ev: "Salió antes del área de castigo · {player}",
      arena_ev: "Abandonó la arena · {player}",
      sub_ev: "Sustitución {team}: entra {in} por {out}",
      mount_removed_ev: "Caballo retirado ({why}) · {player}",
      mount_replaced_ev: "Caballo reemplazado · {player}",
      postgame_ev: "Después del partido: {level} · {player}",
      void_ev: "Anulación: {what}",
      with_penalty: " · penal {p}",
      pt: "{n} pt",
      lang_switch: "EN",
      lang_name: "English",
      denied_help: "Inicie sesión de nuevo con un token nuevo.",
      clock: "Reloj",
      n_yellows: "{n} amarilla(s) en el partido",
      this_device: "este dispositivo",
      sign_in_again: "Iniciar sesión de nuevo",
      elsewhere: "{n} evento(s) sin enviar del partido {games} esperan en este dispositivo un token de ese partido.",
      in_box: "en el área de castigo",
      alert: "Alerta",
      alerts_n: "{n} alertas",
      alert_ok: "Entendido",
      tag_no_shootout: "FUERA DEL SHOOTOUT",
    },
  };

  // ------------------------------------------------------------------ state

  const params = new URLSearchParams(location.search);
  let lang = pickLang();
  const LS = {
    token: "arena.handheld.token",
    lang: "arena.handheld.lang",
    game: "arena.handheld.game",
    watch: (game) => "arena.handheld.watch." + game,
    alerts: (game) => "arena.handheld.alerts." + game,
  };

  const S = {
    token: null, claims: null, device: null, role: null, game: null, arena: null,
    view: null, seq: 0, epoch: null, notices: [], arenaGames: {},
    alerts: [], dismissed: [],         // alerts shown until dismissed; the keys of dismissed ones
    entries: [],                       // this device's outbox, oldest first
    offset: 0, offsetFromDevice: false, // server clock − device clock, ms
    dev: { ws: null, state: "idle", ready: false, welcome: null, waiter: null, attempt: 0,
           lastHeard: 0, rtt: null, opened: 0, retryTimer: 0, syncTimer: 0, denied: null, lastPing: 0 },
    feed: { ws: null, state: "idle", lastBeat: 0, interval: 5000, attempt: 0, retryTimer: 0, opened: 0,
            error: null },
    pumping: false, pumpAgain: false,
    sheet: null, actionAt: null,
  };
  let db = null;
  const bc = "BroadcastChannel" in self ? new BroadcastChannel("arena-handheld") : null;

  function pickLang() {
    const q = (params.get("lang") || "").toLowerCase();
    if (q === "es" || q === "en") return q;
    let saved = null;
    try { saved = localStorage.getItem("arena.handheld.lang"); } catch { /* private mode */ }
    if (saved === "es" || saved === "en") return saved;
    return (navigator.language || "en").toLowerCase().startsWith("es") ? "es" : "en";
  }

  function t(key, vars) {
    let s = I18N[lang][key] ?? I18N.en[key] ?? key;
    if (vars) s = s.replace(/\{(\w+)\}/g, (_, k) => (vars[k] ?? ""));
    return s;
  }
  const L = (pair) => (pair ? pair[lang === "es" ? 1 : 0] : "");

  function lsGet(key) { try { return localStorage.getItem(key); } catch { return null; } }
  function lsSet(key, value) {
    try { if (value == null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* full */ }
  }

  // ------------------------------------------------------------------ DOM

  const $ = (sel) => document.querySelector(sel);

  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid == null || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  function esc(s) {
    return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  /** Replace an element's content only when it changed (a tap in progress survives). */
  function setHTML(el, html) {
    if (el && el.__html !== html) { el.innerHTML = html; el.__html = html; }
  }

  function mmss(ms) {
    ms = Math.max(0, Math.ceil(ms / 1000) * 1000);
    const s = Math.floor(ms / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }
  function hhmmss(at) {
    return new Date(at).toLocaleTimeString(lang === "es" ? "es" : "en-GB", { hour12: false });
  }
  const serverNow = () => Date.now() + S.offset;
  const ago = (ms) => t("ago", { s: Math.max(0, Math.round((Date.now() - ms) / 1000)) });

  // ------------------------------------------------------------------ token

  function decodeToken(token) {
    try {
      const parts = token.trim().split(".");
      if (parts.length !== 3 || parts[0] !== "v1") return null;
      const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
      const json = decodeURIComponent(escape(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))));
      const claims = JSON.parse(json);
      return claims && typeof claims.sub === "string" && typeof claims.role === "string" ? claims : null;
    } catch {
      return null;
    }
  }

  /** #token=… in the fragment (never sent to the server): keep it, drop it from the URL. */
  function tokenFromFragment() {
    const frag = new URLSearchParams(location.hash.replace(/^#/, ""));
    const token = frag.get("token");
    if (!token) return null;
    frag.delete("token");
    const rest = frag.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
    return token;
  }

  // ------------------------------------------------------------------ outbox (IndexedDB)

  function openDB() {
    return new Promise((resolve, reject) => {
      const req = indexedDB.open("arena-handheld", 1);
      req.onupgradeneeded = () => {
        const store = req.result.createObjectStore("outbox", { keyPath: "n", autoIncrement: true });
        store.createIndex("device", "device");
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }

  /** Write an entry and wait until the transaction is committed (durable). */
  function dbPut(entry) {
    return new Promise((resolve, reject) => {
      let tx;
      try { tx = db.transaction("outbox", "readwrite", { durability: "strict" }); }
      catch { tx = db.transaction("outbox", "readwrite"); }
      const req = tx.objectStore("outbox").put(entry);
      let key;
      req.onsuccess = () => { key = req.result; };
      tx.oncomplete = () => resolve(key);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }

  function dbAll(device) {
    return new Promise((resolve, reject) => {
      const req = db.transaction("outbox").objectStore("outbox").index("device").getAll(device);
      req.onsuccess = () => resolve(req.result.sort((a, b) => a.n - b.n));
      req.onerror = () => reject(req.error);
    });
  }

  function dbDelete(keys) {
    return new Promise((resolve, reject) => {
      const tx = db.transaction("outbox", "readwrite");
      for (const k of keys) tx.objectStore("outbox").delete(k);
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
  }

  async function pruneEntries() {
    const old = Date.now() - 3 * 86400000;
    const done = (await dbAll(S.device)).filter((e) => (e.state === "acked" || e.state === "refused") && e.created < old);
    if (done.length) await dbDelete(done.map((e) => e.n));
  }

  async function reloadEntries() {
    if (!db || !S.device) return;
    S.entries = await dbAll(S.device);
    render();
  }

  function keepEntry(entry) {
    const i = S.entries.findIndex((e) => e.n === entry.n);
    if (i >= 0) S.entries[i] = entry; else S.entries.push(entry);
  }

  async function saveEntry(entry) {
    entry.n = await dbPut(entry);
    keepEntry(entry);
    if (bc) bc.postMessage({ kind: "outbox", device: S.device });
    render();
    return entry;
  }

  function newId() {
    const b = new Uint8Array(10);
    crypto.getRandomValues(b);     // works without a secure context, unlike randomUUID
    return "hh-" + Date.now().toString(36) + "-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  /** When the current action started: the tap on the player or on the action, if recent. */
  function actionMoment() {
    const at = S.actionAt;
    S.actionAt = null;
    return at && Date.now() - at < 60000 ? at : Date.now();
  }

  /** Record an event: into the outbox first (durably), then to the server. */
  async function record(type, fields) {
    if (!db) { toast("IndexedDB unavailable: nothing recorded", "bad"); return null; }
    const event = { id: newId(), type, game: S.game, at: actionMoment(), ...fields };
    const entry = {
      device: S.device, id: event.id, game: S.game, type,
      body: JSON.stringify(event),     // the exact bytes, resent as they are
      state: "queued", created: event.at, tries: 0,
    };
    await saveEntry(entry);
    toast(t("saved", { what: describe(event) }));
    pump();
    return entry;
  }

  const unanswered = (e) => e.state === "queued" || e.state === "sent";
  // A game-scoped token can send only its game's events: another game's leftovers (same device
  // name, an earlier token) wait for a token of their own rather than being refused.
  const inScope = (e) => !S.claims || !S.claims.game || e.game === S.claims.game;
  const pendingEntries = () => S.entries.filter((e) => unanswered(e) && inScope(e));
  const waitingElsewhere = () => S.entries.filter((e) => unanswered(e) && !inScope(e));

  // ------------------------------------------------------------------ sending

  function withLock(fn) {
    // One sender per device across this browser's tabs (another tab may hold the same token).
    if (navigator.locks && navigator.locks.request) return navigator.locks.request("arena-outbox:" + S.device, fn);
    return fn();
  }

  async function pump() {
    if (S.pumping) { S.pumpAgain = true; return; }
    S.pumping = true;
    try {
      do {
        S.pumpAgain = false;
        while (S.dev.ready && (await withLock(sendNext))) { /* one at a time, in order */ }
      } while (S.pumpAgain && S.dev.ready);
    } finally {
      S.pumping = false;
    }
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /** Send the oldest unanswered entry and wait for its one answer. False: stop for now. */
  async function sendNext() {
    const fresh = await dbAll(S.device);   // another tab may have sent some
    S.entries = fresh;
    const entry = fresh.find((e) => unanswered(e) && inScope(e));
    const ws = S.dev.ws;
    if (!entry || !S.dev.ready || !ws) { render(); return false; }
    entry.state = "sent";
    entry.tries = (entry.tries || 0) + 1;
    entry.sentAt = Date.now();
    await saveEntry(entry);
    let reply;
    try {
      reply = await sendAndWait(ws, entry);
    } catch {
      return false;                        // connection lost: stays "sent", resent after reconnecting
    }
    if (reply.type === "ack") {
      addAlerts(reply.notices, entry.game);
      entry.state = "acked";
      entry.ack = { log_id: reply.log_id, seq: reply.seq, at: reply.at, duplicate: !!reply.duplicate };
      if (!reply.duplicate || !entry.notices) {
        entry.notices = (reply.notices || []).map((n) => ({ type: n.type, text: n.text, clause: n.clause, cause: n.cause }));
      }
      delete entry.note;
      await saveEntry(entry);
      return true;
    }
    if (reply.retry) {                      // nothing was stored: the same event again, after a pause
      entry.state = "queued";
      entry.note = reply.code;
      await saveEntry(entry);
      await sleep(Math.min(2000, 50 * 2 ** Math.min(entry.tries, 6)));
      return true;
    }
    entry.state = "refused";               // final: shown with its reason, never resent
    entry.error = { code: reply.code, detail: reply.detail, clause: reply.clause };
    delete entry.note;
    await saveEntry(entry);
    toast(`${t("st_refused")}: ${describe(JSON.parse(entry.body))} — ${reasonText(entry.error)}`, "bad");
    if (navigator.vibrate) navigator.vibrate([120, 80, 120]);
    return true;
  }

  function sendAndWait(ws, entry) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (S.dev.waiter && S.dev.waiter.id === entry.id) S.dev.waiter = null;
        reject(new Error("no answer"));
        dropDevice();                       // a stuck socket: start over
      }, 15000);
      S.dev.waiter = {
        id: entry.id,
        resolve: (msg) => { clearTimeout(timer); resolve(msg); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
      try {
        ws.send('{"type":"send","event":' + entry.body + "}");
      } catch (err) {
        S.dev.waiter = null;
        clearTimeout(timer);
        reject(err);
      }
    });
  }

  // ------------------------------------------------------------------ /ws/device

  function wsUrl(path) {
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
  }

  function connectDevice(force) {
    if (!S.token || S.dev.ws || S.dev.denied) return;
    clearTimeout(S.dev.retryTimer);
    if (navigator.onLine === false && !force) {
      // Wait for the "online" event; try anyway now and then, in case the browser is wrong.
      S.dev.state = "offline";
      S.dev.retryTimer = setTimeout(() => connectDevice(true), 15000);
      renderConn();
      return;
    }
    let ws;
    try { ws = new WebSocket(wsUrl("/ws/device")); } catch { scheduleDevice(); return; }
    Object.assign(S.dev, { ws, state: "connecting", ready: false, welcome: null, opened: Date.now() });
    ws.onopen = () => { if (ws === S.dev.ws) ws.send(JSON.stringify({ type: "auth", token: S.token })); };
    ws.onmessage = (ev) => onDeviceFrame(ws, ev.data);
    ws.onclose = () => onDeviceClosed(ws);
    ws.onerror = () => { /* onclose follows */ };
    renderConn();
  }

  function onDeviceFrame(ws, data) {
    if (ws !== S.dev.ws) return;
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    S.dev.lastHeard = Date.now();
    switch (msg.type) {
      case "welcome":
        S.dev.welcome = msg;
        S.dev.state = "syncing";
        S.dev.attempt = 0;
        if (!S.offsetFromDevice) S.offset = msg.server_time - Date.now();
        // The server pings right after welcome: answer it before resending (clock sync).
        S.dev.syncTimer = setTimeout(() => markReady(ws), 1500);
        break;
      case "ping":
        ws.send(JSON.stringify({ type: "pong", server_time: msg.server_time, device_time: Date.now() }));
        if (S.dev.welcome && !S.dev.ready) markReady(ws);
        break;
      case "pong":
        if (typeof msg.device_time === "number") {
          const rtt = Date.now() - msg.device_time;
          if (rtt >= 0 && rtt < 5000 && (S.dev.rtt == null || rtt <= S.dev.rtt * 2)) {
            S.offset = msg.server_time + rtt / 2 - Date.now();
            S.offsetFromDevice = true;
          }
          S.dev.rtt = rtt;
        }
        break;
      case "ack":
      case "error":
        if (msg.type === "error" && !S.dev.welcome) { authRefused(msg); break; }
        if (S.dev.waiter && (msg.id === S.dev.waiter.id || msg.id == null)) {
          const w = S.dev.waiter;
          S.dev.waiter = null;
          w.resolve(msg);
        }
        break;
      default:
        break;
    }
    renderConn();
  }

  function markReady(ws) {
    if (ws !== S.dev.ws || S.dev.ready) return;
    clearTimeout(S.dev.syncTimer);
    S.dev.ready = true;
    S.dev.state = "online";
    S.dev.lastPing = Date.now();
    try { ws.send(JSON.stringify({ type: "ping", device_time: Date.now() })); } catch { /* closing */ }
    renderConn();
    pump();
  }

  function authRefused(msg) {
    if (msg.code === "too_many_connections") { S.dev.attempt = Math.max(S.dev.attempt, 4); return; }
    S.dev.denied = msg;                    // a bad, expired or revoked token: no point retrying
    S.dev.state = "denied";
  }

  function onDeviceClosed(ws) {
    if (ws !== S.dev.ws) return;
    clearTimeout(S.dev.syncTimer);
    const waiter = S.dev.waiter;
    Object.assign(S.dev, { ws: null, ready: false, welcome: null, waiter: null });
    if (waiter) waiter.reject(new Error("connection lost"));
    if (!S.dev.denied) {
      S.dev.state = navigator.onLine === false ? "offline" : "retry";
      scheduleDevice();
    }
    renderConn();
  }

  function dropDevice() {
    const ws = S.dev.ws;
    if (!ws) return;
    onDeviceClosed(ws);
    try { ws.close(); } catch { /* already gone */ }
  }

  function scheduleDevice() {
    clearTimeout(S.dev.retryTimer);
    const delay = Math.min(10000, 500 * 2 ** S.dev.attempt++);
    S.dev.retryTimer = setTimeout(() => connectDevice(), delay);
  }

  // ------------------------------------------------------------------ /ws/watch

  function connectWatch(force) {
    if (S.feed.ws || (!S.game && !S.arena)) return;
    clearTimeout(S.feed.retryTimer);
    if (navigator.onLine === false && !force) {
      S.feed.state = "offline";
      S.feed.retryTimer = setTimeout(() => connectWatch(true), 15000);
      renderConn();
      return;
    }
    const q = new URLSearchParams();
    if (S.game) {
      q.set("game", S.game);
      if (S.epoch && S.seq) { q.set("since", String(S.seq)); q.set("epoch", S.epoch); }
    } else {
      q.set("arena", S.arena);
    }
    let ws;
    try { ws = new WebSocket(wsUrl("/ws/watch?" + q)); } catch { scheduleWatch(); return; }
    Object.assign(S.feed, { ws, state: "connecting", opened: Date.now(), lastBeat: 0 });
    ws.onopen = () => {
      if (ws !== S.feed.ws) return;
      // Already following from the URL on a public service: this does nothing. A service
      // without public viewing answers auth_required, and then gets this device's token.
      ws.send(JSON.stringify(S.game ? { type: "subscribe", game: S.game } : { type: "subscribe", arena: S.arena }));
      // A resumed feed that is already current gets no frame until the next heartbeat: the pong
      // says the feed is up (and gives the server's clock).
      ws.send(JSON.stringify({ type: "ping", device_time: Date.now() }));
    };
    ws.onmessage = (ev) => onWatchFrame(ws, ev.data);
    ws.onclose = () => onWatchClosed(ws);
    ws.onerror = () => { /* onclose follows */ };
    renderConn();
  }

  function onWatchFrame(ws, data) {
    if (ws !== S.feed.ws) return;
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    S.feed.lastBeat = Date.now();
    switch (msg.type) {
      case "snapshot":
        S.feed.state = "live";
        S.feed.attempt = 0;
        if (!S.game) { S.arenaGames[msg.game] = msg.view; render(); break; }
        if (msg.game !== S.game) break;
        S.view = msg.view;
        S.seq = msg.seq;
        S.epoch = msg.epoch;
        if (msg.reset || !S.notices.length) S.notices = (msg.recent || []).slice(-60);
        addAlerts(msg.recent, msg.game);
        saveWatch();
        render();
        break;
      case "delta":
        if (msg.game !== S.game) break;
        S.feed.state = "live";
        S.feed.attempt = 0;
        if (msg.seq <= S.seq) break;
        if (!S.view || msg.seq !== S.seq + 1) { dropWatch(); break; }  // a gap: resume
        S.view = applyPatch(S.view, msg.patch);
        S.seq = msg.seq;
        if (msg.notices && msg.notices.length) S.notices = S.notices.concat(msg.notices).slice(-60);
        addAlerts(msg.notices, msg.game);
        saveWatch();
        render();
        break;
      case "pong":
        if (S.feed.state !== "live" && (S.view || !S.game)) S.feed.state = "live";
        if (!S.offsetFromDevice && typeof msg.device_time === "number") {
          S.offset = msg.server_time + (Date.now() - msg.device_time) / 2 - Date.now();
        }
        break;
      case "presence":
        if (msg.game === S.game) { S.presence = msg.devices || []; renderAbout(); }
        break;
      case "heartbeat":
        S.feed.interval = msg.interval_ms || 5000;
        if (!S.offsetFromDevice) S.offset = msg.server_time - Date.now();
        if (S.feed.state !== "live" && (S.view || !S.game)) S.feed.state = "live";
        if (S.game && msg.seqs && (msg.seqs[S.game] ?? 0) > S.seq) dropWatch();   // missed something
        break;
      case "error":
        if (msg.code === "auth_required" && S.token) {
          ws.send(JSON.stringify({ type: "auth", token: S.token }));
        } else {
          S.feed.error = msg;
        }
        break;
      default:
        break;
    }
    renderConn();
  }

  function applyPatch(view, patch) {   // docs/protocol.md, "Applying a patch"
    for (const [path, value] of patch) {
      if (path === "") { view = value; continue; }
      const keys = path.split(".");
      const last = keys.pop();
      let node = view;
      for (const k of keys) {
        node = Array.isArray(node) ? node.find((x) => x && x.id === k) : node?.[k];
        if (node == null) break;
      }
      if (node == null) continue;
      if (!Array.isArray(node)) { node[last] = value; continue; }
      const i = node.findIndex((x) => x && x.id === last);
      if (value === null) { if (i >= 0) node.splice(i, 1); } else if (i < 0) node.push(value); else node[i] = value;
    }
    return view;
  }

  function saveWatch() {
    if (!S.game) return;
    lsSet(LS.watch(S.game), JSON.stringify({ view: S.view, seq: S.seq, epoch: S.epoch, notices: S.notices }));
  }

  function loadWatch() {
    try {
      const saved = JSON.parse(lsGet(LS.watch(S.game)) || "null");
      if (saved && saved.view) Object.assign(S, { view: saved.view, seq: saved.seq, epoch: saved.epoch, notices: saved.notices || [] });
    } catch { /* ignore a damaged copy */ }
  }

  // ------------------------------------------------------------------ alerts

  /** The same alert reaches this page twice (the ack, then the feed's delta): one key for both. */
  const alertKey = (n) => [n.cause, n.code, n.subject || "", n.player || "", n.at].join("|");

  /** Keep every new `alert` among ``notices`` until it is dismissed. */
  function addAlerts(notices, game) {
    let added = 0;
    for (const n of notices || []) {
      if (!n || n.type !== "alert" || !n.text) continue;
      const key = alertKey(n);
      if (S.dismissed.includes(key) || S.alerts.some((a) => a.key === key)) continue;
      S.alerts.push({ key, code: n.code, text: n.text, clause: n.clause, cause: n.cause, at: n.at,
        game: n.game || game || S.game });
      added += 1;
    }
    if (!added) return;
    S.alerts.sort((a, b) => a.at - b.at);
    saveAlerts();
    renderAlerts();
    if (navigator.vibrate) navigator.vibrate([200, 100, 200, 100, 200]);
  }

  function dismissAlert(key) {
    S.alerts = S.alerts.filter((a) => a.key !== key);
    S.dismissed = S.dismissed.concat(key).slice(-300);
    saveAlerts();
    renderAlerts();
  }

  function saveAlerts() {
    if (S.game) lsSet(LS.alerts(S.game), JSON.stringify({ alerts: S.alerts, dismissed: S.dismissed }));
  }

  function loadAlerts() {
    S.alerts = [];
    S.dismissed = [];
    try {
      const saved = JSON.parse((S.game && lsGet(LS.alerts(S.game))) || "null");
      if (saved) Object.assign(S, { alerts: saved.alerts || [], dismissed: saved.dismissed || [] });
    } catch { /* ignore a damaged copy */ }
  }

  function onWatchClosed(ws) {
    if (ws !== S.feed.ws) return;
    S.feed.ws = null;
    S.feed.state = navigator.onLine === false ? "offline" : "connecting";
    scheduleWatch();
    renderConn();
  }

  function dropWatch() {
    const ws = S.feed.ws;
    if (!ws) return;
    onWatchClosed(ws);
    try { ws.close(); } catch { /* gone */ }
  }

  function scheduleWatch() {
    clearTimeout(S.feed.retryTimer);
    S.feed.retryTimer = setTimeout(() => connectWatch(), Math.min(10000, 500 * 2 ** S.feed.attempt++));
  }

  // Watchdogs: a device socket that says nothing for 15 s, or a feed without two
  // heartbeats, is dead even if the browser hasn't noticed.
  function watchdog() {
    const now = Date.now();
    const d = S.dev;
    if (d.ws) {
      if (!d.welcome && now - d.opened > 10000) dropDevice();
      else if (d.welcome && now - d.lastHeard > 15000) dropDevice();
      else if (d.ready && now - d.lastPing > 5000 && now - d.lastHeard > 4000) {
        d.lastPing = now;
        try { d.ws.send(JSON.stringify({ type: "ping", device_time: now })); } catch { /* closing */ }
      }
    }
    // Two missed heartbeats make the feed stale (docs/protocol.md), but never under 2.5 s:
    // a busy phone or server should not freeze the clock for a hiccup.
    const f = S.feed;
    if (f.ws) {
      if (f.lastBeat === 0 && now - f.opened > 10000) dropWatch();
      else if (f.lastBeat && now - f.lastBeat > Math.max(2 * f.interval, 2500)) { f.state = "stale"; }
      if (f.lastBeat && now - f.lastBeat > Math.max(3 * f.interval, 4000)) dropWatch();
    }
  }

  addEventListener("offline", () => { dropDevice(); dropWatch(); S.dev.state = "offline"; S.feed.state = "offline"; renderConn(); });
  addEventListener("online", () => {
    S.dev.attempt = 0;
    S.feed.attempt = 0;
    connectDevice();
    connectWatch();
  });

  // ------------------------------------------------------------------ game state helpers

  const player = (pid) => (S.view && S.view.players ? S.view.players.find((p) => p.id === pid) : null);
  const teamName = (side) => (S.view && S.view.teams && S.view.teams[side] ? S.view.teams[side].team : t(side));
  const sideOf = (pid) => { const p = player(pid); return p ? p.side : null; };
  const isOfficial = () => S.role === "umpire" || S.role === "referee" || S.role === "admin";
  const isTimekeeper = () => S.role === "timekeeper" || S.role === "admin";

  function clockFigures() {
    const c = S.view && S.view.clock;
    if (!c) return null;
    const stale = S.feed.state === "stale" || S.feed.state === "offline";
    const run = c.running && !stale;
    const remaining = run ? Math.max(0, c.remaining_ms - (serverNow() - c.at)) : c.remaining_ms;
    return { ...c, left: remaining, stale };
  }

  function tickValue(el) {
    const kind = el.dataset.tick;
    if (kind === "clock") { const c = clockFigures(); return c ? mmss(c.left) : "–:––"; }
    const ms = Number(el.dataset.ms);
    if (kind === "play") {               // box or no-sub time: falls only while the clock runs
      const c = clockFigures();
      const run = c && c.running && !c.stale;
      const left = run ? ms - (serverNow() - Number(el.dataset.at)) : ms;
      return t(el.dataset.key, { t: mmss(left) });
    }
    if (kind === "wall") {               // a mount's 5:00: wall-clock time
      const left = Number(el.dataset.deadline) - serverNow();
      return left > 0 ? t("tag_mount", { t: mmss(left) }) : t("tag_mount_over");
    }
    return el.textContent;
  }

  function tick() {
    watchdog();
    for (const el of document.querySelectorAll("[data-tick]")) {
      const v = tickValue(el);
      if (el.textContent !== v) el.textContent = v;
    }
    renderConn();
  }

  // ------------------------------------------------------------------ describing events

  function conductLabel(code) {
    const c = CONDUCTS.find((x) => x[0] === code);
    return c ? (lang === "es" ? c[2] : c[1]) : code;
  }

  function cardName(color, count) {
    if (color === "red") return t("red");
    return count === 3 ? t("yellow3") : count === 2 ? t("yellow2") : t("yellow");
  }

  function describe(ev) {
    const pen = ev.penalty != null && ev.penalty !== "" ? t("with_penalty", { p: ev.penalty }) : "";
    switch (ev.type) {
      case "whistle": return t("whistle_ev");
      case "clock.start": return t("clock_start_ev");
      case "clock.stop": return t("clock_stop_ev");
      case "horn": return ev.split ? t("split_ev") : t("horn_ev");
      case "game.end": return t("game_end_ev") + (ev.shootout ? " (shootout)" : "");
      case "goal": return t("goal_ev", {
        team: teamName(ev.team), who: ev.player ? " · " + ev.player : "", pts: t("pt", { n: ev.points || 1 }) });
      case "card": return t("card_ev", {
        card: cardName(ev.color, ev.count || 1), player: ev.player || (ev.official ? `${teamName(ev.official.team)} ${ev.official.role}` : ""),
        conduct: conductLabel(ev.conduct) }) + pen;
      case "box.left_early": return t("box_ev", { player: ev.player }) + pen;
      case "arena.left": return t("arena_ev", { player: ev.player }) + pen;
      case "substitution": return t("sub_ev", { team: teamName(ev.team), in: ev.in, out: ev.out });
      case "mount.removed": return t("mount_removed_ev", {
        why: ev.reason === "abuse" ? t("mount_abuse") : t("mount_unfit"), player: ev.player }) + pen;
      case "mount.replaced": return t("mount_replaced_ev", { player: ev.player });
      case "postgame.card": return t("postgame_ev", {
        level: ev.level === "red" ? t("pg_red") : ev.level === "3y" ? t("pg_3y") : t("pg_2y"), player: ev.player });
      case "void": return t("void_ev", { what: labelOf(ev.target) });
      default: return ev.type;
    }
  }

  /** What a log id refers to, in words: one of this device's events, or a notice it caused. */
  function labelOf(logId) {
    const own = S.entries.find((e) => e.ack && e.ack.log_id === logId);
    if (own) return describe(JSON.parse(own.body));
    const n = S.notices.find((x) => x.cause === logId && x.text);
    return n ? stripCitation(L([n.text.en, n.text.es])) : logId;
  }

  const stripCitation = (s) => String(s || "").replace(/\s*\([^()]*·[^()]*\)\s*$/, "");

  function reasonText(err) {
    const pair = REASONS[err.code];
    if (lang === "es") return pair ? pair[1] : err.detail || err.code;
    return err.detail || (pair ? pair[0] : err.code);
  }
  function clauseText(clause) {
    if (!clause) return "";
    const c = CLAUSES[clause];
    return c ? `${clause} · ${L(c)}` : clause;
  }

  function voidedTargets() {
    const out = new Set();
    for (const n of S.notices) if (n.type === "correction" && n.reason === "void" && n.target) out.add(n.target);
    for (const e of S.entries) {
      if (e.type === "void" && e.state === "acked") out.add(JSON.parse(e.body).target);
    }
    return out;
  }

  /** Recent events that could be voided: this device's acked ones and the feed's causes. */
  function recentEvents() {
    const voided = voidedTargets();
    const items = [];
    const seen = new Set();
    const clockOnly = S.role === "timekeeper";
    for (const e of S.entries) {
      if (e.state !== "acked" || !e.ack || e.type === "void" || e.game !== S.game) continue;
      if (clockOnly && !["clock.start", "clock.stop", "horn"].includes(e.type)) continue;
      seen.add(e.ack.log_id);
      if (voided.has(e.ack.log_id)) continue;
      items.push({ logId: e.ack.log_id, label: describe(JSON.parse(e.body)), at: e.ack.at, own: true });
    }
    // Other devices' events, each named by its first notice (the card, the goal, …).
    for (const n of S.notices) {
      if (!n.cause || !n.text || seen.has(n.cause) || n.cause.startsWith("admin/")) continue;
      if (["correction", "rejected", "game.ready", "alert"].includes(n.type) || n.type.startsWith("obligation.")) continue;
      if (clockOnly && n.type !== "clock") continue;
      seen.add(n.cause);
      if (voided.has(n.cause)) continue;
      items.push({ logId: n.cause, label: stripCitation(L([n.text.en, n.text.es])), at: n.at, own: false });
    }
    return items.sort((a, b) => b.at - a.at).slice(0, 12);
  }

  // ------------------------------------------------------------------ rendering

  function render() {
    document.documentElement.lang = lang;
    document.documentElement.classList.remove("boot");
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    const signedIn = !!S.claims;
    $("#signin").hidden = signedIn;
    const needGame = signedIn && !S.game;
    $("#picker").hidden = !needGame;
    $("#official").hidden = !signedIn || needGame || !isOfficial();
    $("#timekeeper").hidden = !signedIn || needGame || !isTimekeeper();
    $("#outbox-section").hidden = !signedIn;
    $("#feed-section").hidden = !signedIn || needGame;
    $("#about").hidden = !signedIn;
    $("#actions").hidden = !signedIn || needGame;
    document.body.dataset.role = S.role || "";
    document.body.dataset.status = (S.view && S.view.status) || "";
    document.body.dataset.feed = S.feed.state;
    renderScore();
    renderConn();
    renderAlerts();
    if (needGame) renderPicker();
    if (isOfficial()) renderRoster();
    if (isTimekeeper()) renderTimekeeper();
    renderActions();
    renderOutbox();
    renderFeed();
    renderAbout();
    tickTexts();
  }

  function tickTexts() {
    for (const el of document.querySelectorAll("[data-tick]")) {
      const v = tickValue(el);
      if (el.textContent !== v) el.textContent = v;
    }
  }

  function renderScore() {
    const el = $("#scoreline");
    if (!S.claims) { setHTML(el, `<div class="brand">Arena Stream</div>${langButton()}`); return; }
    const v = S.view;
    if (!v) {
      setHTML(el, `<div class="brand">${esc(S.game || S.arena || "")}</div>${langButton()}`);
      return;
    }
    const c = v.clock;
    const period = c.overtime ? t("overtime") : t("period", { n: c.period });
    setHTML(el, `
      <div class="side home"><span class="tname">${esc(v.teams.home.team)}</span><span class="goals" data-score="home">${v.score.home}</span></div>
      <div class="mid">
        <span class="clock ${c.running ? "running" : ""}" data-tick="clock"></span>
        <span class="period">${esc(period)} · ${esc(t("st_" + v.status))}</span>
      </div>
      <div class="side away"><span class="goals" data-score="away">${v.score.away}</span><span class="tname">${esc(v.teams.away.team)}</span></div>
      ${langButton()}`);
  }

  function langButton() {
    return `<button type="button" class="lang" data-act="lang" aria-label="${esc(t("lang_name"))}">${esc(t("lang_switch"))}</button>`;
  }

  function renderConn() {
    const el = $("#conn");
    document.body.dataset.feed = S.feed.state;
    if (!S.claims) { setHTML(el, ""); return; }
    const d = S.dev;
    const devState = { idle: "dev_connecting", connecting: "dev_connecting", syncing: "dev_syncing", online: "dev_online",
      offline: "dev_offline", retry: "dev_retry", denied: "dev_denied" }[d.state] || "dev_connecting";
    const devExtra = d.state === "online" && d.lastHeard
      ? ` · ${t("heard", { ago: ago(d.lastHeard) })}${d.rtt != null ? ` · ${d.rtt} ms` : ""}` : "";
    const f = S.feed;
    const feedKey = { live: "feed_live", stale: "feed_stale", offline: "feed_offline" }[f.state] || "feed_connecting";
    const feedExtra = f.lastBeat ? ` · ${t("beat", { ago: ago(f.lastBeat) })}` : "";
    const n = pendingEntries().length;
    setHTML(el, `
      <span class="pill dev-${esc(d.state)}" data-conn="device" data-state="${esc(d.state)}"><i></i>${esc(t("dev"))}: ${esc(t(devState))}${esc(devExtra)}</span>
      <span class="pill feed-${esc(f.state)}" data-conn="feed" data-state="${esc(f.state)}"><i></i>${esc(t("feed"))}: ${esc(t(feedKey))}${esc(feedExtra)}</span>
      <span class="pill ${n ? "pending" : "clear"}" data-conn="outbox" data-pending="${n}"><i></i>${esc(n ? t("pending", { n }) : t("all_sent"))}</span>
      ${d.denied ? `<p class="error">${esc(reasonText(d.denied))}. ${esc(t("denied_help"))}
        <button type="button" class="relogin" data-act="signout">${esc(t("sign_in_again"))}</button></p>` : ""}`);
  }

  /** Alerts on top of the page, oldest first. Nodes are kept by key, so an alert that is
   * already shown is not redrawn (nor animated in again) when another arrives. */
  function renderAlerts() {
    const el = $("#alerts");
    const shown = S.claims ? S.alerts.filter((a) => !S.game || a.game === S.game) : [];
    el.hidden = !shown.length;
    document.body.dataset.alerts = String(shown.length);
    let headEl = el.querySelector(".alerts-head");
    if (shown.length > 1) {
      if (!headEl) { headEl = h("p", { class: "alerts-head" }); el.prepend(headEl); }
      headEl.textContent = t("alerts_n", { n: shown.length });
    } else if (headEl) {
      headEl.remove();
    }
    const nodes = new Map([...el.querySelectorAll(".alert")].map((n) => [n.dataset.key, n]));
    const keep = new Set(shown.map((a) => a.key));
    for (const [key, node] of nodes) if (!keep.has(key)) node.remove();
    let before = null;                   // the node the next alert goes after
    for (const a of shown) {
      let node = nodes.get(a.key);
      if (!node) {
        node = h("div", { class: "alert", role: "alert", "data-code": a.code, "data-key": a.key });
        (before ? before.after(node) : headEl ? headEl.after(node) : el.prepend(node));
      }
      setHTML(node, `<p class="alert-text"><b class="alert-label">⚠ ${esc(t("alert"))} · ${esc(hhmmss(a.at))}</b> ${esc(L([a.text.en, a.text.es]))}</p>
        <button type="button" class="alert-ok" data-act="dismiss-alert" data-key="${esc(a.key)}">${esc(t("alert_ok"))}</button>`);
      before = node;
    }
  }

  function renderPicker() {
    const games = Object.entries(S.arenaGames);
    setHTML($("#picker"), `
      <h1>${esc(t("pick_game", { arena: S.arena }))}</h1>
      ${games.length ? games.map(([g, v]) => `<button type="button" class="big pickgame" data-act="pick-game" data-game="${esc(g)}">
         <b>${esc(g)}</b> <span>${esc(v.teams.home.team)} ${v.score.home} – ${v.score.away} ${esc(v.teams.away.team)} · ${esc(t("st_" + v.status))}</span></button>`).join("")
        : `<p>${esc(t("no_games"))}</p>`}`);
  }

  function playerTags(p) {
    const tags = [];
    const c = S.view.clock;
    if (p.sent_off) tags.push(`<b class="tag red">${esc(t("tag_sent_off"))}</b>`);
    if (p.suspended) tags.push(`<b class="tag red">${esc(t("tag_susp"))}</b>`);
    if (p.shootout_excluded) tags.push(`<b class="tag">${esc(t("tag_no_shootout"))}</b>`);
    if (p.box) {
      if (p.box.eligible || p.box.release === "next_stoppage") tags.push(`<b class="tag box out">${esc(t("tag_out_next"))}</b>`);
      else tags.push(`<b class="tag box" data-tick="play" data-key="tag_box" data-ms="${p.box.remaining_ms}" data-at="${c.at}"></b>`);
    }
    if (p.no_sub) {
      if (p.no_sub.eligible || p.no_sub.release === "next_stoppage") tags.push(`<b class="tag nosub">${esc(t("tag_sub_ok"))}</b>`);
      else tags.push(`<b class="tag nosub" data-tick="play" data-key="tag_no_sub" data-ms="${p.no_sub.remaining_ms}" data-at="${c.at}"></b>`);
    }
    if (p.mount) tags.push(`<b class="tag mount" data-tick="wall" data-deadline="${p.mount.deadline_at}"></b>`);
    return tags.join("");
  }

  function playerButton(p, bench) {
    const yellows = Math.min(p.yellows || 0, 4);
    const pips = Array.from({ length: yellows }, () => `<i class="pip"></i>`).join("")
      + (p.carried_yellow ? `<i class="pip carried" title="carried"></i>` : "");
    const cls = ["player", p.side, bench ? "bench" : "", p.sent_off ? "off" : "", p.box ? "inbox" : "", p.on_field ? "" : "notfield"].join(" ");
    return `<button type="button" class="${cls}" data-act="player" data-player="${esc(p.id)}">
      <span class="pid">${esc(p.id)}</span><span class="pips" data-yellows="${p.yellows || 0}">${pips}</span>
      <span class="tags">${playerTags(p)}</span></button>`;
  }

  function renderRoster() {
    const el = $("#roster");
    const v = S.view;
    if (!v) { setHTML(el, `<p class="waiting">${esc(t("no_view"))}</p>`); return; }
    const col = (side) => {
      const team = v.teams[side];
      const ps = (ids) => ids.map((id) => player(id)).filter(Boolean);
      return `<div class="col ${side}">
        <h2 class="teamhead"><span>${esc(team.team)}</span><small>${esc(t(side))}</small></h2>
        ${ps(team.lineup).map((p) => playerButton(p, false)).join("")}
        ${team.bench.length ? `<div class="benchrow"><small>${esc(t("bench"))}</small>${ps(team.bench).map((p) => playerButton(p, true)).join("")}</div>` : ""}
      </div>`;
    };
    setHTML(el, col("home") + col("away"));
  }

  function renderTimekeeper() {
    const el = $("#tk");
    const v = S.view;
    const c = v && v.clock;
    const running = !!(c && c.running);
    setHTML(el, `
      <div class="bigclock ${running ? "running" : "stopped"}">
        <span data-tick="clock"></span>
        <small>${c ? esc(t("of_periods", { n: c.period, of: c.periods })) + " · " + esc(running ? t("running") : t("stopped")) : esc(t("no_view"))}</small>
      </div>
      <div class="tkgrid">
        <button type="button" class="big horn" data-act="horn">${esc(t("tk_horn"))}<small>${esc(t("tk_horn_help"))}</small></button>
        <button type="button" class="big split" data-act="horn-split">${esc(t("tk_split"))}<small>${esc(t("tk_split_help"))}</small></button>
      </div>
      <div class="tkgrid rare">
        <button type="button" class="quiet void" data-act="void">${esc(t("act_void"))}</button>
        <button type="button" class="quiet end" data-act="end" ${v && v.status === "ended" ? "disabled" : ""}>${esc(t("act_end"))}</button>
      </div>`);
  }

  function renderActions() {
    const el = $("#actions");
    const ended = S.view && S.view.status === "ended";
    let html = "";
    if (isOfficial()) {
      html = `
        <button type="button" class="act whistle" data-act="whistle" ${ended ? "disabled" : ""}>${esc(t("act_whistle"))}</button>
        <button type="button" class="act goal" data-act="goal" ${ended ? "disabled" : ""}>${esc(t("act_goal"))}</button>
        <button type="button" class="act void" data-act="void">${esc(t("act_void"))}</button>
        <button type="button" class="act end" data-act="end" ${ended ? "disabled" : ""}>${esc(t("act_end"))}</button>`;
    } else if (isTimekeeper()) {
      // the clock's two buttons where the thumb is; the suggested one stands out, both always work
      const running = !!(S.view && S.view.clock && S.view.clock.running);
      html = `
        <button type="button" class="act start ${running ? "" : "suggest"}" data-act="clock.start" ${ended ? "disabled" : ""}>${esc(t("tk_start"))}</button>
        <button type="button" class="act stop ${running ? "suggest" : ""}" data-act="clock.stop" ${ended ? "disabled" : ""}>${esc(t("tk_stop"))}</button>`;
    }
    setHTML(el, html);
  }

  function entryState(e) {
    if (e.state === "acked") {
      const voided = e.ack && voidedTargets().has(e.ack.log_id);
      return (e.ack && e.ack.seq != null ? t("st_acked", { seq: e.ack.seq }) : t("st_acked_noseq"))
        + (e.ack && e.ack.duplicate ? ` · ${t("st_duplicate")}` : "") + (voided ? ` · ${t("st_voided")}` : "");
    }
    return t("st_" + e.state);
  }

  function renderOutbox() {
    const el = $("#outbox");
    const shown = S.entries.filter((e) => e.game === S.game || !S.game).slice(-40).reverse();
    if (!shown.length) { setHTML(el, `<li class="empty">${esc(t("outbox_empty"))}</li>`); return; }
    setHTML(el, shown.map((e) => {
      const ev = JSON.parse(e.body);
      const refused = e.state === "refused" && e.error;
      const first = e.state === "acked" && e.notices && e.notices.length
        ? (e.notices.find((n) => n.type === "alert") || e.notices[0]) : null;
      const notice = first && first.text
        ? `<div class="sub${first.type === "alert" ? " alert" : ""}">${first.type === "alert" ? "⚠ " : ""}${esc(stripCitation(L([first.text.en, first.text.es])))}</div>` : "";
      return `<li class="entry st-${esc(e.state)}" data-id="${esc(e.id)}" data-state="${esc(e.state)}" data-type="${esc(e.type)}"
                 data-seq="${e.ack && e.ack.seq != null ? e.ack.seq : ""}" data-code="${refused ? esc(e.error.code) : ""}">
        <div class="row"><span class="what">${esc(describe(ev))}</span><span class="state">${esc(entryState(e))}</span></div>
        <div class="meta">${esc(hhmmss(ev.at))}${e.note ? " · " + esc(t("retrying", { why: reasonText({ code: e.note }) })) : ""}</div>
        ${refused ? `<div class="reason"><b>${esc(t("reason"))}:</b> <span class="why">${esc(reasonText(e.error))}</span>${e.error.clause ? ` <span class="clause">(${esc(clauseText(e.error.clause))})</span>` : ""}</div>` : ""}
        ${notice}
      </li>`;
    }).join(""));
  }

  function renderFeed() {
    const el = $("#feed");
    const shown = S.notices.filter((n) => n.text && n.type !== "obligation.applied").slice(-12).reverse();
    if (!shown.length) { setHTML(el, `<li class="empty">${esc(t("feed_empty"))}</li>`); return; }
    setHTML(el, shown.map((n) => `<li class="notice n-${esc(n.type.replace(/\./g, "-"))}" data-cause="${esc(n.cause)}">
        <span class="time">${esc(hhmmss(n.at))}</span> ${esc(L([n.text.en, n.text.es]))}</li>`).join(""));
  }

  function renderAbout() {
    const c = S.claims;
    if (!c) return;
    const official = (S.dev.welcome && S.dev.welcome.official) || c.official || "—";
    setHTML($("#about"), `
      <p class="who">${esc(t("signed_in_as", { official, role: t("role_" + S.role), device: S.device }))}</p>
      ${c.exp ? `<p class="muted">${esc(t("token_exp", { time: new Date(c.exp * 1000).toLocaleString(lang === "es" ? "es" : "en-GB") }))}</p>` : ""}
      <p class="muted">${esc(t("reload_offline"))}</p>
      ${waitingElsewhere().length ? `<p class="error" data-elsewhere="${waitingElsewhere().length}">${esc(t("elsewhere", {
        n: waitingElsewhere().length, games: [...new Set(waitingElsewhere().map((e) => e.game))].join(", ") }))}</p>` : ""}
      <p class="muted">${esc(t("others"))}:</p>
      <ul class="presence">${(S.presence || []).length ? S.presence.map((d) => `<li data-device="${esc(d.device)}">
        <b>${esc(d.official || d.device)}</b> · ${esc(t("role_" + d.role) || d.role)}${d.device === S.device ? " ✓" : ""}</li>`).join("")
        : `<li class="muted">${esc(t("nobody"))}</li>`}</ul>
      <button type="button" class="quiet" data-act="signout">${esc(t("sign_out"))}</button>`);
  }

  let toastTimer = 0;
  function toast(text, kind) {
    const el = $("#toast");
    el.textContent = text;
    el.className = "toast " + (kind || "");
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, kind === "bad" ? 6000 : 2200);
  }

  // ------------------------------------------------------------------ sheets

  const sheet = () => $("#sheet");

  function openSheet(build) {
    S.sheet = build;
    drawSheet();
    const d = sheet();
    if (!d.open) d.showModal();
  }
  function drawSheet() { if (S.sheet) sheet().replaceChildren(S.sheet()); }
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

  function penaltyField(onChange) {
    const input = h("input", { type: "text", inputmode: "text", maxlength: "64", placeholder: t("penalty_ph"),
      id: "penalty", autocomplete: "off", "aria-label": t("penalty") });
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

  function playerSheet(pid) {
    return () => {
      const p = player(pid);
      const side = p ? p.side : sideOf(pid);
      const ended = S.view && S.view.status === "ended";
      const onBench = S.view && side && S.view.teams[side].bench.includes(pid);
      const acts = [];
      const act = (key, cls, fn) => acts.push(h("button", { type: "button", class: "opt big " + cls, "data-act": key, onclick: fn }, t("act_" + key)));
      if (!ended) {
        act("card", "card", () => openSheet(cardSheet(pid)));
        act("goal", "goal", () => openSheet(goalSheet(side, pid)));
        act("box_early", "warn", () => openSheet(confirmPlayerSheet(pid, "box.left_early", t("act_box_early"), t("box_warn"))));
        act("arena", "danger", () => openSheet(confirmPlayerSheet(pid, "arena.left", t("act_arena"), t("arena_warn"))));
        act("mount_removed", "mount", () => openSheet(mountSheet(pid)));
        act("mount_replaced", "mount", async () => { closeSheet(); await record("mount.replaced", { player: pid }); });
        act("sub", "sub", () => openSheet(subSheet(pid, side, !!onBench)));
      } else {
        act("postgame", "card", () => openSheet(postgameSheet(pid)));
      }
      return h("div", { class: "sheet-body", "data-sheet": "player" },
        head(`${pid}`, standing(pid)),
        h("div", { class: "grid2" }, acts),
        h("div", { class: "sheet-foot" }, h("button", { type: "button", class: "secondary wide", "data-act": "cancel", onclick: cancelSheet }, t("cancel"))));
    };
  }

  function cardSheet(pid) {
    let color = "yellow";
    let count = 1;
    let conduct = null;
    let penalty = "";
    return () => {
      const summary = () => (conduct ? `${t("record")}: ${cardName(color, count)} · ${conductLabel(conduct)}` : t("pick_conduct"));
      const recordBtn = foot(summary(), false, () => record("card", {
        player: pid, color, ...(color === "yellow" ? { count } : {}), conduct,
        ...(penaltyValue(penalty) !== undefined ? { penalty: penaltyValue(penalty) } : {}) }), "card-" + color);
      const refresh = () => {
        const b = recordBtn.querySelector("[data-act=record]");
        b.textContent = summary();
        b.disabled = !conduct;
        b.className = "primary card-" + color;
      };
      const drawn = (n, c) => h("span", { class: "cards", "aria-hidden": "true" }, Array.from({ length: n }, () => h("i", { class: c })));
      const colors = [
        { value: "yellow1", label: [drawn(1, "y"), h("span", { class: "lbl" }, t("yellow"))], cls: "yellow", attrs: { "data-card": "yellow1" } },
        { value: "yellow2", label: [drawn(2, "y"), h("span", { class: "lbl" }, t("yellow2"))], cls: "yellow", attrs: { "data-card": "yellow2" } },
        { value: "yellow3", label: [drawn(3, "y"), h("span", { class: "lbl" }, t("yellow3"))], cls: "yellow", attrs: { "data-card": "yellow3" } },
        { value: "red1", label: [drawn(1, "r"), h("span", { class: "lbl" }, t("red"))], cls: "red", attrs: { "data-card": "red1" } },
      ];
      return h("div", { class: "sheet-body", "data-sheet": "card" },
        head(`${t("act_card")} · ${pid}`, standing(pid)),
        choices(colors, color + count, (v) => { color = v.slice(0, -1); count = Number(v.slice(-1)); refresh(); }, "four"),
        h("h3", {}, t("conduct")),
        choices(CONDUCTS.map(([code, en, es]) => ({ value: code, label: lang === "es" ? es : en, attrs: { "data-conduct": code } })),
          conduct, (v) => { conduct = v; refresh(); }, "conducts"),
        penaltyField((v) => { penalty = v; }),
        recordBtn);
    };
  }

  function goalSheet(side, scorer) {
    let team = side || null;
    let points = 1;
    let who = scorer || null;
    return () => {
      const summary = () => (team ? `${t("record")}: ${t("act_goal")} ${teamName(team)}${who ? " · " + who : ""} · ${t("pt", { n: points })}` : t("team"));
      const recordBtn = foot(summary(), !!team, () => record("goal", { team, ...(who ? { player: who } : {}), points }));
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
          [{ value: "", label: t("no_scorer"), attrs: { "data-scorer": "" } }, ...ids.map((id) => ({ value: id, label: id, attrs: { "data-scorer": id } }))],
          who || "", (v) => { who = v || null; refresh(); }, "three"));
      };
      drawScorers();
      return h("div", { class: "sheet-body", "data-sheet": "goal" },
        head(t("act_goal"), null),
        choices(["home", "away"].map((s) => ({ value: s, label: `${teamName(s)} (${t(s)})`, cls: s, attrs: { "data-team": s } })),
          team, (v) => { if (v !== team) who = null; team = v; drawScorers(); refresh(); }, "two"),
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
      head(`${title} · ${pid}`, teamName(sideOf(pid))),
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
        head(`${t("act_mount_removed")} · ${pid}`, teamName(sideOf(pid))),
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
      const summary = () => (other ? `${t("record")}: ${t("sub_in")} ${fields().in} · ${t("sub_out")} ${fields().out}` : (fromBench ? t("sub_pick_out") : t("sub_pick_in")));
      const recordBtn = foot(summary(), false, () => record("substitution", fields()));
      return h("div", { class: "sheet-body", "data-sheet": "substitution" },
        head(`${t("act_sub")} · ${teamName(side)}`, `${fromBench ? t("sub_in") : t("sub_out")}: ${pid}`),
        h("h3", {}, fromBench ? t("sub_pick_out") : t("sub_pick_in")),
        choices(pool.map((id) => ({ value: id, label: id, attrs: { "data-other": id } })), other, (v) => {
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
        head(`${t("act_postgame")} · ${pid}`, teamName(sideOf(pid))),
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

  function voidSheet() {
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

  function endSheet() {
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

  // ------------------------------------------------------------------ taps

  document.addEventListener("click", async (ev) => {
    const el = ev.target.closest("[data-act]");
    if (!el || el.closest("#sheet")) return;
    const act = el.dataset.act;
    switch (act) {
      case "lang":
        lang = lang === "es" ? "en" : "es";
        lsSet(LS.lang, lang);
        params.set("lang", lang);
        history.replaceState(null, "", location.pathname + "?" + params + location.hash);
        if (S.sheet) drawSheet();
        render();
        break;
      case "signin": {
        const token = $("#token-input").value.trim();
        if (!decodeToken(token)) { const e = $("#signin-error"); e.textContent = t("signin_bad"); e.hidden = false; break; }
        $("#token-input").value = "";
        signIn(token);
        break;
      }
      case "signout": {
        const n = pendingEntries().length;
        if (n && !confirm(t("sign_out_pending", { n, device: S.device }))) break;
        signOut();
        break;
      }
      case "pick-game":
        S.game = el.dataset.game;
        lsSet(LS.game, S.game);
        loadWatch();
        loadAlerts();
        dropWatch();
        connectWatch();
        render();
        break;
      case "dismiss-alert": dismissAlert(el.dataset.key); break;
      case "player": S.actionAt = Date.now(); openSheet(playerSheet(el.dataset.player)); break;
      case "whistle": await record("whistle", {}); break;
      case "goal": S.actionAt = Date.now(); openSheet(goalSheet(null, null)); break;
      case "void": openSheet(voidSheet()); break;
      case "end": S.actionAt = Date.now(); openSheet(endSheet()); break;
      case "clock.start": await record("clock.start", {}); break;
      case "clock.stop": await record("clock.stop", {}); break;
      case "horn": await record("horn", {}); break;
      case "horn-split": await record("horn", { split: true }); break;
      default: break;
    }
  });

  sheet().addEventListener("click", (ev) => { if (ev.target === sheet()) cancelSheet(); });   // the backdrop
  sheet().addEventListener("cancel", () => { S.sheet = null; S.actionAt = null; });
  $("#toast").addEventListener("click", () => { $("#toast").hidden = true; });

  // ------------------------------------------------------------------ start

  async function signIn(token) {
    const claims = decodeToken(token);
    if (!claims) return;
    lsSet(LS.token, token);
    S.token = token;
    S.claims = claims;
    S.device = claims.sub;
    S.role = claims.role;
    S.arena = claims.arena || null;
    S.game = claims.game || params.get("game") || (claims.arena ? lsGet(LS.game) : null) || null;
    S.dev.denied = null;
    if (S.game) loadWatch();
    loadAlerts();
    render();
    try {
      db = db || (await openDB());
      await pruneEntries();
      await reloadEntries();
    } catch (err) {
      toast("IndexedDB: " + err);
    }
    connectDevice();
    connectWatch();
  }

  function signOut() {
    lsSet(LS.token, null);
    dropDevice();
    dropWatch();
    clearTimeout(S.dev.retryTimer);
    clearTimeout(S.feed.retryTimer);
    Object.assign(S, { token: null, claims: null, device: null, role: null, game: null, arena: null, view: null,
      seq: 0, epoch: null, notices: [], entries: [], arenaGames: {}, alerts: [], dismissed: [] });
    S.dev.state = "idle";
    S.feed.state = "idle";
    render();
  }

  async function registerWorker() {
    if (!("serviceWorker" in navigator)) return;
    try {
      await navigator.serviceWorker.register("/clients/sw.js", { scope: "/clients/" });
      await navigator.serviceWorker.ready;
      const mark = () => { if (navigator.serviceWorker.controller) document.body.dataset.offlineReady = "yes"; };
      mark();
      navigator.serviceWorker.addEventListener("controllerchange", mark);
    } catch { /* no offline shell: the page still works online */ }
  }

  if (bc) bc.onmessage = (m) => { if (m.data && m.data.kind === "outbox" && m.data.device === S.device) reloadEntries(); };

  const token = tokenFromFragment() || lsGet(LS.token);
  if (params.get("lang")) lsSet(LS.lang, lang);
  render();
  if (token && decodeToken(token)) signIn(token);
  else if (token) { const e = $("#signin-error"); e.textContent = t("signin_bad"); e.hidden = false; }
  registerWorker();
  setInterval(tick, 500);
  // Back online after a long sleep, or the tab shown again: try at once.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") { connectDevice(); connectWatch(); pump(); }
  });
  // A read-only look for diagnostics and tests (never the token).
  window.arenaHandheld = {
    pending: () => pendingEntries().length,
    entries: () => S.entries.map((e) => ({ id: e.id, type: e.type, state: e.state, seq: e.ack ? e.ack.seq : null,
      log_id: e.ack ? e.ack.log_id : null, tries: e.tries, error: e.error || null })),
    device: () => ({ state: S.dev.state, ready: S.dev.ready, rtt: S.dev.rtt }),
    feed: () => ({ state: S.feed.state, seq: S.seq }),
    alerts: () => S.alerts.map((a) => ({ code: a.code, cause: a.cause, key: a.key })),
  };
})();
