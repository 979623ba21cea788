"""What the code index keeps of a file: its definitions, imports and calls (`FileSymbols`).

The language modules (`comind.languages`) make these from a parse; the code index stores them
and reads them back, which needs no parser and no language module.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Call", "Definition", "FileSymbols", "Import"]


@dataclass(frozen=True, slots=True)
class Definition:
    qualname: str
    name: str
    kind: str
    start_line: int
    end_line: int
    sig_hash: str
    body_hash: str
    shape_hash: str


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module (or one name from it), as written.

    Python ``from m import a as b`` gives ``Import("m", ("a",), "b", line, 0)`` (one Import per
    name, so each alias stays with its name); ``from .. import x`` has ``module=""``, ``level=2``;
    a star import has ``names=("*",)``. JS/TS default imports use the name ``default``.
    """

    module: str
    names: tuple[str, ...] = ()
    alias: str | None = None
    line: int = 0
    level: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    caller: str  # qualname of the innermost named definition, "" at module level
    callee: str  # the dotted name as written (``db.raw_query``; Rust keeps ``::``)
    line: int


@dataclass(frozen=True, slots=True)
class FileSymbols:
    language: str
    definitions: tuple[Definition, ...] = ()
    imports: tuple[Import, ...] = ()
    calls: tuple[Call, ...] = ()
    error: str | None = None
