"""An edit applied to a file's text, and the definitions it touches (as `preflight` finds them:
the definitions after the edit holding added lines, and before it holding removed lines)."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher

from .interface import Edit


class NotApplicable(Exception):
    """The edit does not apply to the text (its old text is missing): the tool will fail, so
    there is nothing to say about it."""


def apply(text: str, edits: Iterable[Edit]) -> str:
    for edit in edits:
        if edit.old is None:
            text = edit.new
        elif edit.old == "" or edit.old not in text:
            raise NotApplicable
        else:
            text = text.replace(edit.old, edit.new, -1 if edit.replace_all else 1)
    return text


def changed_lines(before: str, after: str) -> tuple[set[int], set[int]]:
    """(added lines of `after`, removed lines of `before`), 1-based."""
    a, b = before.splitlines(), after.splitlines()
    added: set[int] = set()
    removed: set[int] = set()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        removed.update(range(i1 + 1, i2 + 1))
        added.update(range(j1 + 1, j2 + 1))
    return added, removed


def touched_by_spans(spans: Iterable[tuple[str, int, int]], before: str, after: str) -> set[str]:
    """What `touched_symbols` finds among the definitions that exist before the edit, from their
    spans in `before` alone. A definition reaches up to the next one that starts after it (lines
    added after its end, past blank lines, may be its own, as a parser would see them), and a
    change touches it when it removes a line there or follows one."""
    a, b = before.splitlines(), after.splitlines()
    lines: set[int] = set()
    for tag, i1, i2, _j1, _j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            lines.update(range(max(i1, 1), i2 + 1))
    spans = list(spans)
    starts = sorted(start for _, start, _ in spans)
    touched = set()
    for qualname, start, end in spans:
        reach = next((s - 1 for s in starts if s > end), max(len(a), end))
        if any(start <= n <= reach for n in lines):
            touched.add(qualname)
    return touched


def touched_symbols(path: str, before: str, after: str) -> set[str]:
    """Qualified names of the definitions the edit touches; empty for a language comind does not index."""
    from comind.languages import language_for_path, parse_file

    if language_for_path(path) is None:
        return set()
    added, removed = changed_lines(before, after)
    touched: set[str] = set()
    for text, lines in ((after, added), (before, removed)):
        if not lines or not text:
            continue
        for d in parse_file(path, text.encode("utf-8", "surrogatepass")).definitions:
            if any(d.start_line <= n <= d.end_line for n in lines):
                touched.add(d.qualname)
    return touched
