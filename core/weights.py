"""How much a line or an identifier says, measured from the repository's own history.

An inverse document frequency over the terms of the changes that landed on the default branch. A
term is a changed line, normalised (whitespace collapsed), or an identifier on one (a word of three
characters or more). The documents are the changes and, apart, the files each change touched. A
line that every test file repeats, a licence header, a fixture's or a generated file's boilerplate
occurs in many documents and weighs little; an identifier one change introduced weighs nearly 1.
No keyword list, in any language.

`weight` is the smaller of the two normalised idfs, `log((N + 1) / (df + 1)) / log(N + 1)`: 1 for a
term never seen, 0 for one in every document. The counts live in the harvest cache
(`.git/comind/weights.sqlite`, `WeightIndex`) and only grow as the harvest reads new changes:
counts add up, so a history read in two runs gives the counts one run gives.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

__all__ = ["IDENT", "Counts", "Uniform", "WeightIndex", "Weights", "identifiers", "key", "terms_of"]

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
FILE = "weights.sqlite"
VERSION = 1  # bump when terms or documents change: the index is rebuilt


def identifiers(text: str) -> set[str]:
    return set(IDENT.findall(text))


def terms_of(lines: Iterable[str]) -> set[str]:
    """The terms of one document (a file's changed lines, normalised): the lines and their identifiers."""
    out: set[str] = set()
    for text in lines:
        if text:
            out.add(text)
            out.update(IDENT.findall(text))
    return out


def key(term: str) -> int:
    """A term's key in the index: 64 bits of its hash (the index keeps no text of the repository)."""
    return int.from_bytes(
        hashlib.blake2b(term.encode("utf-8", "replace"), digest_size=8).digest(), "little", signed=True
    )


def _idf(df: int, n: int) -> float:
    if n <= 0:
        return 1.0
    return max(0.0, math.log((n + 1) / (df + 1)) / math.log(n + 1))


class Weights:
    """Document frequencies of terms; `weight` of a term from them. This base knows no history: every
    term weighs 1 (what the matcher did before it measured anything)."""

    changes = 0  # documents read: changes
    files = 0  # documents read: files of those changes

    def counts(self, term: str) -> tuple[int, int]:
        """(changes, files) holding the term."""
        return 0, 0

    def prefetch(self, terms: Iterable[str]) -> None:
        """Look up many terms at once (an index on disk answers one query for them)."""

    def weight(self, term: str, apart: tuple[int, int] = (0, 0)) -> float:
        """The term's weight; `apart`: (changes, files) holding it not to count (an attempt's own and its revert's)."""
        in_changes, in_files = self.counts(term)
        return min(_idf(max(0, in_changes - apart[0]), self.changes), _idf(max(0, in_files - apart[1]), self.files))

    def said(self, term: str, whose: str = "") -> str:
        """`held by 3 of the 4,210 file changes in this history`: how rare the term is, for an
        explanation (the history's count, not the change's own files). `whose`: who wrote the term
        ("the attempt's"): when no change measured holds it, that one's own change was not measured
        either (tried and reverted on a branch whose merge brought nothing, or older than the changes
        a first harvest reads), which is said, as a "none" reads as if it never wrote it."""
        if not self.files:
            return "no history measured"
        held = self.counts(term)[1]
        changes = f"{self.files:,} file change{'s' if self.files != 1 else ''}"
        if held:
            return f"held by {held:,} of the {changes} in this history"
        return f"held by none of the {changes} measured in this history" + (
            f", {whose} own not among them" if whose else ""
        )


Uniform = Weights


class Counts(Weights):
    """Document frequencies in memory, as a harvest adds them up before writing them."""

    def __init__(self) -> None:
        self.by_change: Counter[str] = Counter()
        self.by_file: Counter[str] = Counter()
        self.changes = 0
        self.files = 0

    def add_change(self, files: Iterable[Iterable[str]]) -> None:
        """One change, as the normalised changed lines of each of its files."""
        change: set[str] = set()
        for lines in files:
            terms = {t for t in lines if t}
            terms.update(IDENT.findall("\n".join(terms)))  # one call per file: the harvest reads thousands
            self.by_file.update(terms)
            change |= terms
            self.files += 1
        self.by_change.update(change)
        self.changes += 1

    def counts(self, term: str) -> tuple[int, int]:
        return self.by_change.get(term, 0), self.by_file.get(term, 0)


class WeightIndex(Weights):
    """The counts in the harvest cache: `terms(key, changes, files)`, and the totals in `meta`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._known: dict[str, tuple[int, int]] = {}
        self.tip = ""
        if path.exists():
            try:
                db = self._connect()
                meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
            except sqlite3.DatabaseError:  # not an index (a cache, derived): made again on the next harvest
                self.close()
                path.unlink()
                meta = {}
            if meta.get("version") == str(VERSION):
                self.changes, self.files = int(meta["changes"]), int(meta["files"])
                self.tip = str(meta.get("tip", ""))

    @classmethod
    def of(cls, cache_dir: Path) -> WeightIndex:
        return cls(cache_dir / FILE)

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS terms (key INTEGER PRIMARY KEY, changes INTEGER, files INTEGER)"
                " WITHOUT ROWID"
            )
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def prefetch(self, terms: Iterable[str]) -> None:
        wanted = {key(t): t for t in set(terms) if t not in self._known}
        if not wanted:
            return
        for t in wanted.values():
            self._known[t] = (0, 0)
        if not self.changes:
            return
        db = self._connect()
        keys = list(wanted)
        for start in range(0, len(keys), 900):  # sqlite's bound on variables per statement
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for k, in_changes, in_files in db.execute(
                f"SELECT key, changes, files FROM terms WHERE key IN ({marks})", chunk
            ):
                self._known[wanted[k]] = (int(in_changes), int(in_files))

    def counts(self, term: str) -> tuple[int, int]:
        if term not in self._known:
            self.prefetch([term])
        return self._known[term]

    def add(self, counts: Counts, tip: str, *, fresh: bool = False) -> None:
        """Add a run's counts (or, `fresh`, replace the index with them) and record the tip read to."""
        db = self._connect()
        db.execute("PRAGMA synchronous = OFF")  # a cache: made again when lost
        with db:
            if fresh or not self.changes:
                db.execute("DELETE FROM terms")
                self.changes = self.files = 0
            rows = {}
            for term, n in counts.by_file.items():
                rows[key(term)] = (counts.by_change.get(term, 0), n)
            db.executemany(
                "INSERT INTO terms (key, changes, files) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                "changes = changes + excluded.changes, files = files + excluded.files",
                ((k, c, f) for k, (c, f) in rows.items()),
            )
            self.changes += counts.changes
            self.files += counts.files
            self.tip = tip
            db.executemany(
                "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                [("version", str(VERSION)), ("changes", str(self.changes)), ("files", str(self.files)), ("tip", tip)],
            )
        self._known.clear()

    def table(self) -> dict[int, tuple[int, int]]:
        """Every key's counts (for tests and audits)."""
        if not self.changes:
            return {}
        return {
            int(k): (int(c), int(f)) for k, c, f in self._connect().execute("SELECT key, changes, files FROM terms")
        }
