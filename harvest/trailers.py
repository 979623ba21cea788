"""Commit-message trailers: git's own rules, pinned, and a Lore-aware recovery mode.

``parse_trailers`` re-implements git-interpret-trailers(1) / ``trailer.c`` (as of git 2.39, no
``trailer.*`` configuration, comment character ``#``) so results do not depend on the git that
happens to be installed:

* the trailer block is at the end of the message (or before a ``---`` divider line when
  ``divider=True``), after trailing blank lines, comment lines, an old ``Conflicts:`` block and
  a scissors line are set aside;
* it is preceded by a blank or whitespace-only line; the first paragraph (the title) never holds
  trailers;
* it is all trailers, or holds a git-generated line (``Signed-off-by: ``,
  ``(cherry picked from commit ``) and ``trailer_lines * 3 >= non_trailer_lines``; continuation
  lines before a non-trailer count as non-trailers; comment lines are ignored;
* a key is ASCII alphanumerics and ``-`` at the start of the line; spaces and tabs may sit
  between it and ``:``; values fold like RFC 822 (a continuation line starts with whitespace)
  and are unfolded with one space;
* deliberate difference from git 2.39: a ``:`` immediately followed by ``//`` is not a
  separator, as in newer git, so ``https://example.com`` is prose, not the trailer
  ``https: //example.com`` (git 2.39 still returns that one);
* a repeated key keeps every value, in order. The ``(cherry picked from commit …)`` line
  counts for the block but, like ``--only-trailers``, is not returned (see ``cherry_picks``).

``parse_lore`` returns the same git trailers plus the Lore lines git's rules miss in real
histories (a blank line before ``Co-authored-by:``, one trailer per paragraph, Lore lines mixed
with a little prose, an unindented continuation). It never changes what git mode found (except
dropping a line that sits inside an unclosed code fence) and only adds lines from the paragraphs
between the title and git's block (the whole body when git found none). Each such paragraph is
judged on its own:

* a line is a trailer line when it has git's key syntax; a *Lore line* when its key is in the
  Lore vocabulary (``comind.harvest.lorekeys``, any dialect, any case);
* lines inside a fenced code block (```` ``` ```` / ``~~~``), fence lines, lines quoted with ``>``,
  and ``#`` lines are prose, whatever they look like;
* a paragraph that starts with a trailer line and holds nothing but trailer lines, indented
  continuations and *unindented continuations* (non-blank lines directly after a trailer line or
  its continuation) is a trailer paragraph: all its trailers are returned (Lore and custom keys
  such as ``Assisted-by``), the unindented lines folded into the trailer above them;
* any other paragraph contributes its Lore lines (with their indented continuations) only when
  it holds at least one Lore line and trailer lines are at least 25% of it (git's own test for a
  block with a recognised key: ``trailer_lines * 3 >= non_trailer_lines``, the Lore keys playing
  the part of configured keys). So "Tested: manually" after one sentence counts, while the same
  line inside a paragraph of four or more prose lines does not: the reference found Lore lines
  mixed with a few prose lines to be a real cause of git's misses, while a lone key-like line
  wrapped into running prose is the false positive CommitLore warns about (its boundary case B3).
  Non-Lore keys of such a mixed paragraph (``Note: …``) are never returned.

Checked on real histories (``benchmarks/bench_walk.py``): in the Lore format's reference history
(1,378 commits on all branches) git's rules find 8,276 Lore lines, this mode 8,502, and a naive
``^Key:`` line-grep 8,504 — the two lines only the grep counts are prose that wrapped onto a
key-like word ("…Lore has no\\nSupersedes:, no Expires: and no lifecycle concept",
"…the parser commit recorded as\\nunverified: SPEC section 2.1…"). In another history that uses Lore git
finds none of its 36 Lore lines (each block is followed by a ``Co-Authored-By`` paragraph); this mode
finds all 36. Four public histories without Lore (27k commits) gain one
recovered ``Related:`` line.

Speed: a last paragraph of plain ``Key: value`` lines and indented continuations (the usual
shape) is read with two regexes; anything else goes through the line-by-line rules above. The
fast path is checked against them by a property test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from comind.harvest.lorekeys import EMPTY_ATOM, LORE_KEYS, LoreAtom, atom_from_trailers, canonical_lore_key

GIT_SPACE = " \t\n\r"  # git's isspace(): no \v or \f
GIT_GENERATED_PREFIXES = ("Signed-off-by: ", "(cherry picked from commit ")
SCISSORS = "# ------------------------ >8 ------------------------"

# Canonical case of common non-Lore keys; lookups are case-insensitive.
KNOWN_KEYS: dict[str, str] = {
    k.lower(): k
    for k in (
        "Signed-off-by",
        "Co-authored-by",
        "Co-developed-by",
        "Reviewed-by",
        "Acked-by",
        "Tested-by",
        "Reported-by",
        "Suggested-by",
        "Helped-by",
        "Requested-by",
        "Assisted-by",
        "Generated-by",
        "Cc",
        "Fixes",
        "Closes",
        "Resolves",
        "Refs",
        "Link",
        "See-also",
        "Bug",
        "Issue",
        "Change-Id",
        "Reviewed-on",
        "BREAKING-CHANGE",
    )
}

_SEP_RE = re.compile(r"[A-Za-z0-9-]+[ \t]*:")
_SIMPLE_LINE = re.compile(r"([A-Za-z0-9-]+)[ \t]*:(?!//)([^\n]*)")
_SIMPLE_PARAGRAPH = re.compile(
    r"[A-Za-z0-9-]+[ \t]*:(?!//)[^\n]*(?:\n(?:[A-Za-z0-9-]+[ \t]*:(?!//)[^\n]*|[ \t]+[^ \t\n][^\n]*))*"
)
_UNFOLD_RE = re.compile(r"\n[ \t\n\r]*")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CHERRY_RE = re.compile(r"^\(cherry picked from commit ([0-9a-f]{7,64})\)", re.MULTILINE)
# A cheap superset test for "some line after the first starts with a Lore key": a literal "\n" and
# a first-letter class let the regex engine skip ahead; the recovery itself is exact.
_LORE_HINT = re.compile(
    r"\n["
    + "".join(sorted({c for k in LORE_KEYS for c in (k[0], k[0].upper())}))
    + r"](?i:"
    + "|".join(sorted({re.escape(k[1:]) for k in LORE_KEYS}, key=len, reverse=True))
    + r")[ \t]*:"
)


@dataclass(frozen=True)
class Trailer:
    key: str  # as written
    canonical_key: str  # canonical case for known keys (Lore vocabulary, common git keys), else as written
    value: str  # unfolded and stripped; never contains a newline
    raw: str  # the original line(s), exactly as they appear in the message
    line: int  # 1-based line number of the key line in the message


_CANONICAL = {**KNOWN_KEYS, **LORE_KEYS}


def canonical_key(key: str) -> str:
    return _CANONICAL.get(key.lower(), key)


def _find_separator(line: str) -> int:
    """Position of the ``:`` ending a key (git's find_separator with separators ":"), else -1."""
    m = _SEP_RE.match(line)
    if m is None:
        return -1
    end = m.end()
    if line.startswith("//", end):  # newer git: "key://…" is a URL, not a trailer
        return -1
    return end - 1


def _is_blank(line: str) -> bool:
    return not line.strip(GIT_SPACE)


def _split(message: str) -> tuple[list[str], bool]:
    """Lines (split on ``\\n`` only, as git does) and whether the last one ends with a newline."""
    lines = message.split("\n")
    ends_nl = lines[-1] == ""
    if ends_nl:
        lines.pop()
    return lines, ends_nl


@dataclass(frozen=True)
class _Block:
    end_of_title: int  # index of the first blank line after the title (or trailer_end)
    start: int  # first line of the trailer block (== end when there is none)
    end: int  # line after the block
    seps: dict[int, int] = field(default_factory=dict)  # separator positions already found, by line


def _git_block(lines: list[str], ends_nl: bool, divider: bool) -> _Block:
    n = len(lines)

    def has_nl(i: int) -> bool:
        return i < n - 1 or ends_nl

    end = n
    if divider:  # find_patch_start: "---" followed by whitespace (a newline counts)
        for i, line in enumerate(lines):
            if line.startswith("---") and ((len(line) > 3 and line[3] in GIT_SPACE) or (len(line) == 3 and has_nl(i))):
                end = i
                break

    # ignore_non_trailer: trailing comments and blank lines, an old "Conflicts:" block, scissors.
    cutoff = end
    try:
        i = lines.index(SCISSORS, 0, end)
        if has_nl(i):
            cutoff = i
    except ValueError:
        pass
    boc = 0  # as in git, 0 doubles as "unset"
    in_conflicts = False
    # Only the tail after the last line that surely resets the state matters; start there, so a
    # long message costs one backward scan instead of a forward pass over every line.
    first = 0
    for i in range(cutoff - 1, 0, -1):
        line = lines[i]
        if line and not line.startswith(("#", "\t")) and line != "Conflicts:":
            first = i + 1
            # git leaves in_conflicts set while boc is "unset": a "Conflicts:" first line
            # followed by no comment, blank or "Conflicts:" line up to here.
            in_conflicts = (
                lines[0] == "Conflicts:"
                and has_nl(0)
                and not any(not x or x.startswith("#") or x == "Conflicts:" for x in lines[1:i])
            )
            break
    for i in range(first, cutoff):
        line = lines[i]
        if line.startswith("#") or line == "":
            if not boc:
                boc = i
        elif line == "Conflicts:" and has_nl(i):
            in_conflicts = True
            if not boc:
                boc = i
        elif in_conflicts and line.startswith("\t"):
            pass
        elif boc:
            boc = 0
            in_conflicts = False
    trailer_end = boc if boc else cutoff

    # find_trailer_start
    end_of_title = trailer_end
    for i in range(trailer_end):
        line = lines[i]
        if line.startswith("#"):
            continue
        if not line.strip(GIT_SPACE):
            end_of_title = i
            break
    only_spaces = True
    recognized = False
    trailer_lines = non_trailer_lines = possible_continuations = 0
    seps: dict[int, int] = {}
    for i in range(trailer_end - 1, end_of_title - 1, -1):
        line = lines[i]
        if line.startswith("#"):
            non_trailer_lines += possible_continuations
            possible_continuations = 0
            continue
        if not line.strip(GIT_SPACE):
            if only_spaces:
                continue
            non_trailer_lines += possible_continuations
            if (recognized and trailer_lines * 3 >= non_trailer_lines) or (trailer_lines and not non_trailer_lines):
                return _Block(end_of_title, i + 1, trailer_end, seps)
            return _Block(end_of_title, trailer_end, trailer_end)
        only_spaces = False
        if line.startswith(GIT_GENERATED_PREFIXES):
            trailer_lines += 1
            possible_continuations = 0
            recognized = True
        elif (sep := _find_separator(line)) >= 1:
            seps[i] = sep
            trailer_lines += 1
            possible_continuations = 0
        elif line[0] in GIT_SPACE:
            possible_continuations += 1
        else:
            non_trailer_lines += 1 + possible_continuations
            possible_continuations = 0
    return _Block(end_of_title, trailer_end, trailer_end)


def _make(parts: list[str], first_index: int, sep: int) -> Trailer:
    first = parts[0]
    key = first[:sep].strip(GIT_SPACE)
    if len(parts) == 1:
        value = first[sep + 1 :].strip(GIT_SPACE)
    else:
        value = "\n".join([first[sep + 1 :], *parts[1:]]).strip(GIT_SPACE)
        value = _UNFOLD_RE.sub(" ", value).strip(GIT_SPACE)
    return Trailer(key, canonical_key(key), value, "\n".join(parts), first_index + 1)


def _parse_block(lines: list[str], block: _Block) -> list[Trailer]:
    entries: list[tuple[int, int, list[str]]] = []
    last: list[str] | None = None
    seps = block.seps
    for i in range(block.start, block.end):
        line = lines[i]
        if last is not None and (line[:1] or "\n") in GIT_SPACE:
            last.append(line)
            continue
        current = [line]
        sep = seps[i] if i in seps else _find_separator(line)
        entries.append((i, sep, current))
        last = current if sep >= 1 else None
    return [_make(parts, i, sep) for i, sep, parts in entries if sep >= 1 and not parts[0].startswith("#")]


def _simple_block(message: str) -> tuple[int, int, list[Trailer]] | None:
    """The common well-formed case, read with two regexes: a last paragraph made only of
    ``Key: value`` lines and their indented continuations, in a message with no comment,
    whitespace-only, CR or ``Conflicts:`` line that git's finer rules would have to weigh. Returns
    (index of the block's first line, its offset in message, trailers), or None when the general
    parser must decide."""
    if "\r" in message or "\n#" in message or message.startswith("#") or "Conflicts:" in message:
        return None
    tail = message.rstrip("\n")
    cut = tail.rfind("\n\n")
    if cut < 0:
        return None
    paragraph = tail[cut + 2 :]
    if not _SIMPLE_PARAGRAPH.fullmatch(paragraph):
        return None
    first = tail.count("\n", 0, cut + 2)
    out: list[Trailer] = []
    lines = paragraph.split("\n")
    for n, line in enumerate(lines):
        if line[0] in " \t":
            continue  # folded into the trailer above
        m = _SIMPLE_LINE.match(line)
        assert m is not None
        if n + 1 < len(lines) and lines[n + 1][0] in " \t":
            end = n + 1
            while end < len(lines) and lines[end][0] in " \t":
                end += 1
            out.append(_make(lines[n:end], first + n, m.start(2) - 1))
            continue
        key = m.group(1)
        out.append(Trailer(key, _CANONICAL.get(key.lower(), key), m.group(2).strip(GIT_SPACE), line, first + n + 1))
    return first, cut + 2, out


def parse_trailers(message: str, *, divider: bool = False) -> list[Trailer]:
    """Trailers by git's rules (``git interpret-trailers --parse``; ``--no-divider`` unless ``divider``)."""
    if ":" not in message or (not divider and _surely_no_block(message)):
        return []
    if not divider and (simple := _simple_block(message)) is not None:
        return simple[2]
    lines, ends_nl = _split(message)
    block = _git_block(lines, ends_nl, divider)
    return _parse_block(lines, block)


def _surely_no_block(message: str) -> bool:
    """Cheap exact test for the common case: the last non-blank line is prose and nothing in the
    message can make a mixed block count (no git-generated line) or move the block (no scissors)."""
    tail = message.rstrip(GIT_SPACE)
    cut = tail.rfind("\n")
    if cut < 0:
        return True  # one line: the title, which never holds trailers
    last = tail[cut + 1 :]
    return (
        bool(last)
        and last[0] not in GIT_SPACE
        and last[0] != "#"
        and _find_separator(last) < 1
        and (
            "Signed-off-by: " not in message
            and "(cherry picked from commit " not in message
            and SCISSORS not in message
        )
    )


def cherry_picks(message: str) -> list[str]:
    """Commit ids named by ``(cherry picked from commit <sha>)`` lines (``git cherry-pick -x``)."""
    return _CHERRY_RE.findall(message)


def _fenced(lines: list[str], start: int, end: int) -> list[bool]:
    """For lines[start:end]: True where the line is a fence line or inside a fenced code block."""
    out: list[bool] = []
    opener: str | None = None
    for i in range(start, end):
        m = _FENCE_RE.match(lines[i])
        if opener is None:
            if m:
                opener = m.group(1)
            out.append(m is not None)
        else:
            if m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener):
                opener = None
            out.append(True)
    return out


