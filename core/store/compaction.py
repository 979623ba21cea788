"""Compaction (see the package doc for the layout).

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
compaction without a base), or at `comind ledger audit --repair` (:meth:`Compaction.leftover_segments`):
a compaction lists no segments, so it never sees them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from comind.records import Record
from comind.store.layout import (
    KEEP_SNAPSHOTS,
    MAX_SEGMENTS,
    SEGMENTS,
    SNAPSHOTS,
    BrokenSnapshot,
    CorruptObject,
    Manifest,
    StoreError,
    _erased_digest,
    _gzip,
    _ulid,
    is_segment_name,
    records_key,
    snapshot_journal,
)
from comind.store.reading import Reading

if TYPE_CHECKING:
    from concurrent.futures import Future


class Segment(NamedTuple):
    name: str  # <ulid>, under SEGMENTS
    keys: list[str]  # in line order


class Compaction(Reading):
    """Compacting the inbox into segments named by a snapshot."""

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
        known = {name: Manifest(name, journal, [s.name for s in kept], [len(s.keys) for s in kept])}
        if base and not base.legacy:
            known[base.name] = base
        self._collect(name, listed=(manifests, legacy_names) if base else None, known=known)
        if floor is not None and pruned is not None and pruned > floor:
            objects = listing.result()[1] if listing is not None else self._list_journal(floor)[1]
            self._delete_many([records_key(e) for e in objects if e <= pruned])
        return True, name, None

    def leftover_segments(self) -> list[str]:
        """The keys of segments no snapshot names that are older than every snapshot a compaction
        keeps (the KEEP_SNAPSHOTS newest): left by a compaction that stopped before naming them (or
        before deleting those it merged away). Readers never read them, and compaction, which lists
        no segments, leaves them; `comind ledger audit` lists them. A younger one may be a running
        compaction's, about to be named even after another compaction finished meanwhile (the rule
        `_collect` keeps too).

        Segments are listed before snapshots, so one a compaction names meanwhile is seen named."""
        listed = self._list(SEGMENTS)
        manifests, _ = self._snapshot_names()
        if not manifests:
            return []
        named: set[str] = set()
        for name in manifests:
            try:
                named.update(self.read_manifest(name).segments)
            except (FileNotFoundError, CorruptObject):  # gone (its segments with it), or names nothing readable
                continue
        # a snapshot's name starts with its ULID; a segment's is one
        oldest_kept = manifests[-KEEP_SNAPSHOTS:][0][:26]
        segment = {key: key.removeprefix(SEGMENTS).split(".", 1)[0] for key in listed}
        return sorted(k for k, s in segment.items() if is_segment_name(s) and s not in named and s < oldest_kept)

    def delete_leftovers(self, keys: list[str]) -> None:
        """Delete what `leftover_segments` listed: objects no snapshot names, which nothing reads."""
        self._delete_many(keys)

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
        known: dict[str, Manifest] | None = None,
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

        def manifest(name: str) -> Manifest | None:
            if name not in known:
                try:
                    known[name] = self.read_manifest(name)
                except (FileNotFoundError, CorruptObject):  # an unreadable one names no segment we can keep
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
