"""Listing and the journal: what is in the inbox, the snapshots and the tombstones, and on an object store the
journal that says which records each write added.

On an object store every write also appends one journal entry listing its keys, named
<seq>-<nonce> with seq one past the last entry the writer listed. A reader remembers the last
entry name it read and lists after it (S3, GCS and Azure list consistently after a put). A slow
writer could land behind a reader's position, so after its put a writer lists past its own entry:
if anything is there, a reader may already have moved on, and it appends again further on. An
entry with nothing after it once it is visible is seen by every reader, since entries are never
deleted. This needs no exclusive create (moto's create-only put is not atomic under load). A write
counts once its entry is in: a writer that dies between the record and the entry wrote nothing,
and writing the same record again journals it. Local stores (a folder, often committed to git and merged)
have no journal: a directory listing is cheap and their change token says when to take one.

Next to its entry a write leaves a records object: the records' keys and bytes, put before the entry
and alongside the records themselves (put_many journals one entry per INLINE_MAX bytes of records). It
is a cache of the inbox: readers that see it GET it instead of the entry and take the records from it
(verified like an inbox object; one that does not verify is read from the inbox), and read an entry
without one (pruned, erased, a record over INLINE_MAX, or an earlier version's write) as before, GETting
its records from the inbox. Deleting one is therefore always safe: compaction deletes those at or before
the previous snapshot's position (the new snapshot names how far it pruned), and erasure deletes every
one that names an erased record.
Entries themselves keep their old format, so earlier versions read a store written by this one.
"""

from __future__ import annotations

import os
from typing import Any

from comind.store.layout import (
    ERASED,
    INBOX,
    JOURNAL,
    RECORDS,
    SNAPSHOTS,
    StoreError,
    _entry,
    _next_entry,
    _parse_records,
    journal_key,
    records_key,
    snapshot_journal,
)
from comind.store.objects import Objects


