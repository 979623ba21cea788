"""An edit applied to a file's text, and the definitions it touches (as `preflight` finds them:
the definitions after the edit holding added lines, and before it holding removed lines)."""

from __future__ import annotations

from bisect import bisect_right
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


def touched_by_spans(spans: Iterable[tuple[str, int, int]], before: str, after: str) -> dict[str, int]:
    """What `touched_symbols` finds among the definitions that exist before the edit, from their
    spans in `before` alone, each with its first line there. A change touches a definition when it
    removes a line of it, adds lines inside it, or adds after its end (up to the next definition,
    within the one holding it, blank lines between) lines whose first is indented deeper than the
    definition's first line: what a parser then reads as its own (a brace or `end` closes others,
    so what follows is no deeper)."""
    a, b = before.splitlines(), after.splitlines()
    removed: set[int] = set()
    added_after: list[tuple[int, int]] = []  # (the line an addition follows, its first line's indent)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        removed.update(range(i1 + 1, i2 + 1))
        first = next((line for line in b[j1:j2] if line.strip()), None)
        if first is not None:
            added_after.append((i1, _indent(first)))
    spans = sorted(spans, key=lambda span: (span[1], -span[2]))  # holders before what they hold
    starts = [start for _, start, _ in spans]
    touched: dict[str, int] = {}
    open_ends: list[int] = []  # the ends of the definitions holding the current one, innermost last
    for qualname, start, end in spans:
        while open_ends and open_ends[-1] < start:
            open_ends.pop()
        holder = open_ends[-1] if open_ends else len(a)
        reach = min(next((s - 1 for s in starts[bisect_right(starts, end) :]), len(a)), max(holder, end))
        deeper = _indent(a[start - 1]) if 0 < start <= len(a) else 0
        if (
            any(start <= n <= end for n in removed)
            or any(start <= n < end for n, _ in added_after)  # inside it
            or any(end <= n <= reach and indent > deeper for n, indent in added_after)  # going on from its end
        ):
            touched.setdefault(qualname, start)
        open_ends.append(end)
    return touched


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def touched_symbols(path: str, before: str, after: str) -> dict[str, int]:
    """The definitions the edit touches, by qualified name, each with its first line (after the
    edit, or before it for one the edit removes); empty for a language comind does not index."""
    from comind.languages import language_for_path, parse_file

    if language_for_path(path) is None:
        return {}
    added, removed = changed_lines(before, after)
    touched: dict[str, int] = {}
    for text, lines in ((after, added), (before, removed)):
        if not lines or not text:
            continue
        for d in parse_file(path, text.encode("utf-8", "surrogatepass")).definitions:
            if any(d.start_line <= n <= d.end_line for n in lines):
                touched.setdefault(d.qualname, d.start_line)
    return touched
