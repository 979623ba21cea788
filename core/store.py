"""The record store (DESIGN §4): the user's own object store, through obstore.

    _ledger/inbox/<uuid>-<blake3>.json   one object per record, written once (create-only put)
    _ledger/snapshots/<ulid>.jsonl.gz     compaction output: every live record at that moment
    _ledger/erased/<id>                   tombstones: an erased record never comes back

Writers never lock: keys are unique per content and puts are create-only, so the inbox is a
grow-only set and many writers at once lose nothing. Readers take the newest snapshot, then list
the inbox and get only the keys the snapshot lacks. This is the only module that writes objects.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from comind.errors import ComindError
from comind.records import CorruptRecord, Record, load_record

INBOX = "_ledger/inbox/"
SNAPSHOTS = "_ledger/snapshots/"
ERASED = "_ledger/erased/"
KEEP_SNAPSHOTS = 3  # older snapshots are deleted; a reader racing a deletion retries once


class StoreError(ComindError):
    pass


class CorruptObjectWarning(UserWarning):
    pass


class Problem(NamedTuple):
    """A stored object that could not be read as a record."""

    key: str
    reason: str


class Contents:
    """What a reader sees: live records by key, plus the objects it had to skip."""

    def __init__(self, erased: set[str]) -> None:
        self.records: dict[str, Record] = {}
        self.problems: list[Problem] = []
        self.snapshot: str | None = None
        self.snapshot_keys: set[str] = set()
        self.erased = erased


def _ulid() -> str:
    """A ULID: 48-bit millisecond time then 80 random bits, Crockford base32, sorts by time."""
    import secrets

    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    return "".join(alphabet[(value >> shift) & 31] for shift in range(125, -1, -5))


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
    path = Path(url[len("file://"):] if scheme else url)
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

    @cached_property
    def _store(self) -> Any:
        return open_object_store(self.url, self._base)

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
        import obstore as obs
        from obstore.exceptions import AlreadyExistsError

        if self._erased is None:
            self._erased = self.erased_ids()
        if record.id in self._erased:
            raise StoreError(f"record {record.id} was erased and cannot be written again")
        try:
            obs.put(self._store, INBOX + record.key, record.to_json(), mode="create")
        except AlreadyExistsError:
            return False  # same key = same id and same content hash: nothing to do
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot write {record.key}: {exc}") from None
        return True

    def put_many(self, records: Iterable[Record]) -> int:
        """Write many records concurrently; returns how many were new."""
        items: list[Any] = list(records)
        return sum(self._map(self.put, items))

    def put_derived(self, records: Iterable[Record], *, replace: bool) -> int:
        """Write harvested records; returns how many were new.

        With `replace` (the harvest cache, which is derived and re-derivable) other versions of the
        same ids are deleted after the new one is written, so a newer harvester's output replaces
        the old. Without it (a shared store) versions are never deleted: a changed payload stays a
        conflict that `comind ledger audit` shows.
        """
        records = list(records)
        existing: dict[str, list[str]] = {}
        if replace:
            for key in self.inbox_keys():
                existing.setdefault(key[:36], []).append(key)
        written = self.put_many(records)
        if replace:
            for record in records:
                for key in existing.get(record.id, ()):
                    if key != record.key:
                        self._delete(INBOX + key)
        return written

    def compact(self) -> str | None:
        """Write a snapshot of every live record; None when the newest snapshot is already current.

        The newest snapshot's lines are carried over as they are (readers verify every line);
        only the inbox objects it lacks are read and verified here.
        """
        erased = self.erased_ids()
        name = self.newest_snapshot()
        lines = self._snapshot_lines(name) if name else {}
        missing = [k for k in self.inbox_keys() if k not in lines]
        stale = [k for k in lines if k[:36] in erased]
        if name and not missing and not stale:
            return None
        for key, result in zip(missing, self._map(self._try_read, missing), strict=True):
            if isinstance(result, Record) and result.id not in erased:
                lines[key] = result.to_json()
        for key in stale:
            del lines[key]
        return self._write_snapshot(lines)

    def _snapshot_lines(self, name: str) -> dict[str, bytes]:
        """key -> raw line of one snapshot, without verifying the records (lines that are not
        even JSON objects with an id and a hash are dropped: no key could name them)."""
        import gzip
        import json

        import obstore as obs

        lines: dict[str, bytes] = {}
        try:
            raw = gzip.decompress(bytes(obs.get(self._store, SNAPSHOTS + name).bytes()))
        except (OSError, EOFError):
            return lines
        for line in raw.split(b"\n"):
            try:
                data = json.loads(line)
                lines[f"{data['id']}-{data['hash']}.json"] = line
            except (ValueError, TypeError, KeyError):
                continue
        return lines

    @staticmethod
    def _map(function: Any, items: list[Any]) -> list[Any]:
        if len(items) < 4:
            return [function(item) for item in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=16) as pool:
            return list(pool.map(function, items))

    def _write_snapshot(self, records: Iterable[Record] | dict[str, bytes]) -> str:
        import gzip

        import obstore as obs

        if not isinstance(records, dict):
            records = {r.key: r.to_json() for r in records}
        name = f"{SNAPSHOTS}{_ulid()}.jsonl.gz"
        lines = b"\n".join(records[key] for key in sorted(records))
        obs.put(self._store, name, gzip.compress(lines, compresslevel=6, mtime=0), mode="create")
        for old in self._snapshot_names()[:-KEEP_SNAPSHOTS]:
            self._delete(old)
        return name.removeprefix(SNAPSHOTS)

    def erase(self, record_ids: Iterable[str]) -> list[str]:
        """Delete records for good: tombstone first, then the objects, then rewrite snapshots."""
        import obstore as obs

        ids = set(record_ids)
        self._erased = None
        for record_id in sorted(ids):
            obs.put(self._store, ERASED + record_id, b"", mode="overwrite")
        erased = []
        for key in self._list(INBOX):
            record_id = key.removeprefix(INBOX)[:36]
            if record_id in ids:
                self._delete(key)
                erased.append(record_id)
        snapshots = self._snapshot_names()
        if snapshots:
            # Snapshots may still hold the erased content: write a clean one and drop the rest.
            contents = self.read()
            self._write_snapshot(contents.records.values())
            for old in snapshots:
                self._delete(old)
        return sorted(set(erased))

    def _delete(self, key: str) -> None:
        import obstore as obs

        with contextlib.suppress(FileNotFoundError):
            obs.delete(self._store, key)

    # -- reading ---------------------------------------------------------------------------

    def _list(self, prefix: str) -> list[str]:
        import obstore as obs

        try:
            return [m["path"] for batch in obs.list(self._store, prefix=prefix.rstrip("/")) for m in batch]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot list {prefix}: {exc}") from None

    def inbox_keys(self) -> list[str]:
        return [k.removeprefix(INBOX) for k in self._list(INBOX) if k.endswith(".json")]

    def _snapshot_names(self) -> list[str]:
        return sorted(k for k in self._list(SNAPSHOTS) if k.endswith(".jsonl.gz"))

    def newest_snapshot(self) -> str | None:
        names = self._snapshot_names()
        return names[-1].removeprefix(SNAPSHOTS) if names else None

    def erased_ids(self) -> set[str]:
        return {k.removeprefix(ERASED) for k in self._list(ERASED)}

    def get_raw(self, key: str) -> bytes:
        import obstore as obs

        return bytes(obs.get(self._store, INBOX + key).bytes())

    def read_object(self, key: str) -> Record:
        """One inbox record; CorruptRecord when it is not a valid record."""
        try:
            raw = self.get_raw(key)
        except FileNotFoundError:
            raise CorruptRecord("vanished while reading (erased?)") from None
        return load_record(raw, key)

    def read_snapshot(self, name: str) -> tuple[dict[str, Record], list[Problem]]:
        import gzip

        import obstore as obs

        records: dict[str, Record] = {}
        problems: list[Problem] = []
        raw = bytes(obs.get(self._store, SNAPSHOTS + name).bytes())
        try:
            lines = gzip.decompress(raw).split(b"\n")
        except (OSError, EOFError) as exc:
            return {}, [Problem(SNAPSHOTS + name, f"unreadable snapshot ({exc})")]
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = load_record(line)
            except CorruptRecord as exc:
                problems.append(Problem(f"{SNAPSHOTS}{name}#{n}", str(exc)))
            else:
                records[record.key] = record
        return records, problems

    def read(self, *, warn: bool = True) -> Contents:
        """Every live record: the newest snapshot plus the inbox keys it lacks, minus tombstones."""
        contents = Contents(erased=self.erased_ids())
        for attempt in range(2):
            name = self.newest_snapshot()
            try:
                snap, problems = self.read_snapshot(name) if name else ({}, [])
                break
            except FileNotFoundError:  # deleted by a concurrent compaction: list again
                if attempt:
                    raise
        contents.snapshot = name
        contents.snapshot_keys = set(snap)
        contents.problems += problems
        missing = [k for k in self.inbox_keys() if k not in snap]
        for key, result in zip(missing, self._map(self._try_read, missing), strict=True):
            if isinstance(result, Record):
                snap[key] = result
            elif result is not None:
                contents.problems.append(Problem(INBOX + key, result))
        contents.records = {k: r for k, r in snap.items() if r.id not in contents.erased}
        if warn:
            for problem in contents.problems:
                warnings.warn(f"skipped {problem.key}: {problem.reason}", CorruptObjectWarning, stacklevel=2)
        return contents

    def read_many(self, keys: list[str]) -> dict[str, Record | str | None]:
        """key -> the record, or why it is unreadable, or None when it vanished (erased meanwhile)."""
        return dict(zip(keys, self._map(self._try_read, keys), strict=True))

    def _try_read(self, key: str) -> Record | str | None:
        try:
            return self.read_object(key)
        except CorruptRecord as exc:
            return None if "vanished" in str(exc) else str(exc)

    def verify(self) -> list[Problem]:
        """Read every object, snapshots and inbox alike, and list what is not a valid record.

        A normal read trusts a snapshot over the inbox copies it covers; an audit does not.
        """
        problems: list[Problem] = []
        for name in self._snapshot_names():
            problems += self.read_snapshot(name.removeprefix(SNAPSHOTS))[1]
        keys = self.inbox_keys()
        for key, result in zip(keys, self._map(self._try_read, keys), strict=True):
            if isinstance(result, str):
                problems.append(Problem(INBOX + key, result))
        return problems

    def iter_records(self) -> Iterator[Record]:
        yield from self.read().records.values()
