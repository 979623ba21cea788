"""The ledger view: a SQLite cache of every record in the store and the harvest cache.

It holds records, anchors, relations and an FTS5 index over title, trigger and body, and is
rebuilt incrementally: a sync lists each source and reads only the keys it has not seen. It is a
cache — deleting it loses nothing. Status is not stored here: it is derived on every read.

When one id appears with two different contents (a replay with a changed payload) that is a
conflict, not an overwrite: the earliest version (by created_at, then hash) stays visible and
`comind ledger audit` lists the conflict.
"""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from comind.errors import ComindError
from comind.records import Record
from comind.status import Status, derive
from comind.store import BrokenSnapshot, CorruptObject, CorruptObjectWarning, Store, snapshot_journal

SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS objects(
    source TEXT, key TEXT, record_id TEXT, hash TEXT, created_at TEXT, json TEXT,
    PRIMARY KEY(source, key));
CREATE INDEX IF NOT EXISTS objects_record ON objects(record_id);
CREATE TABLE IF NOT EXISTS snapshot_keys(source TEXT, key TEXT, segment TEXT, PRIMARY KEY(source, key));
CREATE INDEX IF NOT EXISTS snapshot_keys_segment ON snapshot_keys(source, segment);
CREATE TABLE IF NOT EXISTS problems(source TEXT, key TEXT, reason TEXT, PRIMARY KEY(source, key));
CREATE TABLE IF NOT EXISTS records(
    rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, hash TEXT, kind TEXT, title TEXT, created_at TEXT, json TEXT);
CREATE INDEX IF NOT EXISTS records_order ON records(created_at, id);
CREATE TABLE IF NOT EXISTS anchors(
    record_id TEXT, n INTEGER, scope TEXT, role TEXT, path TEXT, symbol TEXT, module TEXT, package TEXT,
    raw TEXT, name TEXT, body_hash TEXT, shape_hash TEXT, PRIMARY KEY(record_id, n));