class Listing(Objects):
    """Listing the store, and appending to and reading its journal."""

    def inbox_keys(self) -> list[str]:
        if self.local_root is not None:
            # One readdir: obstore's local listing stats every file (~20x slower at 100k records).
            try:
                return [name for name in os.listdir(self.local_root / INBOX) if name.endswith(".json")]
            except FileNotFoundError:
                return []
            except OSError as exc:
                raise StoreError(f"store {self.url}: cannot list {INBOX}: {exc.strerror}") from None
        return [k.removeprefix(INBOX) for k in self._list(INBOX) if k.endswith(".json")]

    def _snapshot_names(self) -> tuple[list[str], list[str]]:
        """(snapshots, first-layout snapshots), oldest first, without the prefix."""
        names = sorted(k.removeprefix(SNAPSHOTS) for k in self._list(SNAPSHOTS))
        return [n for n in names if n.endswith(".json.gz")], [n for n in names if n.endswith(".jsonl.gz")]

    def snapshot_name(self) -> str | None:
        manifests, legacy = self._snapshot_names()
        names = manifests or legacy
        return names[-1] if names else None

    newest_snapshot = snapshot_name

    def erased_ids(self) -> set[str]:
        return {k.removeprefix(ERASED) for k in self._list(ERASED)}

    def _put_records(self, entry: str, body: bytes) -> bool:
        """Put an entry's records object; False when that name is taken."""
        from obstore.exceptions import AlreadyExistsError

        try:
            self._put(records_key(entry), body)
        except AlreadyExistsError:
            return False
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot write journal records {entry}: {exc}") from None
        return True

    def _journal(self, keys: list[str], entry: str, body: bytes | None, *, placed: bool) -> None:
        """Append journal entry `entry` naming the keys, or one past every entry there is (see the module
        doc); `placed` says its records object (`body`, if any) is in."""
        from obstore.exceptions import AlreadyExistsError

        data = "\n".join(keys).encode()
        while True:
            last = entry  # when a name is taken: take the next number
            if placed:
                try:
                    self._put(journal_key(entry), data)
                except AlreadyExistsError:
                    if body is not None:
                        self._delete(records_key(entry))  # ours, but the entry is someone else's
                except OSError as exc:
                    raise StoreError(f"store {self.url}: cannot write journal entry {entry}: {exc}") from None
                else:
                    later = self._list_journal(entry)[0]
                    if not later:
                        self._tail = entry
                        return
                    last = max(later)  # a reader may be past our entry already: append again after these
            entry = _next_entry(last)
            placed = body is None or self._put_records(entry, body)

    def journal_tail(self, after: str | None = None) -> str:
        """The last journal entry. Without `after`, the listing starts at the newest snapshot's position."""
        if after is None:
            after = max((j for n in self._snapshot_names()[0] if (j := snapshot_journal(n))), default="")
        return max(self._list_journal(after)[0], default=after)

    def _list_journal(self, after: str | None = None) -> tuple[list[str], list[str]]:
        """(the entries, the entries that have a records object), each sorted: those after `after`, or all."""
        entries: list[str] = []
        with_records: list[str] = []
        for key in self._list(JOURNAL, offset=None if after is None else journal_key(after)):
            if key.endswith(".keys"):
                entries.append(_entry(key))
            elif key.endswith(RECORDS):
                with_records.append(key.removeprefix(JOURNAL).removesuffix(RECORDS))
        return sorted(entries), sorted(with_records)

    def journal_entries(self, after: str, listing: tuple[list[str], list[str]] | None = None) -> tuple[str, list[str]]:
        """(last entry read, the keys of every entry after `after`); `listing`: one of `listings`'s,
        made from `after` or before it (else the journal is listed here).

        The bytes their records objects carried are kept for the next `read_many` only, which then GETs
        from the inbox just the keys they lacked.
        """
        last, keys, self._inline = self._read_journal(after, listing)
        return last, keys

    def listings(
        self, journal_after: str | None = None
    ) -> tuple[set[str], str | None, tuple[list[str], list[str]] | None]:
        """(erased ids, the newest snapshot's name, the journal listed after `journal_after` — None when
        that is None or the store keeps no journal). On an object store the three LISTs are sent at once:
        a sync with nothing new waits for one round trip, not three."""
        jobs: list[Any] = [self.erased_ids, self.snapshot_name]
        if journal_after is not None and self.journaled:
            jobs.append(lambda: self._list_journal(journal_after))
        found = self._map(lambda job: job(), jobs, few=True)
        return found[0], found[1], found[2] if len(found) > 2 else None

    def _read_journal(
        self,
        after: str,
        listing: tuple[list[str], list[str]] | None = None,
    ) -> tuple[str, list[str], dict[str, bytes]]:
        """(last entry read, the keys of every entry after `after`, the records bytes they carried by key);
        `listing` is a `_list_journal` made from `after` or before it, else the journal is listed here."""
        entries, objects = listing or self._list_journal(after)
        entries = [e for e in entries if e > after]
        with_records = set(objects)
        keys: list[str] = []
        inline: dict[str, bytes] = {}
        for entry_keys, lines in self._map(lambda e: self._read_entry(e, e in with_records), entries):
            keys += entry_keys
            inline.update(lines)
        if entries and entries[-1] > (self._tail or ""):
            self._tail = entries[-1]
        return (entries[-1] if entries else after), keys, inline

    def _journal_records(self, wanted: int) -> dict[str, bytes]:
        """The records bytes of every journal records object that has its entry, when there are fewer such
        objects than `wanted` records to read (the inbox is listed when there is no snapshot to start from:
        this saves a GET per record, not per write)."""
        entries, with_records = self._list_journal()
        known = set(entries)
        objects = [e for e in with_records if e in known]
        inline: dict[str, bytes] = {}
        if len(objects) < wanted:
            for _, lines in self._map(lambda e: self._read_entry(e, True, keys_only=False), objects):
                inline.update(lines)
        return inline

    def _read_entry(
        self, entry: str, with_records: bool, *, keys_only: bool = True
    ) -> tuple[list[str], dict[str, bytes]]:
        """One journal entry's keys, and its records' bytes when its records object is there."""
        if with_records:
            try:
                return _parse_records(self._get(records_key(entry)))
            except (OSError, ValueError):  # deleted since the listing (pruned, erased) or unreadable
                pass
        if not keys_only:
            return [], {}
        raw = self._get(journal_key(entry))
        try:
            return [k for k in raw.decode().split("\n") if k], {}
        except UnicodeDecodeError:  # its records are still in the inbox, which a full sync lists
            self.skipped[journal_key(entry)] = "not a journal entry (not UTF-8)"
            return [], {}

    def _purge_records(self, doomed: Any) -> None:
        """Delete every journal records object holding a key `doomed(key)` is true of, and every one
        with no entry yet (its writer died, or is still writing: it then journals keys only)."""
        listed, objects = self._list_journal()
        entries = set(listed)
        known = [e for e in objects if e in entries]
        bodies = self._map(lambda e: self._get(journal_key(e)), known)  # an entry lists the same keys
        gone = [e for e in objects if e not in entries]
        gone += [e for e, body in zip(known, bodies, strict=True) if any(map(doomed, body.decode().split("\n")))]
        self._delete_many([records_key(e) for e in gone])
        self._inline = {}
