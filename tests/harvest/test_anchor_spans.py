"""Where a change touched a file, as the spans a definition must hold to be anchored to: real
diffs (libgit2's, as the harvest reads them) of files with runs of lines inserted or deleted."""

from __future__ import annotations

from collections.abc import Callable

import pygit2
from hypothesis import given
from hypothesis import strategies as st

from comind.harvest.approach import FileChange, Line, normalise_line
from comind.harvest.context import touched_spans


def _one_sided(old: list[str], new: list[str]) -> FileChange:
    texts = ("".join(old).encode(), "".join(new).encode())  # alive while the patch's lines are read
    patch = pygit2.Patch.create_from(*texts, context_lines=0)
    lines = [ln for h in patch.hunks for ln in h.lines]
    added = [Line(ln.new_lineno, normalise_line(ln.content), False) for ln in lines if ln.origin == "+"]
    removed = [Line(ln.old_lineno, normalise_line(ln.content), False) for ln in lines if ln.origin == "-"]
    return FileChange("a.py", None, "M", added=tuple(added), removed=tuple(removed))


def _spans(change: FileChange, side: str, read: Callable[[], tuple[list[bytes], list[bytes]]]) -> list[tuple[int, int]]:
    return [(s.lo, s.hi) for s in touched_spans(change, side, read)]


def _read(here: list[str], other: list[str]) -> Callable[[], tuple[list[bytes], list[bytes]]]:
    return lambda: ("".join(here).encode().splitlines(), "".join(other).encode().splitlines())


@given(st.integers(0, 15), st.lists(st.tuples(st.integers(0, 15), st.integers(1, 3)), min_size=1, max_size=5))
def test_an_insertion_is_held_between_the_lines_around_it(size: int, runs: list[tuple[int, int]]) -> None:
    before = [f"kept {i}\n" for i in range(size)]
    after = list(before)
    points = sorted({min(at, size): n for at, n in runs}.items(), reverse=True)
    for at, n in points:  # from the end, so each point still counts the lines before it
        after[at:at] = [f"inserted {at}.{j}\n" for j in range(n)]
    expected = sorted((at, at + 1) for at, _ in points if at > 0)
    # read at the side without the lines: the parent of an insertion, the commit of a deletion
    assert _spans(_one_sided(before, after), "removed", _read(before, after)) == expected
    assert _spans(_one_sided(after, before), "added", _read(before, after)) == expected


@given(
    st.lists(st.sampled_from(["a\n", "  a\n", "b\n", "\n"]), max_size=10),
    st.integers(0, 10),
    st.lists(st.sampled_from(["a\n", "  a\n", "b\n", "\n", "c\n"]), min_size=1, max_size=4),
)
def test_a_block_the_diff_may_place_elsewhere_spans_where_it_was_put(
    before: list[str], at: int, block: list[str]
) -> None:
    at = min(at, len(before))
    after = before[:at] + block + before[at:]
    spans = _spans(_one_sided(before, after), "removed", _read(before, after))
    assert len(spans) <= 1
    if spans:  # whichever place the diff chose, what holds the span holds the place it went in
        ((lo, hi),) = spans
        assert lo <= at and at + 1 <= hi
    else:  # it could have gone in at the top of the file: nothing holds it
        assert after[len(block) :] == before


def test_lines_on_the_side_read_are_held_themselves() -> None:
    change = _one_sided(["a\n", "b\n", "c\n"], ["a\n", "B\n", "c\n", "d\n"])
    assert _spans(change, "removed", _read([], [])) == [(2, 2)]
    assert _spans(change, "added", _read([], [])) == [(2, 2), (4, 4)]


def test_lines_alike_but_for_their_indentation_do_not_slide() -> None:
    before = ["def f(x):\n", "    if x:\n", "        pass\n", "    return\n"]
    after = [*before[:3], "        return\n", before[3]]  # git compares lines whole, as here
    assert _spans(_one_sided(before, after), "removed", _read(before, after)) == [(3, 4)]
