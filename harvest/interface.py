"""What a git harvester source is: a module with a ``NAME`` and a ``harvest`` function.

A source reads one commit at a time, in the order the walk gives them (oldest first), and yields
the records it finds; what it needs across commits lives in the shared ``HarvestContext``. The
registry is :mod:`comind.harvest.sources`; a source imports only this interface's collaborators,
never another source.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from comind.harvest.context import HarvestContext
    from comind.harvest.walker import CommitInfo
    from comind.records import Record


class GitSource(Protocol):
    """A harvester source module (modules satisfy protocols: ``reverts``, ``lore``, ``fixes``)."""

    NAME: str

    def harvest(self, commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]: ...