def _hint_lines(message: str) -> list[int]:
    """Indices of the lines that may start with a Lore key (a superset), in order."""
    out: list[int] = []
    line = last = 0
    for m in _LORE_HINT.finditer(message):
        line += message.count("\n", last, m.start() + 1)
        last = m.start() + 1
        out.append(line)
    return out


def _recover(lines: list[str], start: int, end: int, prose: list[bool], hints: list[int]) -> list[Trailer]:
    """Lore lines of the paragraphs in lines[start:end] (see the module docstring). Only paragraphs
    holding a hinted line can contribute, so only those are read."""
    out: list[Trailer] = []
    done = start
    for h in hints:
        if h < done or h >= end:
            continue
        i = h
        while i > start and not _is_blank(lines[i - 1]):
            i -= 1
        j = h
        while j < end and not _is_blank(lines[j]):
            j += 1
        out.extend(_recover_paragraph(lines, i, j, prose))
        done = j
    return out


def _recover_paragraph(lines: list[str], start: int, end: int, prose: list[bool]) -> list[Trailer]:
    # kinds: K Lore line, T other trailer line, C indented continuation, U unindented
    # continuation candidate, X prose.
    kinds: list[str] = []
    seps: list[int] = []
    for i in range(start, end):
        line = lines[i]
        kind, sep = "X", -1
        previous = kinds[-1] if kinds else "X"
        if prose[i] or line.startswith(("#", ">")) or line.lstrip(" \t").startswith(">"):
            kind = "X"
        elif line[0] in GIT_SPACE:
            kind = "C" if previous != "X" else "X"
        elif (sep := _find_separator(line)) >= 1:
            kind = "K" if canonical_lore_key(line[:sep].strip(GIT_SPACE)) else "T"
        elif previous != "X":
            kind = "U"
        kinds.append(kind)
        seps.append(sep)
    if "K" not in kinds:
        return []
    whole = kinds[0] in "KT" and "X" not in kinds
    if not whole:
        kinds = ["X" if k == "U" else k for k in kinds]
        # a continuation only continues a trailer line, never prose that was a U candidate
        for n, k in enumerate(kinds):
            if k == "C" and (n == 0 or kinds[n - 1] == "X"):
                kinds[n] = "X"
        trailers = kinds.count("K") + kinds.count("T")
        if trailers * 3 < kinds.count("X"):
            return []
    out: list[Trailer] = []
    n = 0
    while n < len(kinds):
        kind = kinds[n]
        m = n + 1
        while m < len(kinds) and kinds[m] in "CU":
            m += 1
        if kind == "K" or (kind == "T" and whole):
            out.append(_make(lines[start + n : start + m], start + n, seps[n]))
        n = m
    return out


