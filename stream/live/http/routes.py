"""Every route of the HTTP API but the two documents' own (``schemas.py`` adds them), one
table per resource, in the order the OpenAPI document lists them."""

from __future__ import annotations

from . import events, games, ledger, pages, public, reports, rosters, site, tokens
from .route import Route

TABLE: tuple[Route, ...] = (*public.ROUTES, *site.ROUTES, *games.ROUTES, *events.ROUTES, *ledger.ROUTES,
                            *tokens.ROUTES, *rosters.ROUTES, *pages.ROUTES, *reports.ROUTES)
