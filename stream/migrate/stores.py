"""The store a command names (``--store``, ``--data`` and the etcd TLS files), opened the way
``serve`` opens it (``stream/live/lifecycle.py`` ``make_store``): SQLite in the data
directory, or an etcd cluster; any other URL is refused."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import StartupRefused
from ..live.ops.config import Config
from ..store import Store

__all__ = ["add_store_arguments", "store_from", "where"]


def add_store_arguments(p: argparse.ArgumentParser, *, sqlite: bool = True) -> None:
    """``--store`` (required), ``--data`` (SQLite's directory) and ``--etcd-ca/-cert/-key``."""
    kinds = "sqlite (in --data) or etcd[s]://[user:password@]host:port[,host:port...]/PREFIX"
    p.add_argument("--store", required=True, metavar="URL",
                   help=kinds if sqlite else "etcd[s]://[user:password@]host:port[,host:port...]/PREFIX")
    if sqlite:
        p.add_argument("--data", type=Path, default=Path("arena-data"),
                       help="the data directory of a SQLite store (default %(default)s)")
    p.add_argument("--etcd-ca", default="", metavar="PEM",
                   help="etcds://: the CA of the members' certificates")
    p.add_argument("--etcd-cert", default="", metavar="PEM", help="etcds://: a client certificate")
    p.add_argument("--etcd-key", default="", metavar="PEM", help="etcds://: its private key")


def store_from(args: argparse.Namespace) -> Store:
    """The store ``args`` name, not yet opened; ``StartupRefused`` for a URL that is not one."""
    from ..live.lifecycle import make_store  # the service's own, and all it brings: only when used
    from ..store.etcd_client import is_etcd

    url = str(args.store)
    if url != "sqlite" and not is_etcd(url):
        raise StartupRefused("not a store these commands write: use sqlite (with --data) or "
                             "an etcd:// (etcds://) URL")
    return make_store(Config(store=url, data_dir=getattr(args, "data", Path("arena-data")),
                             etcd_ca=args.etcd_ca, etcd_cert=args.etcd_cert, etcd_key=args.etcd_key))


def where(url: str, data: Path | None = None) -> str:
    """The store as a message names it: SQLite by its file, etcd by its URL without a password."""
    from ..store.etcd_client import is_etcd, redacted

    if url == "sqlite":
        return f"sqlite:{(data or Path('arena-data')) / 'arena.sqlite'}"
    return redacted(url) if is_etcd(url) else url.split("@")[-1]