def might_have_lore(message: str) -> bool:
    """False when no line after the first starts with a Lore key: ``parse_lore`` then finds no Lore."""
    return _LORE_HINT.search(message) is not None


def parse_lore(message: str) -> list[Trailer]:
    """Git's trailers plus the Lore lines git's rules miss, in message order (see the module docstring)."""
    simple = _simple_block(message)
    if (
        simple is not None
        and not _LORE_HINT.search(message, 0, simple[1])
        and "```" not in message
        and ("~~~" not in message)
    ):
        return simple[2]  # no Lore line before git's own block: nothing to recover
    hints = _hint_lines(message)
    if not hints:
        return parse_trailers(message)
    lines, ends_nl = _split(message)
    block = _git_block(lines, ends_nl, divider=False)
    found = _parse_block(lines, block)
    body_start = block.end_of_title
    if "```" in message or "~~~" in message:
        prose = [False] * body_start + _fenced(lines, body_start, len(lines))
        found = [t for t in found if not prose[t.line - 1]]
    else:
        prose = [False] * len(lines)
    region_end = block.start if block.start < block.end else len(lines)
    return _recover(lines, body_start, region_end, prose, hints) + found


def lore_atom(message: str) -> LoreAtom:
    """``parse_lore`` + normalisation: the Lore content of one commit message.

    A message without any Lore key yields the empty atom (``custom`` is only filled beside Lore;
    ``parse_trailers`` gives every trailer of any message)."""
    if not might_have_lore(message):
        return EMPTY_ATOM
    return atom_from_trailers(parse_lore(message))
