"""The record store (DESIGN §4): the user's own object store, through obstore.

    _ledger/inbox/<uuid>-<blake3>.json          one object per record, written once (create-only put)
    _ledger/journal/<seq>-<nonce>.keys          object stores only: which inbox keys each write added
    _ledger/journal/<seq>-<nonce>.records.gz    the same write's records, so compaction need not GET each one
    _ledger/segments/<ulid>.jsonl.gz + .keys.gz compaction output: immutable runs of records, and their keys
    _ledger/snapshots/<ulid>-j<entry>.json.gz   a snapshot: which segments hold every record up to journal <entry>
    _ledger/snapshots/<ulid>.jsonl.gz           a snapshot of the first layout (one file); read, no longer written
    _ledger/erased/<id>                         tombstones: an erased record never comes back

Writers never lock: keys are unique per content and puts are create-only, so the inbox is a
grow-only set and many writers at once lose nothing.

The parts: layout (object keys), objects (the requests), journal (listing and the journal), reading,
compaction and erasure; the Store here writes records and is all of them.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Collection, Iterable
from functools import partial
from pathlib import Path
from typing import NamedTuple

from comind.records import Record, recleaned
from comind.store.compaction import Segment
from comind.store.erasure import Erasure
from comind.store.layout import (
    ACTOR_SALT,
    ERASED,
    INBOX,
    JOURNAL,
    KEEP_SNAPSHOTS,
    RECORDS,
    SEGMENTS,
    SNAPSHOTS,
    BrokenSnapshot,
    CorruptObject,
    CorruptObjectWarning,
    Manifest,
    StoreError,
    _gzip,
    _next_entry,
    _ulid,
    records_key,
    snapshot_journal,
)
from comind.store.objects import _MEMORY, file_in_the_way, open_object_store
from comind.store.reading import Contents, Problem

INLINE_MAX = 4 << 20  # a write whose records are bigger than this (bytes) journals their keys only

__all__ = [
    "ERASED",
    "INBOX",
    "INLINE_MAX",
    "JOURNAL",
    "KEEP_SNAPSHOTS",
    "RECORDS",
    "SEGMENTS",
    "SNAPSHOTS",
    "_MEMORY",
    "BrokenSnapshot",
    "Contents",
    "CorruptObject",
    "CorruptObjectWarning",
    "Manifest",
    "Problem",
    "Put",
    "Segment",
    "Store",
    "StoreError",
    "_ulid",
    "open_object_store",
    "snapshot_journal",
]


class Put(NamedTuple):
    """What `Store.put_derived` wrote: records the store did not hold, and records the harvest cache
    held under another content hash (derived again, by a newer harvester)."""

    new: int = 0
    rederived: int = 0


def _tried(job: Callable[[], bool]) -> bool | StoreError:
    """A put's outcome, its failure included: the others of the write still finish, to be taken back."""
    try:
        return job()
    except StoreError as exc:
        return exc


