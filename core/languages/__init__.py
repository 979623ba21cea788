"""Language registry: one module per language, each with the same small interface.

Adding a language is one module (a :class:`Language` subclass describing its grammar) and one
line in :data:`LANGUAGES`. :func:`parse_file` is the entry point the code index uses.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from difflib import SequenceMatcher
from typing import TypeVar

from . import c, cpp, csharp, go, java, javascript, kotlin, php, python, ruby, rust, typescript
from ._base import KINDS, Call, Definition, DefSpec, FileSymbols, Import, Language, keeping_trees, may_define

__all__ = [
    "KINDS",
    "LANGUAGES",
    "Call",
    "DefSpec",
    "Definition",
    "FileSymbols",
    "Import",
    "Language",
    "LanguageModule",
    "all_body_tokens",
    "body_tokens",
    "defines",
    "definitions_at",
    "fingerprinted",
    "first_line_of",
    "is_binary",
    "keeping_trees",
    "language_for_path",
    "may_define",
    "parse_file",
    "span_of",
    "token_similarity",
]

LanguageModule = Language
_T = TypeVar("_T")

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        python.LANGUAGE,
        javascript.LANGUAGE,
        typescript.TYPESCRIPT,
        typescript.TSX_LANGUAGE,
        go.LANGUAGE,
        rust.LANGUAGE,
        java.LANGUAGE,
        c.LANGUAGE,
        cpp.LANGUAGE,
        ruby.LANGUAGE,
        php.LANGUAGE,
        csharp.LANGUAGE,
        kotlin.LANGUAGE,
    )
}
_BY_EXTENSION = {ext: lang for lang in LANGUAGES.values() for ext in lang.extensions}


def language_for_path(path: str) -> Language | None:
    """The language of a file by its extension (case-insensitive), or None."""
    return _BY_EXTENSION.get(os.path.splitext(path)[1].lower())


def is_binary(data: bytes) -> bool:
    return b"\0" in data


def _analyse(lang: Language, data: bytes, keep_tokens: bool) -> tuple[FileSymbols, dict[str, list[str]]]:
    if is_binary(data):
        return FileSymbols(lang.name, error="binary file (NUL bytes)"), {}
    try:  # tree-sitter reads UTF-8: invalid bytes become replacement characters first
        data.decode("utf-8")
    except UnicodeDecodeError:
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    try:
        return lang.analyse(data, keep_tokens=keep_tokens)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        return FileSymbols(lang.name, error=f"parse failed: {type(exc).__name__}: {exc}"), {}


def parse_file(path: str, data: bytes) -> FileSymbols:
    """Definitions, imports and calls of one file; never raises.

    Invalid UTF-8 is decoded with replacement characters. A file with NUL bytes is binary and
    yields nothing but an ``error``. A file that does not parse yields what tree-sitter recovered
    and an ``error`` naming the lines of its ERROR nodes. An unsupported extension yields
    ``language=""`` and an error.
    """
    lang = language_for_path(path)
    if lang is None:
        return FileSymbols("", error="unsupported language")
    return _analyse(lang, data, False)[0]


def definitions_at(
    path: str,
    data: bytes,
    lines: Iterable[int],
    spans: Iterable[tuple[int, int]] = (),
    *,
    fingerprints: bool = True,
) -> tuple[Definition, ...]:
    """The definitions of `parse_file(path, data)` innermost for one of `lines` or holding the whole
    of one of `spans`, the same ones, found reading only those definitions' tokens (without
    `fingerprints`, none: their hashes are empty, see `fingerprinted`); never raises."""
    return _read_part(
        path, data, lambda lang, source: lang.definitions_at(source, lines, spans, fingerprints=fingerprints), ()
    )


def fingerprinted(path: str, data: bytes, chosen: Iterable[Definition]) -> tuple[Definition, ...] | None:
    """`chosen`, some of the definitions `definitions_at(path, data, ..., fingerprints=False)` gave,
    with their fingerprints as `parse_file(path, data)` has them; None where that finds none (a
    failed parse); never raises."""
    return _read_part(path, data, lambda lang, source: lang.fingerprinted(source, chosen), None)


def defines(path: str, data: bytes, qualname: str) -> bool:
    """Whether `parse_file(path, data)` has a definition of `qualname`, found reading only where
    its name is written; never raises."""
    return _read_part(path, data, lambda lang, source: lang.defines(source, qualname), False)


def _read_part(path: str, data: bytes, read: Callable[[Language, bytes], _T], nothing: _T) -> _T:
    """`read(language, data)` on the file as `parse_file` reads it (invalid UTF-8 replaced), or
    `nothing` where `parse_file` finds no definitions (no language, binary, a failed parse)."""
    lang = language_for_path(path)
    if lang is None or is_binary(data):
        return nothing
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    try:
        return read(lang, data)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # what `parse_file` turns into an error, with no definitions
        return nothing


def first_line_of(path: str, data: bytes, qualname: str) -> int | None:
    """The first line of `qualname`'s definition in `parse_file(path, data)`, found reading only
    where its name is written; never raises."""
    return _read_part(path, data, lambda lang, source: lang.first_line_of(source, qualname), None)


def span_of(path: str, data: bytes, qualname: str) -> tuple[int, int] | None:
    """The first and last lines of `qualname`'s definition in `parse_file(path, data)`, found
    reading only where its name is written; never raises."""
    return _read_part(path, data, lambda lang, source: lang.span_of(source, qualname), None)


def body_tokens(path: str, data: bytes, qualname: str) -> list[str] | None:
    """The normalised body tokens of one definition (None if the file has no such qualname), read
    from its own subtree; never raises."""
    return _read_part(path, data, lambda lang, source: lang.body_tokens_of(source, qualname), None)


def all_body_tokens(path: str, data: bytes) -> dict[str, list[str]]:
    """The normalised body tokens of every definition of a file, by qualname."""
    lang = language_for_path(path)
    if lang is None:
        return {}
    return _analyse(lang, data, True)[1]


# Above this many token pairs the quadratic matcher gives way to the linear bag measure.
_MATCHER_LIMIT = 4_000_000


def token_similarity(a: list[str], b: list[str]) -> float:
    """How alike two token sequences are, from 0.0 (nothing shared) to 1.0 (identical).

    ``difflib.SequenceMatcher(autojunk=False).ratio()`` on the token lists (2·matches / total,
    order-aware) while ``len(a) * len(b)`` stays under four million; beyond that (bodies of
    several thousand tokens) the multiset Dice coefficient, which is the matcher's
    ``quick_ratio`` upper bound, computed in linear time.
    """
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    if len(a) * len(b) <= _MATCHER_LIMIT:
        return SequenceMatcher(None, a, b, autojunk=False).ratio()
    common = sum((Counter(a) & Counter(b)).values())
    return 2.0 * common / (len(a) + len(b))