CREATE INDEX IF NOT EXISTS anchors_path ON anchors(path);
CREATE INDEX IF NOT EXISTS anchors_name ON anchors(name);
CREATE INDEX IF NOT EXISTS anchors_body ON anchors(body_hash);
CREATE INDEX IF NOT EXISTS anchors_shape ON anchors(shape_hash);
CREATE TABLE IF NOT EXISTS verdicts(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS relations(record_id TEXT PRIMARY KEY, relation TEXT, source TEXT, target TEXT);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, trigger, body, tokenize='unicode61 remove_diacritics 2');
"""
VERSION = "3"  # 3: snapshot keys name their segment


class SyncReport:
    def __init__(self) -> None:
        self.added = 0
        self.removed = 0
        self.problems: list[tuple[str, str, str]] = []


class Ledger:
    """The view over several sources (name -> Store)."""

    def __init__(self, path: Path, sources: Mapping[str, Store]) -> None:
        self.path = path
        self.sources = dict(sources)
        self._deferred_verdicts: dict[str, str] | None = None  # while reading(): written when it ends
        self._deleted_text = False  # rows holding record text were deleted: `_purge` before the sync ends
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA secure_delete=ON")  # a deleted row's text zeroed, not left in free pages
            if self._stored_version() not in (None, VERSION):
                self._drop_all()  # a cache of another shape: its tables may lack columns SCHEMA indexes
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ComindError(f"ledger cache {path}: {exc}; delete it, it is only a cache") from None
        if self._meta("version") != VERSION:
            self._reset()

    def _stored_version(self) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        except sqlite3.OperationalError:  # a new file: no meta table yet
            return None
        return None if row is None else str(row[0])

    def _drop_all(self) -> None:
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if self._stored_version() in (None, VERSION):
                return  # another process rebuilt it meanwhile
            tables = "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            self._deleted_text = True  # (secure_delete zeroes the pages; the write-ahead log keeps them)
            for (name,) in self.db.execute(tables + " AND sql LIKE 'CREATE VIRTUAL%'").fetchall():
                self.db.execute(f'DROP TABLE IF EXISTS "{name}"')  # with its shadow tables
            for (name,) in self.db.execute(tables).fetchall():
                self.db.execute(f'DROP TABLE IF EXISTS "{name}"')

    def close(self) -> None:
        self.db.close()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str | None) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _reset(self) -> None:
        self._deleted_text |= bool(self.db.execute("SELECT EXISTS(SELECT 1 FROM objects)").fetchone()[0])
        for table in (
            "meta",
            "objects",
            "snapshot_keys",
            "problems",
            "records",
            "anchors",
            "relations",
            "fts",
            "verdicts",
        ):
            self.db.execute(f"DELETE FROM {table}")
        self._set_meta("version", VERSION)

    # -- sync ------------------------------------------------------------------------------

    def sync(self, *, warn: bool = True, full: bool = False) -> SyncReport:
        """Bring the view up to date with every source, reading only what is new.

        `full` lists every inbox even where a journal says what is new (audit: finds records that
        writers of the first layout put without journaling them)."""
        report = SyncReport()
        for name, store in self.sources.items():
            token = store.change_token()
            if not full and token is not None and token == self._meta(f"token:{name}"):
                continue  # a local store that has not changed since the last sync
            self._sync_source(name, store, report, full=full)
            self._set_meta(f"token:{name}", token)
        if self._deleted_text:
            self._purge()
        if warn:  # every time, until someone fixes the store: a silent skip would look like a miss
            for message in self.problem_lines():
                warnings.warn(message, CorruptObjectWarning, stacklevel=2)
        return report

    def _purge(self) -> None:
        """What deleted rows leave in the file, gone: `secure_delete` zeroes their pages; the FTS index
        keeps a deleted row's terms until its segments merge, and the write-ahead log the pages as they
        were until it is truncated (a reader still in it blocks that; the last connection's close removes it)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT INTO fts(fts) VALUES('optimize')")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        self._deleted_text = False

    def problem_lines(self, most: int = 5) -> list[str]:
        problems = self.problems()
        lines = [f"skipped {source} object {key}: {reason}" for source, key, reason in problems[:most]]
        if len(problems) > most:
            lines.append(f"… and {len(problems) - most} more unreadable objects: run comind ledger audit")
        return lines

    def rebuild(self) -> SyncReport:
        """Forget everything and read every source again (audit: catches objects edited in place)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self._reset()
        return self.sync(warn=False, full=True)

    def _sync_source(self, name: str, store: Store, report: SyncReport, *, full: bool = False) -> None:
        use_snapshot = True
        for attempt in range(3):
            try:
                self._sync_once(name, store, report, use_snapshot=use_snapshot and attempt < 2, full=full)
                break
            except CorruptObject as exc:  # an unreadable manifest or segment: read the inbox, and say so
                store.skipped[exc.key] = exc.reason
                use_snapshot = False
            except BrokenSnapshot:  # a racing compaction deleted part of it: list again, then read the inbox
                continue
        with self.db:  # objects other than records that this sync read around, named until they are fixed
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM problems WHERE source=? AND key LIKE '\\_ledger/%' ESCAPE '\\'", (name,))
            self.db.executemany(
                "INSERT OR REPLACE INTO problems VALUES (?, ?, ?)",
                ((name, key, reason) for key, reason in sorted(store.skipped.items())),
            )

    def _sync_once(self, name: str, store: Store, report: SyncReport, *, use_snapshot: bool, full: bool) -> None:
        """One source. On an object store whose snapshot has a journal position, only the journal entries
        after the last one seen are read (nothing changed: three LISTs, no GET); otherwise, and when `full`,
        the inbox is listed and compared with what the view holds."""
        watermark = self._meta(f"journal:{name}")
        erased, newest, listing = store.listings(watermark if use_snapshot and not full else None)
        snapshot = newest if use_snapshot else None
        journal_path = store.journaled and not full and snapshot is not None and snapshot_journal(snapshot) is not None
        tail = store.journal_tail() if store.journaled and not journal_path else None  # before listing the inbox
        from_snapshot: dict[str, Record] = {}  # a first-layout snapshot's records, read whole
        new_snapshot_keys: dict[str, str] = {}  # key -> segment, for segments new to the view
        if snapshot != self._meta(f"snapshot:{name}"):
            old_segments = {
                s for (s,) in self.db.execute("SELECT DISTINCT segment FROM snapshot_keys WHERE source=?", (name,))
            }
            segments: list[str] = []
            if snapshot and snapshot.endswith(".jsonl.gz"):
                from_snapshot, problems = store.read_snapshot(snapshot)
                report.problems += [(name, p.key, p.reason) for p in problems]
                new_snapshot_keys = dict.fromkeys(from_snapshot, snapshot)
                segments = [snapshot]
            elif snapshot:
                try:
                    segments = store.read_manifest(snapshot).segments
                except FileNotFoundError:
                    raise BrokenSnapshot(snapshot) from None
                added_segments = [s for s in segments if s not in old_segments]
                for segment, keys in zip(added_segments, store._map(store.segment_keys, added_segments), strict=True):
                    new_snapshot_keys.update(dict.fromkeys(keys, segment))
            gone = [s for s in old_segments if s not in segments]
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("DELETE FROM snapshot_keys WHERE source=? AND segment=?", ((name, s) for s in gone))
                self.db.executemany(
                    "INSERT OR REPLACE INTO snapshot_keys VALUES (?, ?, ?)",
                    ((name, k, s) for k, s in new_snapshot_keys.items()),
                )
                self._set_meta(f"snapshot:{name}", snapshot)
        if journal_path:
            assert snapshot is not None
            after = max(watermark or "", snapshot_journal(snapshot) or "")
            last, journaled = store.journal_entries(after, listing)
            candidates = set(new_snapshot_keys).union(journaled)
            removed = self._keys_of(name, erased)
            added = sorted(k for k in candidates - self._seen(name, candidates) if k[:36] not in erased)
            tail = last
        else:
            snapshot_keys = {k for (k,) in self.db.execute("SELECT key FROM snapshot_keys WHERE source=?", (name,))}
            current = {k for k in snapshot_keys.union(store.inbox_keys()) if k[:36] not in erased}
            seen = self._seen(name)
            removed, added = seen - current, sorted(current - seen)
        fetched: dict[str, Record | str | None] = dict(from_snapshot)
        wanted: dict[str, set[str]] = {}
        for key in added:
            if key in new_snapshot_keys and key not in fetched:
                wanted.setdefault(new_snapshot_keys[key], set()).add(key)
        for segment, keys in wanted.items():  # only the segments holding keys the view lacks
            records, problems = store.read_segment(segment, keys)
            report.problems += [(name, p.key, p.reason) for p in problems]
            fetched.update(records)
        fetched.update(store.read_many([k for k in added if k not in fetched]))  # the rest from the inbox
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            affected = set()
            for key in removed:
                self._deleted_text = True
                affected.add(key[:36])
                self.db.execute("DELETE FROM objects WHERE source=? AND key=?", (name, key))
                self.db.execute("DELETE FROM problems WHERE source=? AND key=?", (name, key))
            for key in added:
                result = fetched.get(key)
                if isinstance(result, Record):
                    self.db.execute(
                        "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                        (name, key, result.id, result.hash, result.created_at, result.to_json().decode()),
                    )
                    affected.add(result.id)
                elif result is not None:
                    self.db.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?)", (name, key, result))
                    report.problems.append((name, key, result))
            for record_id in sorted(affected):
                self._materialise(record_id)
            self._set_meta(f"journal:{name}", tail)
        report.added += len(added)
        report.removed += len(removed)

    def _seen(self, name: str, among: set[str] | None = None) -> set[str]:
        """Keys the view holds for a source (objects and unreadable ones); only those `among`, if given and few."""
        if among is not None and len(among) <= 500:
            found = set()
            for key in among:
                query = (
                    "SELECT 1 FROM objects WHERE source=? AND key=? UNION ALL "
                    "SELECT 1 FROM problems WHERE source=? AND key=?"
                )
                if self.db.execute(query, (name, key, name, key)).fetchone():
                    found.add(key)
            return found
        seen = {k for (k,) in self.db.execute("SELECT key FROM objects WHERE source=?", (name,))}
        return seen | {k for (k,) in self.db.execute("SELECT key FROM problems WHERE source=?", (name,))}

    def _keys_of(self, name: str, record_ids: set[str]) -> set[str]:
        """Keys the view holds for these record ids (tombstoned ones, to drop)."""
        ids = sorted(record_ids)
        keys: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            keys.update(
                k
                for (k,) in self.db.execute(
                    f"SELECT key FROM objects WHERE source=? AND record_id IN ({marks}) UNION "
                    f"SELECT key FROM problems WHERE source=? AND substr(key, 1, 36) IN ({marks})",
                    (name, *chunk, name, *chunk),
                )
            )
        return keys

    def _materialise(self, record_id: str) -> None:
        """Make the visible version of one id match its objects (the earliest version wins)."""
        old = self.db.execute("SELECT rowid FROM records WHERE id=?", (record_id,)).fetchone()
        if old:  # (its text stays in `objects` until its object goes, which flags the purge there)
            self.db.execute("DELETE FROM fts WHERE rowid=?", old)
            self.db.execute("DELETE FROM records WHERE rowid=?", old)
            self.db.execute("DELETE FROM anchors WHERE record_id=?", (record_id,))
            self.db.execute("DELETE FROM relations WHERE record_id=?", (record_id,))
        row = self.db.execute(
            "SELECT json FROM objects WHERE record_id=? ORDER BY created_at, hash LIMIT 1", (record_id,)
        ).fetchone()
        if row is None:
            return
        record = Record(json.loads(row[0]))
        cursor = self.db.execute(
            "INSERT INTO records(id, hash, kind, title, created_at, json) VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, record.hash, record.kind, record.title, record.created_at, row[0]),
        )
        self.db.execute(
            "INSERT INTO fts(rowid, title, trigger, body) VALUES (?, ?, ?, ?)",
            (cursor.lastrowid, record.title, record.trigger, record.body),
        )
        for n, a in enumerate(record.anchors):
            symbol = a.get("symbol")
            self.db.execute(
                "INSERT INTO anchors VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    n,
                    a.get("scope"),
                    a.get("role", "subject"),
                    a.get("path"),
                    symbol,
                    a.get("module"),
                    (a.get("dep") or {}).get("package"),
                    a.get("raw"),
                    symbol.rsplit(".", 1)[-1] if symbol else None,
                    a.get("body_hash"),
                    a.get("shape_hash"),
                ),
            )
        if record.kind == "relation":
            f = record.fields
            self.db.execute(
                "INSERT INTO relations VALUES (?, ?, ?, ?)", (record.id, f["relation"], f.get("source"), f["target"])
            )

    # -- reading ---------------------------------------------------------------------------

    def _records(self, sql: str, params: Iterable[Any] = ()) -> list[Record]:
        return [Record(json.loads(j)) for (j,) in self.db.execute(sql, tuple(params))]

    def all(self) -> list[Record]:
        return self._records("SELECT json FROM records ORDER BY created_at, id")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read snapshot for every query made inside (other writers are not blocked: WAL).
        Verdicts stored meanwhile are written when it ends."""
        if self.db.in_transaction:  # nested: the outer snapshot holds
            yield
            return
        self._deferred_verdicts = {}
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")
            deferred, self._deferred_verdicts = self._deferred_verdicts, None
            if deferred:
                self.store_verdicts(deferred)

    def knowledge(self, kinds: Collection[str] = ()) -> Iterator[Record]:
        """Every record but relations (only these kinds, if given), oldest first, decoded one at a time:
        `all()` without holding the whole ledger."""
        where, params = self._kinds_clause(kinds)
        for (text,) in self.db.execute(f"SELECT json FROM records WHERE {where} ORDER BY created_at, id", params):
            yield Record(json.loads(text))

    def code_candidates(self, kinds: Collection[str] = ()) -> list[Record]:
        """The records `knowledge(kinds)` yields that may have a code verdict: a superset of those
        `codestatus.needs_code` accepts (a commit or a dependency named anywhere in the stored JSON),
        found without decoding the others."""
        where, params = self._kinds_clause(kinds)
        rows = self.db.execute(f"SELECT json FROM records WHERE {where}", params)
        return [Record(json.loads(text)) for (text,) in rows if '"commit"' in text or '"dependency"' in text]

    @staticmethod
    def _kinds_clause(kinds: Collection[str]) -> tuple[str, tuple[str, ...]]:
        wanted = tuple(sorted(set(kinds) - {"relation"}))
        if not kinds:
            return "kind != 'relation'", ()
        return f"kind IN ({','.join('?' * len(wanted))})" if wanted else "0", wanted

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM records").fetchone()[0])

    def relations(self) -> list[Record]:
        # CROSS JOIN keeps SQLite from scanning every record to probe the (small) relations table.
        return self._records("SELECT r.json FROM relations x CROSS JOIN records r ON r.id = x.record_id")

    def get(self, ref: str) -> Record:
        """A record by id, or by a unique prefix or suffix of at least 6 characters (`log` shows the last 8)."""
        ref = ref.strip().lower()
        if not re.fullmatch(r"[0-9a-f-]+", ref):  # ("nosuchid" is 8 characters: say what is wrong with it)
            raise ComindError(f"record id {ref!r}: an id is hexadecimal digits and dashes (comind log shows them)")
        if len(ref) < 6:
            raise ComindError(f"record id {ref!r}: give a record id or at least 6 of its characters")
        found = self._records("SELECT json FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", (ref, ref + "g"))
        if not found and len(ref) < 36:
            pattern = "%" + ref.replace("%", "").replace("_", "")
            found = self._records("SELECT json FROM records WHERE id LIKE ? LIMIT 2", (pattern,))
        if not found:
            raise ComindError(f"no record {ref!r} in the ledger")
        if len(found) > 1:
            raise ComindError(f"record id {ref!r} is ambiguous: give more characters")
        return found[0]

    def with_context(self, records: Iterable[Record]) -> list[Record]:
        """The records plus every relation, every superseding record and every record an agent's
        relation is about (whether an agent wrote it decides if the review waits) status needs."""
        chosen = {r.id: r for r in records}
        for relation in self.relations():
            chosen[relation.id] = relation
            named = [relation.fields.get("source")]
            if relation.provenance.get("author_kind") == "agent":
                named.append(relation.fields.get("target"))
            for ref in named:
                if ref and ref not in chosen:
                    chosen.update({r.id: r for r in self._records("SELECT json FROM records WHERE id=?", (ref,))})
        return list(chosen.values())

    def search(self, text: str, limit: int | None = None) -> list[Record]:
        """Records matching every word of the text, best first (FTS5 bm25: title weighs most)."""
        words = re.findall(r"\w+", text)
        if not words:
            raise ComindError("search: give at least one word")
        query = " ".join('"' + w.replace('"', "") + '"' for w in words)
        sql = (
            "SELECT r.json FROM fts JOIN records r ON r.rowid = fts.rowid WHERE fts MATCH ? "
            "ORDER BY bm25(fts, 10.0, 4.0, 1.0)"
        )
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self._records(sql, (query,))

    def relevance(self, words: Iterable[str], limit: int = 500) -> dict[str, float]:
        """Record id -> FTS5 BM25 relevance (higher is better) of the records holding any of the
        words (title weighs most, as in `search`): the full-text part of a ranking."""
        query = " OR ".join('"' + w.replace('"', "") + '"' for w in dict.fromkeys(words) if w)
        if not query:
            return {}
        rows = self.db.execute(
            "SELECT r.id, bm25(fts, 10.0, 4.0, 1.0) AS score FROM fts JOIN records r ON r.rowid = fts.rowid "
            f"WHERE fts MATCH ? ORDER BY score LIMIT {int(limit)}",
            (query,),
        )
        return {str(record_id): -float(score) for record_id, score in rows}

    def by_path(self, path: str) -> list[Record]:
        return self._records(
            "SELECT DISTINCT r.json FROM anchors a JOIN records r ON r.id = a.record_id WHERE a.path = ?", (path,)
        )

    def anchored_near(
        self, paths: Iterable[str], names: Iterable[str] = (), hashes: Iterable[str] = ()
    ) -> list[Record]:
        """Records with an anchor on one of the paths (or a folder holding them; for a folder, also
        on anything in it), a symbol of one of the names, or one of the body/shape hashes: the
        candidates re-anchoring then confirms."""
        paths, names, hashes = list(paths), list(names), [h for h in hashes if h]
        folders = {p[: i + 1] for p in paths for i, c in enumerate(p) if c == "/"}
        clauses, params = [], []
        for folder in (p for p in paths if p.endswith("/")):  # what it holds: paths from `a/` up to `a0`
            clauses.append("(a.path >= ? AND a.path < ?)")
            params += [folder, folder[:-1] + "0"]
        for column, values in (
            ("path", paths + sorted(folders)),
            ("name", names),
            ("body_hash", hashes),
            ("shape_hash", hashes),
        ):
            if values:
                clauses.append(f"a.{column} IN ({','.join('?' * len(values))})")
                params += values
        if not clauses:
            return []
        return self._records(
            "SELECT json FROM records WHERE id IN (SELECT DISTINCT a.record_id FROM anchors a "
            f"WHERE {' OR '.join(clauses)}) ORDER BY created_at, id",
            params,
        )

    def anchor_paths(self) -> list[str]:
        """Every path an anchor names (files and folders), each once."""
        return [p for (p,) in self.db.execute("SELECT DISTINCT path FROM anchors WHERE path IS NOT NULL ORDER BY path")]

    def enforced(self, commit: str) -> set[str]:
        """Constraint ids whose compiled check passed at `commit` in a `comind check` run (T4)."""
        value = self._meta(f"enforced:{commit}") if commit else None
        return set(json.loads(value)) if value else set()

    def set_enforced(self, commit: str, record_ids: Iterable[str]) -> None:
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM meta WHERE key LIKE 'enforced:%'")  # only the latest run counts
            self._set_meta(f"enforced:{commit}", json.dumps(sorted(record_ids)))

    def cached_verdicts(self, keys: Iterable[str]) -> dict[str, str]:
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            out.update(
                self.db.execute(
                    f"SELECT key, value FROM verdicts WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
            )
        return out

    def store_verdicts(self, items: Mapping[str, str]) -> None:
        if self._deferred_verdicts is not None:  # inside reading(): a cache, written when the snapshot ends
            self._deferred_verdicts.update(items)
            return
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?)", items.items())

    def problems(self) -> list[tuple[str, str, str]]:
        return [tuple(row) for row in self.db.execute("SELECT source, key, reason FROM problems ORDER BY 1, 2")]

    def conflicts(self) -> list[tuple[str, list[str]]]:
        rows = self.db.execute(
            "SELECT record_id, group_concat(source || ':' || key, ' ') FROM objects GROUP BY record_id "
            "HAVING count(DISTINCT hash) > 1 ORDER BY record_id"
        )
        return [(rid, keys.split(" ")) for rid, keys in rows]

    def statuses(
        self, records: Iterable[Record], *, now: datetime | None = None, dormant_days: int = 60, **kwargs: Any
    ) -> dict[str, Status]:
        return derive(self.with_context(records), now=now, dormant_days=dormant_days, **kwargs)

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every derived table, sorted: what a full rebuild must reproduce exactly."""
        queries = {
            "records": "SELECT id, hash, kind, title, created_at, json FROM records",
            "anchors": "SELECT * FROM anchors",
            "relations": "SELECT * FROM relations",
            "fts": "SELECT r.id, f.title, f.trigger, f.body FROM fts f JOIN records r ON r.rowid = f.rowid",
            "problems": "SELECT * FROM problems",
        }
        return {name: sorted(self.db.execute(sql)) for name, sql in queries.items()}

    def __iter__(self) -> Iterator[Record]:
        return iter(self.all())
