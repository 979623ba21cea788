"""comind init: write a commented .comind.yml and create the store."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "init",
        parents=[common],
        help="write .comind.yml and create the store",
        description="Write a commented .comind.yml in the repository root and create the store.",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing .comind.yml")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from comind import config
    from comind.cli import workspace

    ws = workspace(args)
    path = ws.root / config.CONFIG_FILE
    if path.exists() and not args.force:
        print(f"kept the existing {path.name} (--force rewrites it)")
    else:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(config.template(getattr(args, "setting_store", None)), encoding="utf-8")
        tmp.replace(path)
        print(f"wrote {path.name}")
        ws = workspace(args)  # re-read: the new file is now the configuration
    ws.store.inbox_keys()  # creates a local store's folder; checks a remote one is reachable
    if ws.store.local_root is not None:
        ignore = ws.store.local_root / ".gitignore"
        if not ignore.exists():  # the inbox is reviewed and committed; snapshots are for object stores
            ignore.write_text("_ledger/snapshots/\n", encoding="utf-8")
    print(f"store: {ws.config.store}")
    print('next: comind remember constraint --on PATH --title "…" --rule "…" --severity must')
    return 0
