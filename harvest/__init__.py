"""comind.harvest: deterministic harvesters turning history and review threads into records.

Git sources are modules with the same small interface — ``NAME`` and
``harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]`` — registered below by
module name (imported on use, so the package stays cheap to import). Adding a source is one module
and one line. Merge-request threads are harvested by ``comind.harvest.mr`` from a forge.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# Bump when what is harvested changes: the next harvest re-reads all. 2: "add back" relands; 3: back-outs,
# "…, reverts #N", merges of a branch's revert, people left out of revert reasons; 4: Go's prefixed
# 'pkg: revert "x"' and "This CL reverts commit <sha>", relands said in the body only (a revert of a
# revert, "Reland of #N"), markers in a squash body real only when their target is on the default branch.
HARVESTER_VERSION = "13"
GIT_SOURCES = ("reverts", "lore", "fixes")


def git_sources() -> dict[str, ModuleType]:
    return {name: importlib.import_module(f"comind.harvest.{name}") for name in GIT_SOURCES}
