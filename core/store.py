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

Compaction writes only what is new: one segment with the records the newest snapshot lacks, then
a new snapshot naming its segments. Segments of similar size are merged (newest first, sizes at
least doubling down the list), so a record is rewritten O(log n) times and a compaction usually
touches only new records. Snapshots, segments and the view are caches over the inbox: when one is
missing (deleted by a racing compaction) readers list again, and in the end read the inbox itself.

A compaction lists three prefixes, each once, whatever the size of the store: the snapshots (the newest
is its base; the same listing says which old snapshots to delete, with the segments only they name), the
journal from where its records objects were last pruned (the entries to read, and the records objects to
prune now) and, after its snapshot is written, the tombstones. A manifest names (a digest of) the
tombstones its compaction applied, so the next one need not list them first; when the listing afterwards
finds one it did not apply, the compaction is withdrawn and made again knowing them. Segments no snapshot
ever named (a compaction that died before writing one) go at the next full collection (erasure, or a
compaction without a base).
"""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from comind.errors import ComindError
from comind.records import CorruptRecord, Record, load_record

if TYPE_CHECKING:
    from concurrent.futures import Future

INBOX = "_ledger/inbox/"
JOURNAL = "_ledger/journal/"
SEGMENTS = "_ledger/segments/"
SNAPSHOTS = "_ledger/snapshots/"
ERASED = "_ledger/erased/"
KEEP_SNAPSHOTS = 3  # older snapshots are deleted; a reader racing a deletion lists again
MAX_SEGMENTS = 12  # past this, the newest two are merged whatever their sizes
GZIP_LEVEL = 1  # 3x faster than 6 for ~30 % more bytes: compaction time matters more
RECORDS = ".records.gz"  # a journal entry's records object: <entry>.records.gz
INLINE_MAX = 4 << 20  # a write whose records are bigger than this (bytes) journals their keys only


class StoreError(ComindError):
    pass


class CorruptObjectWarning(UserWarning):
    pass


class Problem(NamedTuple):
    """A stored object that could not be read as a record."""

    key: str
    reason: str


class Segment(NamedTuple):
    name: str  # <ulid>, under SEGMENTS
    keys: list[str]  # in line order


class Snapshot(NamedTuple):
    """Which segments hold the compacted records; `journal` entries up to it are all included
    (None on a local store, which has no journal)."""

    name: str  # under SNAPSHOTS
    journal: str | None
    segments: list[str]
    sizes: list[int]
    pruned: str | None = None  # journal records objects up to this entry were deleted (None: not said)
    erased: str | None = None  # _erased_digest of the tombstones its compaction applied (None: not said)

    @property
    def legacy(self) -> bool:
        """A snapshot of the first layout: one gzip JSONL file, no journal position."""
        return self.name.endswith(".jsonl.gz")


class Contents:
    """What a reader sees: live records by key, plus the objects it had to skip."""

    def __init__(self, erased: set[str]) -> None:
        self.records: dict[str, Record] = {}
        self.problems: list[Problem] = []
        self.snapshot: str | None = None
        self.snapshot_keys: set[str] = set()
        self.erased = erased


class BrokenSnapshot(Exception):
    """A snapshot names a segment that is gone (a racing compaction or erasure deleted it)."""


_ulid_lock = _thread.allocate_lock()
_last_ulid = 0


def _ulid() -> str:
    """A ULID: 48-bit millisecond time then 80 random bits, Crockford base32, sorts by time.

    Monotonic within the process: one made in the same millisecond as the last (two compactions in a
    row on a fast store) is the last plus one, so the newer snapshot always sorts last."""
    import secrets

    global _last_ulid
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    with _ulid_lock:
        value = max((int(time.time() * 1000) << 80) | secrets.randbits(80), _last_ulid + 1)
        _last_ulid = value
    return "".join(alphabet[(value >> shift) & 31] for shift in range(125, -1, -5))


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def _gunzip(data: bytes) -> bytes:
    import gzip

    return gzip.decompress(data)


def journal_key(entry: str) -> str:
    """The object of a journal entry; for "" (before the first) the prefix, which sorts before all."""
    return f"{JOURNAL}{entry}.keys" if entry else JOURNAL


def _entry(key: str) -> str:
    return key.removeprefix(JOURNAL).removesuffix(".keys")


def records_key(entry: str) -> str:
    """The records object of a journal entry (see the module doc)."""
    return f"{JOURNAL}{entry}{RECORDS}"


def _next_entry(last: str) -> str:
    """A journal entry one past `last`; the 64-bit nonce keeps two writers from ever sharing a name (and so
    an entry from ever being paired with another write's records object)."""
    import secrets

    return f"{int(last[:12] or 0) + 1:012d}-{secrets.token_hex(8)}"


def _parse_records(raw: bytes) -> tuple[list[str], dict[str, bytes]]:
    """A records object's keys, in order, and bytes by key; ValueError when it is not one."""
    import zlib

    keys: list[str] = []
    lines: dict[str, bytes] = {}
    try:
        for line in _gunzip(raw).split(b"\n"):
            if line:
                key, data = line.split(b" ", 1)
                keys.append(key.decode())
                lines[keys[-1]] = data
    except (OSError, EOFError, zlib.error, ValueError) as exc:  # ValueError: no space; UnicodeDecodeError
        raise ValueError(f"not a records object ({exc})") from None
    return keys, lines


def _erased_digest(ids: set[str]) -> str:
    """Names a set of tombstones without naming any: how many, and a hash of them."""
    import hashlib

    return f"{len(ids)}:{hashlib.sha256(chr(10).join(sorted(ids)).encode()).hexdigest()}"


def snapshot_journal(name: str) -> str | None:
    """The journal entry a snapshot covers, from its name (<ulid>-j<entry>.json.gz); None without one
    ("" when it covers an empty journal)."""
    stem = name.removesuffix(".json.gz")
    return stem.split("-j", 1)[1] if "-j" in stem else None


def _one_line(exc: BaseException) -> str:
    """What went wrong with an object store request, in one line."""
    import re

    text = str(exc)
    if code := re.search(r"<Code>([^<]*)</Code>", text):  # S3's XML error body
        said = re.search(r"<Message>([^<]*)</Message>", text)
        return f"{code.group(1)}: {said.group(1)}" if said else code.group(1)
    first = text.split("\n", 1)[0].strip()
    if "169.254.169.254" in first:  # no keys in the environment, so the instance metadata was asked
        return (
            "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for "
            "a server other than AWS)"
        )
    return first if len(first) <= 300 else first[:299] + "…"


def open_object_store(url: str, base: Path | None = None) -> Any:
    """An obstore store for a local path, file://, memory://, s3://, gs:// or az:// URL.

    Cloud URLs take the standard environment (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL,
    AWS_ALLOW_HTTP, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_NAME, …).
    """
    from obstore.store import LocalStore, from_url

    scheme = url.split("://", 1)[0] if "://" in url else ""
    if path := _local_root(url, base):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {url!r}: cannot create {path}: {exc.strerror}") from None
        return LocalStore(path)
    if scheme == "memory":
        return _memory_store(url)
    if scheme not in ("s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "adl"):
        raise StoreError(f"store {url!r}: unsupported scheme {scheme!r} (use a path, s3://, gs://, az:// or memory://)")
    options: dict[str, Any] = {}
    if scheme.startswith("s3"):
        # obstore reads AWS_* itself; AWS_ALLOW_HTTP must reach the client options for http:// endpoints.
        if os.environ.get("AWS_ALLOW_HTTP", "").lower() in ("1", "true", "yes"):
            options["client_options"] = {"allow_http": True}
        if os.environ.get("AWS_ENDPOINT_URL") and "AWS_VIRTUAL_HOSTED_STYLE_REQUEST" not in os.environ:
            options["virtual_hosted_style_request"] = False
    try:
        return from_url(url, **options)
    except Exception as exc:  # obstore raises its own error types for bad URLs and config
        raise StoreError(f"store {url!r}: {exc}") from None


def _local_root(url: str, base: Path | None) -> Path | None:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in ("", "file"):
        return None
    path = Path(url[len("file://") :] if scheme else url)
    return path if path.is_absolute() else (base or Path.cwd()) / path


_MEMORY: dict[str, Any] = {}


def _memory_store(url: str) -> Any:
    """memory://NAME stores live for the process, so tests can open the same one twice."""
    from obstore.store import MemoryStore

    return _MEMORY.setdefault(url, MemoryStore())


class Store:
    """One record store. All reads and writes of records go through here."""

    def __init__(self, url: str, base: Path | None = None) -> None:
        self.url = url
        self._base = base
        self.local_root = _local_root(url, base)
        self._erased: set[str] | None = None  # tombstones, listed once per Store
        self._tail: str | None = None  # the last journal entry this Store saw or wrote
        self._inline: dict[str, bytes] = {}  # records bytes the last journal_entries carried, for read_many
        self.gets: Counter[str] = Counter()  # objects read, by area ("inbox", "journal", "segments", …)
        self.requests: Counter[str] = Counter()  # requests made, by verb and area: "LIST journal", "PUT inbox", …
        self._gets_lock = _thread.allocate_lock()  # threading's Lock, without importing threading (~1 ms)

    @cached_property
    def _store(self) -> Any:
        return open_object_store(self.url, self._base)

    @property
    def journaled(self) -> bool:
        """Object stores keep a journal; a local folder is listed instead (see the module doc)."""
        return self.local_root is None

    def change_token(self) -> str | None:
        """A cheap token that changes whenever a local store may have changed; None if unknown.

        Directory mtimes move when entries are added or removed. Like git's racy-index rule, an
        mtime within the last two seconds is not trusted, since a second write in the same clock
        tick would not move it again.
        """
        if self.local_root is None:
            return None
        parts = []
        for sub in (INBOX, SNAPSHOTS, ERASED):
            try:
                mtime = os.stat(self.local_root / sub).st_mtime_ns
            except FileNotFoundError:
                parts.append("-")
                continue
            if mtime > time.time_ns() - 2_000_000_000:
                return None
            parts.append(str(mtime))
        return f"{self.local_root}:{':'.join(parts)}"

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- writing ---------------------------------------------------------------------------

    def put(self, record: Record) -> bool:
        """Write a record once. Returns False when this exact record is already stored."""
        self._check_not_erased([record])
        return self._write([record]) == 1

    def put_many(self, records: Iterable[Record]) -> int:
        """Write many records concurrently, then journal them (one entry per INLINE_MAX bytes of records);
        returns how many were new."""
        items = list(records)
        if not items:
            return 0
        self._check_not_erased(items)
        lines = [r.to_json() for r in items]
        if not self.journaled:
            return self._write(items, lines)
        written, start, size = 0, 0, 0
        for end, line in enumerate(lines):
            if size + len(line) > INLINE_MAX and end > start:
                written += self._write(items[start:end], lines[start:end])
                start, size = end, 0
            size += len(line)
        return written + self._write(items[start:], lines[start:])

    def _write(self, records: list[Record], lines: list[bytes] | None = None) -> int:
        """Put the records (create-only, concurrently), then journal every one of them, also those that
        existed (their writer may have died before journaling them); returns how many were new.

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
        done = self._map(lambda job: job(), jobs, writes=True)
        if self.journaled:
            self._journal([r.key for r in records], entry, body, placed=body is None or done[-1])
        return sum(1 for d in done[: len(records)] if d)

    def _check_not_erased(self, records: list[Record]) -> None:
        if self._erased is None:
            self._erased = self.erased_ids()
        for record in records:
            if record.id in self._erased:
                raise StoreError(f"record {record.id} was erased and cannot be written again")

    def _put_object(self, key: str, data: bytes) -> bool:
        from obstore.exceptions import AlreadyExistsError

        try:
            self._put(INBOX + key, data)
        except AlreadyExistsError:
            return False  # same key = same id and same content hash: nothing to do
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot write {key}: {exc}") from None
        return True

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
        return [k for k in self._get(journal_key(entry)).decode().split("\n") if k], {}

    def put_derived(self, records: Iterable[Record], *, replace: bool) -> int:
        """Write harvested records; returns how many were new.

        With `replace` (the harvest cache, which is derived and re-derivable) other versions of the
        same ids are deleted after the new one is written, so a newer harvester's output replaces
        the old. Without it (a shared store) versions are never deleted: a changed payload stays a
        conflict that `comind ledger audit` shows. A record someone erased is derived again by every
        full harvest: it is left out, not an error.
        """
        if self._erased is None:
            self._erased = self.erased_ids()
        records = [r for r in records if r.id not in self._erased]
        existing: dict[str, list[str]] = {}
        if replace:
            for key in self.inbox_keys():
                existing.setdefault(key[:36], []).append(key)
        written = self.put_many(records)
        if replace:
            self._drop_inbox({key for record in records for key in existing.get(record.id, ()) if key != record.key})
        return written

    def drop_derived(self, keep: Callable[[Record], bool]) -> int:
        """Delete from a derived cache (the harvest caches: re-derivable, never shared) the records
        of its inbox that `keep` refuses; returns how many went. Compacted records are left alone."""
        inbox = set(self.inbox_keys())
        doomed = {key for key, record in self.read(warn=False).records.items() if key in inbox and not keep(record)}
        self._drop_inbox(doomed)
        return len(doomed)

    def _drop_inbox(self, keys: set[str]) -> None:
        for key in sorted(keys):
            self._delete(INBOX + key)
        if keys and self.journaled:  # or a compaction would take them from the journal
            self._purge_records(keys.__contains__)

    # -- compaction ------------------------------------------------------------------------

    def compact(self) -> str | None:
        """Write a snapshot covering every live record; None when the newest one is already current.

        Only the records the newest snapshot lacks are read (and verified), into one new segment;
        segments holding erased records are rewritten without them. A compaction that overlaps an
        erasure withdraws its output and starts again, so erased content never outlives the erasure.
        """
        return self._compact()

    def _compact(self, erased: set[str] | None = None) -> str | None:
        """compact(), knowing the tombstones when `erased` is given (else the newest snapshot names them)."""
        fresh = False
        for _ in range(3):
            try:
                done, name, erased = self._compact_once(fresh=fresh, erased=erased)
            except BrokenSnapshot:  # a racing compaction deleted a segment we build on: start from the inbox
                fresh, done, name, erased = True, False, None, None
            if done:
                return name
        raise StoreError(f"store {self.url}: compaction kept racing erasures; try again")

    def _compact_once(self, *, fresh: bool, erased: set[str] | None) -> tuple[bool, str | None, set[str] | None]:
        """One attempt: (done, the snapshot written, the tombstones to start from when not done).

        Requests, when the newest snapshot has a journal position: one LIST of the snapshots, one of the
        journal (from the position up to which records objects are already pruned, so the same listing
        says which to prune now) and one of the tombstones, after the snapshot is written; GETs of the
        manifests, segment keys and records objects it needs. The tombstones are not listed first when the
        newest snapshot's manifest names (a digest of) those its compaction applied: its segments hold
        none of them. When the LIST afterwards finds others, or that a new record has one, the attempt is
        withdrawn and made again knowing them.
        """
        base, manifests, legacy_names = (None, [], []) if fresh else self._snapshot_listed()
        assumed = base.erased if erased is None and base is not None and not base.legacy else None
        if erased is None:
            erased = set() if assumed is not None else self.erased_ids()
        segments: list[Segment] = []
        lines: dict[str, list[bytes]] = {}  # segment -> lines, for segments read or written here
        legacy: dict[str, bytes] = {}
        # Records objects up to the base's position go (readers start at the newest snapshot they list).
        floor = base.pruned if base and base.pruned is not None else base.journal if base else None
        from concurrent.futures import ThreadPoolExecutor

        listing: Future[tuple[list[str], list[str]]] | None = None  # the journal from `floor`, listed meanwhile
        with ThreadPoolExecutor(max_workers=1) as pool:
            if self.journaled and base and base.journal is not None and floor is not None:
                listing = pool.submit(self._list_journal, min(floor, base.journal))
            try:
                if base and base.legacy:
                    legacy = self._legacy_lines(base.name)
                elif base:
                    segments = [
                        Segment(n, k)
                        for n, k in zip(
                            base.segments, self._map(self.segment_keys, base.segments, few=True), strict=True
                        )
                    ]
            except BrokenSnapshot:
                base, segments, listing = None, [], None
                if assumed is not None:  # from the inbox: no segments known to be clean
                    assumed, erased = None, self.erased_ids()
            covered = set(legacy).union(*(s.keys for s in segments))
        journal: str | None = None
        inline: dict[str, bytes] = {}
        if self.journaled and base and base.journal is not None and listing is not None:
            journal, candidates, inline = self._read_journal(base.journal, listing.result())
        else:
            # before listing the inbox: its entries' keys are listed
            after = None if fresh else max((j for n in manifests if (j := snapshot_journal(n))), default="")
            journal = self.journal_tail(after) if self.journaled else None
            candidates = self.inbox_keys()
        missing = [k for k in dict.fromkeys(candidates) if k not in covered]
        if erased:  # both scans cost ~0.1 s per 100k keys: skip them in the usual case
            missing = [k for k in missing if k[:36] not in erased]
        if self.journaled and not (base and base.journal is not None) and missing:  # the inbox was listed
            inline = self._journal_records(len(missing))
        dirty = {s.name for s in segments if any(k[:36] in erased for k in s.keys)} if erased else set()
        if base and not base.legacy and not missing and not dirty and journal == base.journal:
            if assumed is not None and _erased_digest(now := self.erased_ids()) != assumed:
                return False, None, now  # tombstones the snapshot did not apply: again, knowing them
            return True, None, None
        written: list[str] = []

        def write(pairs: list[tuple[str, bytes]]) -> Segment:
            segment = self._write_segment(pairs)
            lines[segment.name] = [line for _, line in pairs]
            written.append(segment.name)
            return segment

        kept: list[Segment] = []
        if legacy:
            kept.append(write(sorted((k, v) for k, v in legacy.items() if k[:36] not in erased)))
        for segment in segments:
            if segment.name in dirty:
                old = zip(segment.keys, self.segment_lines(segment.name), strict=True)
                segment = write([(k, v) for k, v in old if k[:36] not in erased])
            if segment.keys:
                kept.append(segment)
        raw: dict[str, bytes] = {}
        new = [
            (k, raw.get(k) or r.to_json())
            for k, r in self._read_records(missing, inline, raw).items()
            if isinstance(r, Record) and r.id not in erased
        ]
        if new:
            kept.append(write(sorted(new)))
        # Merge while the older neighbour is not more than twice as big: sizes at least double down the list.
        while len(kept) >= 2 and (len(kept[-2].keys) <= 2 * len(kept[-1].keys) or len(kept) > MAX_SEGMENTS):
            a, b = kept[-2], kept[-1]
            pairs = [
                *zip(a.keys, lines.get(a.name) or self.segment_lines(a.name), strict=True),
                *zip(b.keys, lines.get(b.name) or self.segment_lines(b.name), strict=True),
            ]
            kept[-2:] = [write(pairs)]
        name = f"{_ulid()}" + (f"-j{journal}" if journal is not None else "") + ".json.gz"
        pruned = (base.journal if base and base.journal is not None else "") if journal is not None else None
        manifest = {
            "format": 2,
            "journal": journal,
            "pruned": pruned,
            "segments": [{"name": s.name, "size": len(s.keys)} for s in kept],
            "erased": assumed if assumed is not None else _erased_digest(erased),
        }
        self._put(SNAPSHOTS + name, _gzip(json.dumps(manifest).encode()))
        now = self.erased_ids()
        if (
            now != erased
            if assumed is None  # an erasure ran meanwhile and may not have seen what we wrote
            else _erased_digest(now) != assumed or any(k[:36] in now for k, _ in new)
        ):
            self._delete(SNAPSHOTS + name)
            for segment_name in written:
                self._delete_segment(segment_name)
            return False, None, now
        # segments written here and merged away at once: no snapshot ever names them
        self._delete_many(
            [
                f"{SEGMENTS}{s}{ext}"
                for s in sorted(set(written) - {s.name for s in kept})
                for ext in (".jsonl.gz", ".keys.gz")
            ]
        )
        known = {name: Snapshot(name, journal, [s.name for s in kept], [len(s.keys) for s in kept])}
        if base and not base.legacy:
            known[base.name] = base
        self._collect(name, listed=(manifests, legacy_names) if base else None, known=known)
        if floor is not None and pruned is not None and pruned > floor:
            objects = listing.result()[1] if listing is not None else self._list_journal(floor)[1]
            self._delete_many([records_key(e) for e in objects if e <= pruned])
        return True, name, None

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

    def _write_segment(self, pairs: list[tuple[str, bytes]]) -> Segment:
        name = _ulid()
        keys = [k for k, _ in pairs]
        self._put(f"{SEGMENTS}{name}.jsonl.gz", _gzip(b"\n".join(v for _, v in pairs)))
        self._put(f"{SEGMENTS}{name}.keys.gz", _gzip("\n".join(keys).encode()))
        return Segment(name, keys)

    def _delete_segment(self, name: str) -> None:
        self._delete(f"{SEGMENTS}{name}.jsonl.gz")
        self._delete(f"{SEGMENTS}{name}.keys.gz")

    def _collect(
        self,
        newest: str,
        *,
        strict: bool = False,
        listed: tuple[list[str], list[str]] | None = None,
        known: dict[str, Snapshot] | None = None,
    ) -> None:
        """Delete snapshots past the newest few, first-layout snapshots, and segments no kept snapshot names.

        Normally a segment younger than the oldest kept snapshot is left alone (a racing compaction may be
        about to name it); `strict` (erasure) deletes everything the newest snapshot does not name.

        With `listed` (the snapshots a compaction listed before writing `newest`) nothing is listed: the
        KEEP_SNAPSHOTS newest of them stay along with `newest`, the older ones go with the segments they
        name that no kept one names (`known` holds manifests already read). A segment no snapshot ever
        named (its compaction died before writing one) is left to the next full collection: erasure's, or
        one whose older snapshot cannot be read.
        """
        known = dict(known or {})

        def manifest(name: str) -> Snapshot | None:
            if name not in known:
                try:
                    known[name] = self.read_manifest(name)
                except FileNotFoundError:
                    return None
            return known[name]

        if listed is not None and not strict:
            manifests, legacy = listed
            keep = [*[n for n in manifests if n < newest][-KEEP_SNAPSHOTS:], newest]
            doomed = [n for n in manifests if n < keep[0]]
            kept = {s for n in keep if (m := manifest(n)) for s in m.segments}
            olds = self._map(manifest, doomed)
            if all(olds):
                for old in legacy:
                    self._delete(SNAPSHOTS + old)  # every record in it is in the inbox, and in our segments
                # their segments first: a snapshot whose segments are gone is never the newest one
                gone = sorted({s for m in olds if m for s in m.segments} - kept)
                self._delete_many([f"{SEGMENTS}{s}{ext}" for s in gone for ext in (".jsonl.gz", ".keys.gz")])
                self._delete_many([SNAPSHOTS + old for old in doomed])
                return
        manifests, legacy = self._snapshot_names()
        keep = [n for n in manifests if n <= newest][-(1 if strict else KEEP_SNAPSHOTS) :]
        for old in legacy:
            self._delete(SNAPSHOTS + old)  # every record in it is in the inbox, and in our segments
        for old in manifests:
            if old < keep[0]:
                self._delete(SNAPSHOTS + old)
        named: set[str] = set()
        for name in keep:
            if m := manifest(name):
                named.update(m.segments)
        for key in self._list(SEGMENTS):
            segment = key.removeprefix(SEGMENTS).split(".", 1)[0]
            if segment not in named and (strict or segment < keep[0]):
                self._delete(key)

    def erase(self, record_ids: Iterable[str]) -> list[str]:
        """Delete records for good: tombstone first, then the objects, then every compacted copy."""
        ids = set(record_ids)
        self._erased = None
        for record_id in sorted(ids):
            self._put(ERASED + record_id, b"", mode="overwrite")
        erased = []
        for key in self.inbox_keys():
            if key[:36] in ids:
                self._delete(INBOX + key)
                erased.append(key[:36])
        manifests, legacy = self._snapshot_names()
        if manifests or legacy:
            # Rewrites the segments that hold erased records; then nothing older may stay.
            name = self._compact(self.erased_ids()) or self.snapshot_name()
            if name:
                self._collect(name, strict=True)
        if self.journaled:  # the journal's copies too (after compacting: that could still use the others)
            self._purge_records(lambda key: key[:36] in ids)
        return sorted(set(erased))

    def _count(self, verb: str, key: str, n: int = 1) -> None:
        with self._gets_lock:
            self.requests[f"{verb} {key.removeprefix('_ledger/').split('/', 1)[0]}"] += n

    def _put(self, key: str, data: bytes, mode: Literal["create", "overwrite"] = "create") -> None:
        """Put an object (create-only unless `mode` says otherwise); AlreadyExistsError when it exists."""
        import obstore as obs

        self._count("PUT", key)
        with self._reaching(f"write {key}"):
            obs.put(self._store, key, data, mode=mode)

    def _delete(self, key: str) -> None:
        import obstore as obs

        self._count("DELETE", key)
        with contextlib.suppress(FileNotFoundError), self._reaching(f"delete {key}"):
            obs.delete(self._store, key)

    def _delete_many(self, keys: list[str]) -> None:
        """Delete objects in bulk (S3 deletes 1,000 per request)."""
        import obstore as obs

        if not keys:
            return
        self._count("DELETE", keys[0], (len(keys) + 999) // 1000)
        try:
            with self._reaching(f"delete {len(keys)} objects"):
                obs.delete(self._store, keys)
        except FileNotFoundError:  # some stores fail the batch when one is gone already
            for key in keys:
                self._delete(key)

    # -- reading ---------------------------------------------------------------------------

    def _list(self, prefix: str, offset: str | None = None) -> list[str]:
        import obstore as obs

        pages = 0
        try:
            with self._reaching(f"list {prefix}"):
                if offset is None:
                    batches = obs.list(self._store, prefix=prefix.rstrip("/"), chunk_size=1000)
                else:
                    batches = obs.list(self._store, prefix=prefix.rstrip("/"), offset=offset, chunk_size=1000)
                keys: list[str] = []
                for batch in batches:
                    keys += (m["path"] for m in batch)
                    pages += 1
                return keys
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot list {prefix}: {exc}") from None
        finally:
            self._count("LIST", prefix, max(pages, 1))  # a request per page of up to 1,000 keys

    @contextlib.contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """obstore's errors other than a missing or existing object (which callers handle) as one
        line naming the store: an S3 error's code and message, not its XML and a debug dump."""
        from obstore.exceptions import AlreadyExistsError, BaseError

        try:
            yield
        except AlreadyExistsError:
            raise
        except BaseError as exc:
            raise StoreError(f"store {self.url}: cannot {what}: {_one_line(exc)}") from None

    def _get(self, key: str) -> bytes:
        """An object's bytes; FileNotFoundError when it is not there (obstore raises the same)."""
        with self._gets_lock:
            self.gets[key.removeprefix("_ledger/").split("/", 1)[0]] += 1
        self._count("GET", key)
        if self.local_root is not None:
            return (self.local_root / key).read_bytes()  # 6x faster than obstore's local get per small file
        import obstore as obs

        with self._reaching(f"read {key}"):
            return bytes(obs.get(self._store, key).bytes())

    def inbox_keys(self) -> list[str]:
        if self.local_root is not None:
            # One readdir: obstore's local listing stats every file (~20x slower at 100k records).
            self._store  # noqa: B018 -- opening the store creates its folder (comind init relies on it)
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

    def snapshot(self) -> Snapshot | None:
        """The newest snapshot (a first-layout one only when there is no other), listing again if it vanishes."""
        return self._snapshot_listed()[0]

    def _snapshot_listed(self) -> tuple[Snapshot | None, list[str], list[str]]:
        """(the newest snapshot, and the listing it was found in: snapshots, first-layout snapshots)."""
        manifests: list[str] = []
        legacy: list[str] = []
        for _ in range(3):
            manifests, legacy = self._snapshot_names()
            names = manifests or legacy
            if not names:
                return None, manifests, legacy
            if names[-1].endswith(".jsonl.gz"):
                return Snapshot(names[-1], None, [], []), manifests, legacy
            try:
                return self.read_manifest(names[-1]), manifests, legacy
            except FileNotFoundError:
                continue  # deleted by a racing compaction: list again
        return None, manifests, legacy

    def read_manifest(self, name: str) -> Snapshot:
        data = json.loads(_gunzip(self._get(SNAPSHOTS + name)))
        return Snapshot(
            name,
            data["journal"],
            [s["name"] for s in data["segments"]],
            [int(s["size"]) for s in data["segments"]],
            data.get("pruned"),
            data.get("erased"),
        )

    def segment_keys(self, name: str) -> list[str]:
        try:
            raw = _gunzip(self._get(f"{SEGMENTS}{name}.keys.gz"))
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        return raw.decode().split("\n") if raw else []

    def segment_lines(self, name: str) -> list[bytes]:
        try:
            raw = _gunzip(self._get(f"{SEGMENTS}{name}.jsonl.gz"))
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        return raw.split(b"\n") if raw else []

    def erased_ids(self) -> set[str]:
        return {k.removeprefix(ERASED) for k in self._list(ERASED)}

    def get_raw(self, key: str) -> bytes:
        return self._get(INBOX + key)

    def read_object(self, key: str) -> Record:
        """One inbox record; CorruptRecord when it is not a valid record."""
        try:
            raw = self.get_raw(key)
        except FileNotFoundError:
            raise CorruptRecord("vanished while reading (erased?)") from None
        return load_record(raw, key)

    def _legacy_lines(self, name: str) -> dict[str, bytes]:
        """key -> raw line of a first-layout snapshot, without verifying the records (lines that are
        not even JSON objects with an id and a hash are dropped: no key could name them)."""
        lines: dict[str, bytes] = {}
        try:
            raw = _gunzip(self._get(SNAPSHOTS + name))
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        except (OSError, EOFError):
            return lines
        for line in raw.split(b"\n"):
            try:
                data = json.loads(line)
                lines[f"{data['id']}-{data['hash']}.json"] = line
            except (ValueError, TypeError, KeyError):
                continue
        return lines

    def read_snapshot(self, name: str) -> tuple[dict[str, Record], list[Problem]]:
        """Every record of a snapshot (either layout), verified; BrokenSnapshot when part of it is gone."""
        if not name.endswith(".jsonl.gz"):
            records: dict[str, Record] = {}
            problems: list[Problem] = []
            try:
                manifest = self.read_manifest(name)
            except FileNotFoundError:
                raise BrokenSnapshot(name) from None
            for segment in manifest.segments:
                recs, probs = self.read_segment(segment)
                records.update(recs)
                problems += probs
            return records, problems
        try:
            raw = self._get(SNAPSHOTS + name)
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        return self._parse_lines(raw, SNAPSHOTS + name, lambda n: n)

    def read_segment(self, name: str, wanted: set[str] | None = None) -> tuple[dict[str, Record], list[Problem]]:
        """The records of one segment (only the `wanted` keys, if given), verified."""
        keys = self.segment_keys(name)
        try:
            raw = self._get(f"{SEGMENTS}{name}.jsonl.gz")
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        return self._parse_lines(
            raw, f"{SEGMENTS}{name}.jsonl.gz", lambda n: keys[n - 1] if n <= len(keys) else "", wanted
        )

    @staticmethod
    def _parse_lines(
        raw: bytes, where: str, key_of: Any, wanted: set[str] | None = None
    ) -> tuple[dict[str, Record], list[Problem]]:
        records: dict[str, Record] = {}
        problems: list[Problem] = []
        try:
            lines = _gunzip(raw).split(b"\n")
        except (OSError, EOFError) as exc:
            return {}, [Problem(where, f"unreadable snapshot ({exc})")]
        for n, line in enumerate(lines, 1):
            if not line.strip() or (wanted is not None and key_of(n) not in wanted):
                continue
            try:
                record = load_record(line)
            except CorruptRecord as exc:
                problems.append(Problem(f"{where}#{n}", str(exc)))
            else:
                records[record.key] = record
        return records, problems

    def read(self, *, warn: bool = True) -> Contents:
        """Every live record: the newest snapshot plus what it lacks (the journal after it, or the inbox),
        minus tombstones."""
        contents = Contents(erased=self.erased_ids())
        for attempt in range(3):
            try:
                self._read_into(contents, use_snapshot=attempt < 2)
                break
            except BrokenSnapshot:  # a racing compaction deleted part of it: list again, then read the inbox
                contents.problems.clear()
        if warn:
            for problem in contents.problems:
                warnings.warn(f"skipped {problem.key}: {problem.reason}", CorruptObjectWarning, stacklevel=2)
        return contents

    def _read_into(self, contents: Contents, *, use_snapshot: bool) -> None:
        base = self.snapshot() if use_snapshot else None
        snap, problems = self.read_snapshot(base.name) if base else ({}, [])
        contents.snapshot = base.name if base else None
        contents.snapshot_keys = set(snap)
        contents.problems += problems
        inline: dict[str, bytes] = {}
        from_journal = self.journaled and base is not None and base.journal is not None
        if from_journal:
            assert base is not None and base.journal is not None
            keys, inline = self._read_journal(base.journal)[1:]
        else:
            keys = self.inbox_keys()
        missing = [k for k in dict.fromkeys(keys) if k not in snap]
        if self.journaled and not from_journal and missing:  # no snapshot position: the inbox was listed
            inline = self._journal_records(len(missing))
        for key, result in self._read_records(missing, inline).items():
            if isinstance(result, Record):
                snap[key] = result
            elif result is not None:
                contents.problems.append(Problem(INBOX + key, result))
        contents.records = {k: r for k, r in snap.items() if r.id not in contents.erased}

    def read_many(self, keys: list[str]) -> dict[str, Record | str | None]:
        """key -> the record, or why it is unreadable, or None when it vanished (erased meanwhile).

        Records the last `journal_entries` carried are taken from there, once; the rest are read from the inbox.
        """
        inline, self._inline = self._inline, {}
        return self._read_records(keys, inline)

    def _read_records(
        self, keys: list[str], inline: dict[str, bytes], lines: dict[str, bytes] | None = None
    ) -> dict[str, Record | str | None]:
        """Like read_many, taking the records whose bytes are in `inline` from there when they verify (one
        that does not is read from the inbox, which holds the record itself). Verified bytes on one line
        are also put in `lines`, if given: a segment can hold them as they are."""
        found: dict[str, Record | str | None] = {}
        for key in keys:
            if (raw := inline.get(key)) is not None:
                with contextlib.suppress(CorruptRecord):
                    found[key] = load_record(raw, key)
                    if lines is not None and b"\n" not in raw:
                        lines[key] = raw
        rest = [k for k in dict.fromkeys(keys) if k not in found]
        found.update(zip(rest, self._map(self._try_read, rest), strict=True))
        return {k: found[k] for k in keys}

    def _try_read(self, key: str) -> Record | str | None:
        try:
            return self.read_object(key)
        except CorruptRecord as exc:
            return None if "vanished" in str(exc) else str(exc)

    def _map(self, function: Any, items: list[Any], *, writes: bool = False, few: bool = False) -> list[Any]:
        # Threads hide network latency; reading a local folder they only add GIL contention. `few`: worth it
        # from two items (big objects).
        if len(items) < (2 if writes or few else 4) or (self.local_root is not None and not writes):
            return [function(item) for item in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=16) as pool:
            return list(pool.map(function, items))

    def verify(self) -> list[Problem]:
        """Read every object, snapshots, segments and inbox alike, and list what is not a valid record.

        A normal read trusts a snapshot over the inbox copies it covers; an audit does not.
        """
        problems: list[Problem] = []
        for name in self._snapshot_names()[1]:
            with contextlib.suppress(BrokenSnapshot):
                problems += self.read_snapshot(name)[1]
        for key in self._list(SEGMENTS):
            if key.endswith(".jsonl.gz"):
                with contextlib.suppress(BrokenSnapshot):
                    problems += self.read_segment(key.removeprefix(SEGMENTS).split(".", 1)[0])[1]
        keys = self.inbox_keys()
        for key, result in zip(keys, self._map(self._try_read, keys), strict=True):
            if isinstance(result, str):
                problems.append(Problem(INBOX + key, result))
        if self.journaled:
            entries, objects = self._list_journal()
            known = set(entries)
            for found in self._map(self._verify_journal_records, [e for e in objects if e in known], few=True):
                problems += found
        return problems

    def _verify_journal_records(self, entry: str) -> list[Problem]:
        """A journal records object's problems. Readers take an entry's keys from it and fall back to the
        inbox for records that do not verify, so a bad copy costs speed, but one that lists other keys
        than its entry hides records from every reader that trusts it."""
        key = records_key(entry)
        try:
            listed, lines = _parse_records(self._get(key))
            entry_keys = [k for k in self._get(journal_key(entry)).decode().split("\n") if k]
        except FileNotFoundError:  # pruned or erased since the listing
            return []
        except (OSError, ValueError) as exc:
            return [Problem(key, str(exc))]
        problems = []
        if set(listed) != set(entry_keys):
            missing, extra = len(set(entry_keys) - set(listed)), len(set(listed) - set(entry_keys))
            problems.append(
                Problem(
                    key, f"lists other records than its journal entry ({missing} missing, {extra} not in the entry)"
                )
            )
        for name, raw in lines.items():
            try:
                load_record(raw, name)
            except CorruptRecord as exc:
                problems.append(Problem(key, f"its copy of {name}: {exc}"))
        return problems

    def iter_records(self) -> Iterator[Record]:
        yield from self.read().records.values()
