"""Reading: the newest snapshot plus what it lacks (the journal after it, or the inbox), every record verified;
what does not verify is skipped and named, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

from comind.records import CorruptRecord, Record, load_record
from comind.store.journal import Listing
from comind.store.layout import (
    INBOX,
    JOURNAL,
    PARSE_ERRORS,
    SEGMENTS,
    SNAPSHOTS,
    BrokenSnapshot,
    CorruptObject,
    CorruptObjectWarning,
    Manifest,
    _gunzip,
    _parse_records,
    is_segment_name,
    journal_key,
    records_key,
)


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


class Reading(Listing):
    """Reading records: snapshots, segments, the journal and the inbox."""

    def snapshot(self) -> Manifest | None:
        """The newest snapshot (a first-layout one only when there is no other), listing again if it vanishes."""
        return self._snapshot_listed()[0]

    def _snapshot_listed(self) -> tuple[Manifest | None, list[str], list[str]]:
        """(the newest readable snapshot, and the listing it was found in: snapshots, first-layout snapshots).

        A manifest that does not parse is skipped (and kept in `skipped`): the next older one is used."""
        manifests: list[str] = []
        legacy: list[str] = []
        for _ in range(3):
            manifests, legacy = self._snapshot_names()
            try:
                for name in reversed(manifests):
                    try:
                        return self.read_manifest(name), manifests, legacy
                    except CorruptObject as exc:
                        self.skipped[exc.key] = exc.reason
            except FileNotFoundError:
                continue  # deleted by a racing compaction: list again
            if legacy:
                return Manifest(legacy[-1], None, [], []), manifests, legacy
            return None, manifests, legacy
        return None, manifests, legacy

    def read_manifest(self, name: str) -> Manifest:
        """A snapshot's manifest; FileNotFoundError when it is gone, CorruptObject when it is not one."""
        key = SNAPSHOTS + name
        raw = self._get(key)
        try:
            data = json.loads(_gunzip(raw))
            segments = data["segments"]
            snapshot = Manifest(
                name,
                data["journal"],
                [s["name"] for s in segments],
                [int(s["size"]) for s in segments],
                data.get("pruned"),
                data.get("erased"),
            )
        except PARSE_ERRORS as exc:
            raise CorruptObject(key, f"not a snapshot manifest ({type(exc).__name__}: {str(exc)[:100]})") from None
        texts = (snapshot.journal, snapshot.pruned, snapshot.erased)
        if not all(t is None or isinstance(t, str) for t in texts) or not all(map(is_segment_name, snapshot.segments)):
            raise CorruptObject(key, "not a snapshot manifest (a field of the wrong type)")
        return snapshot

    def segment_keys(self, name: str) -> list[str]:
        key = f"{SEGMENTS}{name}.keys.gz"
        try:
            raw = _gunzip(self._get(key))
            return raw.decode().split("\n") if raw else []
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        except PARSE_ERRORS as exc:
            raise CorruptObject(key, f"not a segment's keys ({type(exc).__name__})") from None

    def segment_lines(self, name: str) -> list[bytes]:
        key = f"{SEGMENTS}{name}.jsonl.gz"
        try:
            raw = _gunzip(self._get(key))
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        except PARSE_ERRORS as exc:
            raise CorruptObject(key, f"not a segment ({type(exc).__name__})") from None
        return raw.split(b"\n") if raw else []

    def get_raw(self, key: str) -> bytes:
        return self._get(INBOX + key)

    def read_object(self, key: str) -> Record:
        """One inbox record; CorruptRecord when it is not a valid record."""
        try:
            raw = self.get_raw(key)
        except FileNotFoundError:
            raise CorruptRecord("vanished while reading (erased?)") from None
        except OSError as exc:  # a directory, or unreadable: not a record
            raise CorruptRecord(f"unreadable ({exc.strerror or exc})") from None
        return load_record(raw, key)

    def _legacy_lines(self, name: str) -> dict[str, bytes]:
        """key -> raw line of a first-layout snapshot, without verifying the records (lines that are
        not even JSON objects with an id and a hash are dropped: no key could name them)."""
        lines: dict[str, bytes] = {}
        try:
            raw = _gunzip(self._get(SNAPSHOTS + name))
        except FileNotFoundError:
            raise BrokenSnapshot(name) from None
        except PARSE_ERRORS:
            return lines
        for line in raw.split(b"\n"):
            try:
                data = json.loads(line)
                lines[f"{data['id']}-{data['hash']}.json"] = line
            except PARSE_ERRORS:
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
        except PARSE_ERRORS as exc:
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
        use_snapshot = True
        for attempt in range(3):
            try:
                self._read_into(contents, use_snapshot=use_snapshot and attempt < 2)
                break
            except CorruptObject as exc:  # part of the snapshot is unreadable: read the inbox
                self.skipped[exc.key] = exc.reason
                use_snapshot = False
                contents.problems.clear()
            except BrokenSnapshot:  # a racing compaction deleted part of it: list again, then read the inbox
                contents.problems.clear()
        contents.problems += [Problem(key, reason) for key, reason in sorted(self.skipped.items())]
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

    def verify(self) -> list[Problem]:
        """Read every object, snapshots, segments and inbox alike, and list what is not a valid record.

        A normal read trusts a snapshot over the inbox copies it covers; an audit does not.
        """
        problems: list[Problem] = []
        manifests, legacy = self._snapshot_names()
        for name in legacy:
            with contextlib.suppress(BrokenSnapshot):
                problems += self.read_snapshot(name)[1]
        for name in manifests:
            try:
                self.read_manifest(name)
            except FileNotFoundError:
                continue
            except CorruptObject as exc:
                problems.append(Problem(exc.key, exc.reason))
        for key in self._list(SEGMENTS):
            try:
                if key.endswith(".keys.gz"):
                    self.segment_keys(key.removeprefix(SEGMENTS).split(".", 1)[0])
                elif key.endswith(".jsonl.gz"):
                    problems += self._parse_lines(self._get(key), key, lambda n: "")[1]
            except CorruptObject as exc:
                problems.append(Problem(exc.key, exc.reason))
            except (BrokenSnapshot, FileNotFoundError):
                continue
        keys = self.inbox_keys()
        for key, result in zip(keys, self._map(self._try_read, keys), strict=True):
            if isinstance(result, str):
                problems.append(Problem(INBOX + key, result))
        problems += [Problem(k, r) for k, r in sorted(self.skipped.items()) if k.startswith(JOURNAL)]
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