class Store(Erasure):
    """One record store. All reads and writes of records go through here."""

    def put(self, record: Record) -> bool:
        """Write a record once. Returns False when this exact record is already stored."""
        return self.put_many([record]) == 1

    def put_many(self, records: Iterable[Record]) -> int:
        """Write many records concurrently, then journal them (one entry per INLINE_MAX bytes of records);
        returns how many were new. A record erased meanwhile is deleted again and refused."""
        items = list(records)
        if not items:
            return 0
        self._check_not_erased(items)
        new = self._write_all(items)
        if hit := self._erased_meanwhile(items, new):
            raise StoreError(f"record {min(hit)} was erased and cannot be written again")
        return len(new)

    def _write_all(self, items: list[Record]) -> list[str]:
        """`_write` in one journal entry per INLINE_MAX bytes of records; the keys that were new."""
        lines = [r.to_json() for r in items]
        if not self.journaled:
            return self._write(items, lines)
        new: list[str] = []
        start, size = 0, 0
        for end, line in enumerate(lines):
            if size + len(line) > INLINE_MAX and end > start:
                new += self._write(items[start:end], lines[start:end])
                start, size = end, 0
            size += len(line)
        return new + self._write(items[start:], lines[start:])

    def _erased_meanwhile(self, records: list[Record], new: list[str]) -> set[str]:
        """The ids of `records` erased while they were written, whose copies are then deleted again.

        An erasure puts its tombstones, then lists what to delete; a writer puts its records, then lists
        the tombstones. Whichever lists second sees the other's puts, so a record written while it is
        erased is deleted by one of them, and no lock is needed.
        """
        if not new and not self.journaled:
            return set()  # wrote nothing (a journaled write always adds an entry and its records object)
        self._erased = self.erased_ids()
        hit = {r.id for r in records} & self._erased
        for key in sorted(new):
            if key[:36] in hit:
                self._delete(INBOX + key)
        if hit and self.journaled:
            self._purge_records(lambda key: key[:36] in hit)
        return hit

    def _write(self, records: list[Record], lines: list[bytes] | None = None) -> list[str]:
        """Put the records (create-only, concurrently), then journal every one of them, also those that
        existed (their writer may have died before journaling them); returns the keys that were new.

        On an object store the entry's records object is put along with the records, before the entry.
        """
        lines = lines or [r.to_json() for r in records]
        jobs = [partial(self._put_object, r.key, line) for r, line in zip(records, lines, strict=True)]
        entry, body = "", None
        if self.journaled:
            entry = _next_entry(self._tail if self._tail is not None else self.journal_tail())
            if sum(map(len, lines)) <= INLINE_MAX:
                body = _gzip(b"\n".join(r.key.encode() + b" " + line for r, line in zip(records, lines, strict=True)))
                jobs.append(partial(self._put_records, entry, body))
        done = self._map(_tried, jobs, writes=True)
        # what this write put, to take back should it fail: a record seen by some readers only (an
        # unjournaled one, or part of an import) is worse than none
        new: list[str | None] = [r.key for r, d in zip(records, done, strict=False) if d is True]
        if body is not None and done[-1] is True:
            new.append(None)
        try:
            if failed := next((d for d in done if isinstance(d, StoreError)), None):
                raise failed
            if self.journaled:
                self._journal([r.key for r in records], entry, body, placed=body is None or done[-1] is True)
        except StoreError as exc:
            raise StoreError(f"{exc}; {self._take_back(new, entry)}") from None
        return [r.key for r, d in zip(records, done, strict=False) if d is True]

    def _take_back(self, keys: list[str | None], entry: str) -> str:
        """Delete what a failed write put (None: its records object); says what is left."""
        left = 0
        for key in keys:
            try:
                self._delete(INBOX + key if key is not None else records_key(entry))
            except (OSError, StoreError):
                left += key is not None
        if not left:
            return "nothing was written"
        return f"{left} record(s) stay unjournaled: `comind ledger audit --repair` journals them"

    def unjournaled(self) -> list[str]:
        """Inbox keys no journal entry names and the newest snapshot does not hold: a writer put them
        and failed before journaling them, so readers starting from a snapshot never see them."""
        if not self.journaled:
            return []
        covered = set(self._read_journal("")[1])
        try:
            base = self.snapshot()
            if base is not None:
                covered |= set(self.read_snapshot(base.name)[0])
        except (CorruptObject, BrokenSnapshot):
            return []  # no telling what the snapshot holds: `verify` reports it, readers read the inbox
        return sorted(k for k in self.inbox_keys() if k not in covered)

    def journal_keys(self, keys: list[str]) -> None:
        """Journal inbox keys a failed writer left unjournaled (`unjournaled`)."""
        if keys:
            self._journal(keys, _next_entry(self.journal_tail()), None, placed=True)

    def _put_object(self, key: str, data: bytes) -> bool:
        from obstore.exceptions import AlreadyExistsError

        try:
            self._put(INBOX + key, data)
        except AlreadyExistsError:
            return False  # same key = same id and same content hash: nothing to do
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot write {key}: {exc}") from None
        return True

    def put_derived(self, records: Iterable[Record], *, replace: bool) -> Put:
        """Write harvested records; returns how many were new and how many re-derived (`Put`).

        With `replace` (the harvest cache, which is derived and re-derivable) other versions of the
        same ids are deleted after the new one is written, so a newer harvester's output replaces
        the old. Without it (a shared store) versions are never deleted: a changed payload stays a
        conflict that `comind ledger audit` shows. A record someone erased is derived again by every
        full harvest: it is left out, not an error.
        """
        if self._erased is None:
            self._erased = self.erased_ids()
        records = [r for r in records if r.id not in self._erased]
        if not records:
            return Put()
        existing: dict[str, list[str]] = {}
        if replace:
            for key in self.inbox_keys():
                existing.setdefault(key[:36], []).append(key)
        new = self._write_all(records)
        if hit := self._erased_meanwhile(records, new):
            new = [key for key in new if key[:36] not in hit]
            records = [r for r in records if r.id not in hit]
        # an id the cache held under another content hash (a newer harvester's version) is re-derived; a
        # shared store is not listed for it (a LIST of every record at each publish): there it counts as new
        again = sum(1 for key in new if any(k != key for k in existing.get(key[:36], ())))
        if replace:
            self._drop_inbox({key for record in records for key in existing.get(record.id, ()) if key != record.key})
        return Put(len(new) - again, again)

    def drop_derived(self, keep: Callable[[Record], bool], keep_ids: Collection[str] = ()) -> int:
        """Delete from a derived cache (the harvest caches: re-derivable, never shared) the records
        of its inbox that `keep` refuses; returns how many went (and its snapshots: `_drop_inbox`).
        Records whose id is in `keep_ids` stay unread (a harvest keeps what it just wrote)."""
        inbox = {key for key in self.inbox_keys() if key[:36] not in keep_ids}
        if not inbox:
            return 0
        doomed = {key for key, record in self.read(warn=False).records.items() if key in inbox and not keep(record)}
        self._drop_inbox(doomed)
        return len(doomed)

    def actor_salt(self, *, create: bool) -> str | None:
        """The store's key for actor pseudonyms (`comind.actors`): random, made once by the first writer
        of a store holding no records, with a create-only put, so concurrent first writers all end up
        with the one that landed first. None for a store that holds records but no key (they were keyed
        by the repository name; keep it, or their actors would change) and, without `create`, for a
        store with neither. A writer puts the key before its first record, so a store whose records
        show up after a reader missed the key is read again for it."""
        from obstore.exceptions import AlreadyExistsError

        salt = self._read_salt()
        if salt is None and self._holds_records():
            salt = self._read_salt()  # put meanwhile, by the writer of those records
        elif salt is None and create:
            import secrets

            with contextlib.suppress(AlreadyExistsError):
                self._put(ACTOR_SALT, (secrets.token_hex(32) + "\n").encode())
            salt = self._read_salt()
        return salt

    def _read_salt(self) -> str | None:
        try:
            raw = self._get(ACTOR_SALT)
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # `--store app.py`: said as every other command says it
            blocked = file_in_the_way(Path(self.local_root or "."), ACTOR_SALT)  # (only a local store has folders)
            raise StoreError(f"store {self.url!r}: {blocked} is a file, not a folder") from None
        except IsADirectoryError:  # a folder made where the key is: said as the case above is
            where = Path(self.local_root or ".") / ACTOR_SALT
            what = "is a folder, not a file (it should hold the key of actor pseudonyms)"
            raise StoreError(f"store {self.url!r}: {where} {what}") from None
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot read {ACTOR_SALT}: {exc}") from None
        salt = raw.decode("ascii", "replace").strip()
        if not re.fullmatch(r"[0-9a-f]{32,128}", salt):
            raise StoreError(f"store {self.url}: {ACTOR_SALT} is not a key (hex digits); restore it from history")
        return salt

    def _holds_records(self) -> bool:
        """Any record object, found with one LIST request (a page of one key)."""
        if self.local_root is not None:
            try:
                with os.scandir(self.local_root / INBOX) as entries:  # (stops at the first: no whole listing)
                    return any(entry.name.endswith(".json") for entry in entries)
            except (FileNotFoundError, NotADirectoryError):
                return False
        import obstore as obs

        with self._reaching(f"list {INBOX}"):
            for batch in obs.list(self._store, prefix=INBOX.rstrip("/"), chunk_size=1):
                return len(batch) > 0
        return False

    def reclean_derived(self) -> int:
        """Clean the inbox records of a derived cache again by the current rules (`records.recleaned`):
        an older version's rules may have missed a secret. Returns how many were replaced (same id, a
        new hash, the old object deleted)."""

        def fresh(key: str) -> Record | None:
            try:
                return recleaned(self.get_raw(key))
            except FileNotFoundError:  # replaced by a concurrent run meanwhile
                return None

        found = [r for r in self._map(fresh, self.inbox_keys()) if r is not None]
        self.put_derived(found, replace=True)
        return len(found)

    def _drop_inbox(self, keys: set[str]) -> None:
        for key in sorted(keys):
            self._delete(INBOX + key)
        if keys and self.journaled:  # or a compaction would take them from the journal
            self._purge_records(keys.__contains__)
        if keys:  # a snapshot would keep the old versions: a derived cache's inbox holds all it keeps
            self._delete_many(self._list(SNAPSHOTS) + self._list(SEGMENTS))
