"""comind.harvest: deterministic harvesters turning history and review threads into records.

Git sources are modules with the same small interface — ``NAME`` and
``harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]`` — registered below by
module name (imported on use, so the package stays cheap to import). Adding a source is one module
and one line. Merge-request threads are harvested by ``comind.harvest.mr`` from a forge.
"""

from __future__ import annotations

import importlib
from types import ModuleType

GIT_SOURCES = ("reverts", "lore", "fixes")


def git_sources() -> dict[str, ModuleType]:
    return {name: importlib.import_module(f"comind.harvest.{name}") for name in GIT_SOURCES}
