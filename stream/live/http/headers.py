"""The browser headers on every answer: one ``on_response_prepare`` hook (``secure``).

A response signal, not a middleware, so that what no handler returns gets them too: the
static files under ``/clients/`` (``FileResponse``), the router's 404 and 405, an
``HTTPException`` a handler raises (aiohttp turns it into a response that is prepared, and
so passes here, like the 500 of an unhandled error), the WebSocket handshakes. Only an
answer aiohttp gives before routing (a request line it can't parse) and ``/ws/watch`` on a
fresh connection (``front_door.py``: websockets answers that handshake) don't pass here.

Every answer:

    X-Content-Type-Options: nosniff       a file is its Content-Type, never sniffed into HTML
    Referrer-Policy: no-referrer          a page's URL (``?game=``, an operator's query) stays here

The browser pages (``api_types.PAGES``, and their files under ``/clients/``: the handheld
forwards to ``/clients/handheld.html``, its service worker's scope) load nothing inline: every
script is an ES module of ``/clients/``, every style a stylesheet there; what a script colours
it sets through the CSSOM (``el.style.setProperty``), which ``style-src 'self'`` allows::

    default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;
    font-src 'self'; connect-src 'self' ws://HOST wss://HOST; object-src 'none';
    base-uri 'none'; form-action 'none'

- ``img-src data:``: the pages' ``<link rel="icon" href="data:,">``; logos come from
  ``/logos/`` (same origin). ``/committee`` also has ``blob:``: the pairing QR codes are the
  SVG of ``POST /api/pairings`` shown as ``<img src="blob:…">`` (an SVG as an image runs no
  script and is not styled by the page).
- ``connect-src``: the pages open their WebSockets (``/ws/watch``, ``/ws/device``) on their
  own host only. ``'self'`` covers ws/wss of the same host in CSP Level 3 browsers; the
  explicit ``ws://HOST wss://HOST`` (the request's ``Host``) for those that predate it (old
  Safari, old embedded Chromium). Never ``ws:`` or ``wss:`` alone: any host, a way out for
  what a page shows.
- ``form-action 'none'``: every form is handled by its script (``preventDefault``); a form
  submitted natively (before the script ran, or by Enter in a one-field form) would put what
  was typed, the committee's token among it, into a URL.
- Frames: ``/overlay/control`` shows the overlay in an ``<iframe>`` of its own origin
  (``frame-src`` falls back to ``default-src 'self'``). The handheld's service worker
  (``/clients/sw.js``) is a script of its own origin (``worker-src`` falls back to
  ``script-src``), its manifest a file of its own origin (``manifest-src``: ``default-src``).

Framing, per page:

    /committee, /handheld, /overlay/control   frame-ancestors 'none' + X-Frame-Options: DENY
    /scoreboard, /overlay                      no frame-ancestors, no X-Frame-Options

The three control pages act with a token (the committee's console, an official's handheld,
the broadcast operator's desk): no other site may frame them to trick a click. The scoreboard
and the overlay are made to be embedded: OBS and vMix browser sources (and the operator's own
preview, an ``<iframe>`` of /overlay/control) load them, often as a top-level page of their
own embedded browser, but also inside a producer's HTML page, which may be a ``file://``
document. ``frame-ancestors *`` would refuse a ``file:``, ``data:`` or ``blob:`` ancestor,
so the directive is left out: any parent may embed them. They hold no token and take no
action: what they show is public, and the overlay's graphics are driven by its control page,
which sends its token in a frame of its own socket.

Any other HTML file under ``/clients/`` gets the pages' policy and ``frame-ancestors 'none'``
(an operator's own page there may load the modules, not run inline script).

Any other HTML answer (``/``, ``/games/{game}/report``) is a document generated here that
runs no script: ``default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:;
base-uri 'none'; form-action 'none'``. The report inlines its stylesheet and colours its
teams with ``style`` attributes (``report_html.py``); with no script to run, an injected
style is the most an injected tag could do. It stays embeddable (it is public and does
nothing).

``Cache-Control: no-store`` on an answer that may carry a token or what only a token may
read: every ``/api/`` answer to a method other than GET and HEAD (``POST /api/tokens`` and
``POST /api/pairings`` return a token), ``GET /api/tokens``, and any answer to a request that
carries ``Authorization``. A ``Cache-Control`` the handler set stays (the pages' ``no-cache``,
the logos' ``immutable``).
"""

from __future__ import annotations

import posixpath
import re

from aiohttp import web

from ..wire import api_types

#: The pages a token drives: no other site may frame them.
UNFRAMED = frozenset({"/committee", "/handheld", "/overlay/control"})
#: The pages made to be embedded (OBS, vMix, a producer's page): no frame-ancestors.
EMBEDDED = frozenset({"/scoreboard", "/overlay"})
assert set(api_types.PAGES) == UNFRAMED | EMBEDDED, "every page is framed or embedded, on purpose"

#: A page's Content-Security-Policy, but for its WebSocket hosts and what is per page.
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:{img}; "
            "font-src 'self'; connect-src 'self'{ws}; object-src 'none'; base-uri 'none'; "
            "form-action 'none'{frame}")
#: Any other HTML answer: a document with no script.
DOCUMENT_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                "base-uri 'none'; form-action 'none'")
#: The pages' extra image sources: the committee's QR codes are blob: images.
_IMG = {"/committee": " blob:"}
#: A page's file under /clients/ (the handheld opens there, in its service worker's scope).
_FILES = {name: route for route, name in api_types.PAGES.items()}
_HTML = (".html", ".htm", ".xhtml")
_HOST = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
_TOKEN_LISTS = frozenset({"/api/tokens"})


def page_csp(page: str | None, host: str | None) -> str:
    """The Content-Security-Policy of ``page`` (a key of ``api_types.PAGES``; None: another
    HTML file of /clients/, as strict as the strictest page) served as ``host`` (the request's
    Host; one that isn't a host name adds no WebSocket source)."""
    ws = f" ws://{host} wss://{host}" if host and _HOST.fullmatch(host) else ""
    frame = "" if page in EMBEDDED else "; frame-ancestors 'none'"
    return PAGE_CSP.format(img=_IMG.get(page or "", ""), ws=ws, frame=frame)


def public_csp(host: str | None) -> str:
    """The public pages' policy (``http/public.py``, docs/public.md): the pages' own, with a
    team's colours allowed as ``style`` attributes, and no ``frame-ancestors``: a club may
    embed its event's page and scores in its own site."""
    return page_csp("/scoreboard", host).replace("style-src 'self';", "style-src 'self'; "
                                                   "style-src-attr 'unsafe-inline';")


def page_of(request: web.Request) -> tuple[bool, str | None]:
    """Is the answer to ``request`` a browser page, and which (``api_types.PAGES``' route; None
    for an HTML file of /clients/ that is none of them)? By its route, or by the file the
    static route serves (its name as the static route reads it, however the path spelled it)."""
    if request.path in api_types.PAGES:
        return True, request.path
    if isinstance(request.match_info.route.resource, web.StaticResource):
        name = posixpath.normpath(request.match_info.get("filename", "").replace("\\", "/")).lstrip("/")
        if name.lower().endswith(_HTML):
            return True, _FILES.get(name)
    return False, None


def private(request: web.Request) -> bool:
    """May the answer to ``request`` carry a token, or what only a token may read?"""
    api = request.path.startswith("/api/")
    return ((api and request.method not in ("GET", "HEAD")) or request.path in _TOKEN_LISTS
            or "Authorization" in request.headers)


async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """Set the headers of the module docstring on ``response`` (before it is sent)."""
    h = response.headers
    h.setdefault("X-Content-Type-Options", "nosniff")
    h.setdefault("Referrer-Policy", "no-referrer")
    if private(request):
        h.setdefault("Cache-Control", "no-store")
    is_page, page = page_of(request)
    if is_page:
        h["Content-Security-Policy"] = page_csp(page, request.host)
        if page not in EMBEDDED:
            h["X-Frame-Options"] = "DENY"
    elif (response.content_type == "text/html" and "Content-Security-Policy" not in h
          and not isinstance(response, web.WebSocketResponse)):
        h["Content-Security-Policy"] = DOCUMENT_CSP


def secure(app: web.Application) -> web.Application:
    """``app``, its every answer given the headers of the module docstring."""
    app.on_response_prepare.append(on_prepare)
    return app
