"""Segments, snapshot manifests and the journal: incremental compaction, journal-only reads, records
carried by the journal, first-layout stores, and readers that survive a snapshot losing a segment.
Real stores only."""

from __future__ import annotations

import gzip
from pathlib import Path

import obstore as obs
import pytest

from comind import store as store_module
from comind.anchors import parse_anchor
from comind.ledger import Ledger
from comind.records import new_record
from comind.store import INBOX, JOURNAL, RECORDS, SEGMENTS, SNAPSHOTS, Store, StoreError, snapshot_journal

PROV = {"actor": "p-1", "author_kind": "human", "source": "cli"}


def gotcha(title: str):  # type: ignore[no-untyped-def]
    return new_record(
        "gotcha",
        title=title,
        anchors=[parse_anchor("app/x.py::f")],
        fields={"symptom": "s", "cause": "c"},
        provenance=PROV,
    )


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "local":
        return Store(str(tmp_path / "ledger"))
    return Store(request.getfixturevalue("s3_url"))


def test_compaction_writes_only_new_records_and_keeps_segment_sizes_doubling(store: Store) -> None:
    store.put_many([gotcha(f"base {i}") for i in range(40)])
    first = store.compact()
    assert first is not None
    [base] = store.read_manifest(first).segments
    sizes = []
    for round_ in range(6):
        store.put_many([gotcha(f"round {round_} {i}") for i in range(3)])
        manifest = store.read_manifest(store.compact() or "")
        assert manifest.segments[0] == base  # the big segment is never rewritten for a few new records
        sizes.append(manifest.sizes)
        assert all(older > 2 * newer for older, newer in zip(manifest.sizes, manifest.sizes[1:], strict=False))
    assert sum(sizes[-1]) == 58
    assert len(store.read().records) == 58
    if store.journaled:
        assert snapshot_journal(store.snapshot_name() or "") == store.journal_tail()


def test_erasure_rewrites_only_what_holds_the_record_and_it_stays_out(store: Store, tmp_path: Path) -> None:
    keep = [gotcha(f"keep {i}") for i in range(10)]
    gone = gotcha("gone")
    store.put_many([*keep, gone])
    store.compact()
    store.erase([gone.id])
    assert set(store.read().records) == {r.key for r in keep}
    for key in store._list(SEGMENTS) + store._list(SNAPSHOTS):
        assert gone.id.encode() not in gzip.decompress(bytes(obs.get(store._store, key).bytes()))
    assert store.compact() is None  # the erasure left a current snapshot
    view = Ledger(tmp_path / "v.sqlite", {"s": store})
    view.sync()
    assert gone.id not in {r.id for r in view.all()}


def test_object_store_sync_reads_the_journal_not_the_inbox(s3_url: str, tmp_path: Path) -> None:
    store = Store(s3_url)
    assert store.journaled
    store.put_many([gotcha(f"g {i}") for i in range(5)])
    store.compact()
    view = Ledger(tmp_path / "v.sqlite", {"s": store})
    assert view.sync().added == 5
    later = gotcha("later")
    store.put(later)
    # An object put without a journal entry (a writer of the first layout): the journal does not
    # name it, so only a full listing (audit's rebuild, or a fresh view with no snapshot) finds it.
    stray = gotcha("stray")
    obs.put(store._store, INBOX + stray.key, stray.to_json())
    report = view.sync()
    assert (report.added, report.removed) == (1, 0)
    assert later.id in {r.id for r in view.all()} and stray.id not in {r.id for r in view.all()}
    assert view.sync().added == 0
    view.rebuild()
    assert {later.id, stray.id} <= {r.id for r in view.all()}


def test_a_writer_landing_behind_a_reader_appends_again(s3_url: str, tmp_path: Path) -> None:
    fast, slow = Store(s3_url), Store(s3_url)
    fast.put(gotcha("first"))
    fast.compact()  # readers follow the journal from the snapshot on
    slow._tail = ""  # it listed the journal before anything was in it, then stalled
    view = Ledger(tmp_path / "v.sqlite", {"s": fast})
    view.sync()
    for i in range(3):
        fast.put(gotcha(f"fast {i}"))
    view.sync()  # the reader is now past entry 000000000001
    late = gotcha("late")
    slow.put(late)
    entries = [k.removeprefix(JOURNAL) for k in store_list(slow, JOURNAL) if k.endswith(".keys")]
    assert sum(e.startswith("000000000001-") for e in entries) == 2  # its first try landed behind
    assert f"{JOURNAL}{slow._tail}.records.gz" in store_list(slow, JOURNAL)  # the retry carries the record too
    view.sync()
    assert late.id in {r.id for r in view.all()}
    fresh = Ledger(tmp_path / "fresh.sqlite", {"s": fast})
    fresh.rebuild()
    assert fresh.dump() == view.dump()


def store_list(store: Store, prefix: str) -> list[str]:
    return store._list(prefix)


def test_first_layout_store_is_read_and_migrated(store: Store, tmp_path: Path) -> None:
    old = [gotcha(f"old {i}") for i in range(6)]
    for r in old:  # what a writer of the first layout left: inbox objects and one JSONL snapshot
        obs.put(store._store, INBOX + r.key, r.to_json())
    lines = b"\n".join(r.to_json() for r in sorted(old[:4], key=lambda r: r.key))
    obs.put(store._store, f"{SNAPSHOTS}01H0000000000000000000000.jsonl.gz", gzip.compress(lines))
    contents = store.read()
    assert set(contents.records) == {r.key for r in old}
    assert contents.snapshot_keys == {r.key for r in old[:4]}
    view = Ledger(tmp_path / "v.sqlite", {"s": store})
    view.sync()
    assert view.count() == 6
    name = store.compact()
    assert name and name.endswith(".json.gz")
    assert not [k for k in store._list(SNAPSHOTS) if k.endswith(".jsonl.gz")]  # migrated, then removed
    newer = gotcha("newer")
    store.put(newer)
    assert set(Store(store.url).read().records) == {r.key for r in [*old, newer]}
    view.sync()
    assert view.count() == 7


def test_a_snapshot_that_lost_a_segment_costs_speed_not_records(store: Store, tmp_path: Path) -> None:
    records = [gotcha(f"r {i}") for i in range(12)]
    store.put_many(records[:9])
    store.compact()
    store.put_many(records[9:])
    name = store.compact()
    manifest = store.read_manifest(name or "")
    assert len(manifest.segments) == 2
    store._delete_segment(manifest.segments[-1])  # as a racing compaction's clean-up could
    assert set(store.read().records) == {r.key for r in records}
    view = Ledger(tmp_path / "v.sqlite", {"s": store})
    view.sync()
    assert view.count() == 12
    repaired = store.compact()
    assert repaired and repaired != name
    for segment in store.read_manifest(repaired).segments:
        assert store.segment_keys(segment)
    assert set(store.read().records) == {r.key for r in records}


@pytest.fixture(params=["s3", "memory"])
def object_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A journaled store: the real S3 server, and obstore's in-memory store."""
    if request.param == "memory":
        return Store(f"memory://{tmp_path.name}-journal")
    return Store(request.getfixturevalue("s3_url"))


def raw_objects(store: Store, prefix: str) -> dict[str, bytes]:
    """Every object under a prefix, gzip ones decompressed."""
    out = {}
    for key in store._list(prefix):
        data = bytes(obs.get(store._store, key).bytes())
        out[key] = gzip.decompress(data) if key.endswith(".gz") else data
    return out


def test_compaction_takes_new_records_from_the_journal_without_reading_the_inbox(object_store: Store) -> None:
    first = [gotcha(f"base {i}") for i in range(20)]
    object_store.put_many(first)
    object_store.compact()
    later = [gotcha(f"later {i}") for i in range(30)]
    object_store.put_many(later[:27])
    for r in later[27:]:
        object_store.put(r)
    compactor = Store(object_store.url)  # its own counters, and nothing cached
    name = compactor.compact()
    assert name is not None
    assert compactor.gets["inbox"] == 0
    assert compactor.gets["journal"] == 4  # one records object per write, not its entry as well
    snap, problems = compactor.read_snapshot(name)
    assert not problems and set(snap) == {r.key for r in [*first, *later]}
    assert snap[later[0].key] == later[0]
    reader = Store(object_store.url)
    later2 = gotcha("after the snapshot")
    reader.put(later2)
    assert set(reader.read().records) == {r.key for r in [*first, *later, later2]}
    assert reader.gets["inbox"] == 0


def test_view_sync_takes_new_records_from_the_journal(object_store: Store, tmp_path: Path) -> None:
    object_store.put_many([gotcha(f"g {i}") for i in range(5)])
    object_store.compact()
    view = Ledger(tmp_path / "v.sqlite", {"s": object_store})
    view.sync()
    object_store.gets.clear()
    new = [gotcha(f"new {i}") for i in range(6)]
    Store(object_store.url).put_many(new)
    assert view.sync().added == 6
    assert object_store.gets["inbox"] == 0
    assert {r.id for r in new} <= {r.id for r in view.all()}
    view.rebuild()  # audit's rebuild reads the inbox itself for what no segment holds
    assert view.count() == 11 and object_store.gets["inbox"] == 6


def test_a_sync_past_a_newer_snapshot_reads_each_record_once(object_store: Store, tmp_path: Path) -> None:
    # The sync lists the journal from the view's watermark, at once with the snapshots: a compaction
    # since then moved the snapshot's position past it, and what the listing holds before that
    # position comes from the snapshot instead.
    object_store.put_many([gotcha(f"g {i}") for i in range(3)])
    object_store.compact()
    view = Ledger(tmp_path / "v.sqlite", {"s": object_store})
    view.sync()
    writer = Store(object_store.url)
    writer.put_many([gotcha(f"before {i}") for i in range(4)])
    writer.compact()
    after = [gotcha(f"after {i}") for i in range(2)]
    writer.put_many(after)
    object_store.requests.clear()
    object_store.gets.clear()
    assert view.sync().added == 6
    assert sum(n for what, n in object_store.requests.items() if what.startswith("LIST")) == 3
    assert object_store.gets["journal"] == 1  # the one write after the snapshot, not the one it holds
    assert view.count() == 9 and {r.id for r in after} <= {r.id for r in view.all()}
    fresh = Ledger(tmp_path / "fresh.sqlite", {"s": object_store})
    fresh.rebuild()
    assert fresh.dump() == view.dump()


def test_keys_only_journal_entries_of_earlier_versions_are_still_read(object_store: Store) -> None:
    new = [gotcha(f"new {i}") for i in range(4)]
    object_store.put_many(new[:2])
    object_store.compact()
    old = [gotcha(f"old {i}") for i in range(5)]
    tail = object_store.journal_tail()
    for i, r in enumerate(old):  # what the previous version wrote: the object, then a keys-only entry
        obs.put(object_store._store, INBOX + r.key, r.to_json(), mode="create")
        entry = f"{int(tail[:12]) + 1 + i:012d}-{i:08x}"
        obs.put(object_store._store, f"{JOURNAL}{entry}.keys", r.key.encode(), mode="create")
    writer = Store(object_store.url)
    writer.put_many(new[2:])
    reader = Store(object_store.url)
    assert set(reader.read().records) == {r.key for r in [*new, *old]}
    assert reader.gets["inbox"] == 5
    compactor = Store(object_store.url)
    name = compactor.compact()
    assert compactor.gets["inbox"] == 5  # only the records no records object carried
    assert set(compactor.read_snapshot(name or "")[0]) == {r.key for r in [*new, *old]}


def test_a_records_object_that_does_not_verify_is_read_from_the_inbox(object_store: Store) -> None:
    object_store.put_many([gotcha("base")])
    object_store.compact()
    good, other = gotcha("good"), gotcha("other")
    object_store.put_many([good, other])
    [key] = [k for k, raw in raw_objects(object_store, JOURNAL).items() if k.endswith(RECORDS) and b"good" in raw]
    body = gzip.decompress(bytes(obs.get(object_store._store, key).bytes()))
    obs.put(object_store._store, key, gzip.compress(body.replace(b'"title":"good"', b'"title":"evil"')))
    compactor = Store(object_store.url)
    name = compactor.compact()
    assert compactor.gets["inbox"] == 1
    snap, problems = compactor.read_snapshot(name or "")
    assert not problems and snap[good.key] == good and snap[other.key] == other
    obs.put(object_store._store, key, b"not gzip")  # unreadable: the entry's keys, then the inbox
    reader = Store(object_store.url)
    contents = reader.read()
    assert not contents.problems and contents.records[good.key] == good
    assert reader.gets["inbox"] == 0  # the snapshot has them now


def test_a_big_write_is_journaled_in_entries_of_bounded_records(
    object_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    object_store.put(gotcha("base"))
    object_store.compact()
    size = len(gotcha("big 0").to_json())
    monkeypatch.setattr(store_module, "INLINE_MAX", 2 * size + 10)
    big = [gotcha(f"big {i}") for i in range(5)]
    assert object_store.put_many(big) == 5
    huge = new_record(
        "gotcha",
        title="huge",
        body="x" * (3 * size),
        anchors=[parse_anchor("app/x.py::f")],
        fields={"symptom": "s", "cause": "c"},
        provenance=PROV,
    )
    object_store.put(huge)  # one record past the limit: its entry lists its key only
    objects = {k: raw for k, raw in raw_objects(object_store, JOURNAL).items() if k.endswith(RECORDS)}
    assert sorted(raw.count(b"\n") + 1 for raw in objects.values()) == [1, 1, 2, 2]  # base's, then 2+2+1
    assert not any(b"huge" in raw for raw in objects.values())
    compactor = Store(object_store.url)
    compactor.compact()
    assert compactor.gets["inbox"] == 1
    assert len(compactor.read().records) == 7 and huge.key in compactor.read().records


def test_erasure_purges_the_records_from_the_journal(object_store: Store) -> None:
    keep = [gotcha(f"keep {i}") for i in range(4)]
    gone, gone_too = gotcha("gone"), gotcha("gone too")
    object_store.put_many([*keep[:2], gone])
    object_store.put(gone_too)  # in no snapshot yet
    object_store.put_many(keep[2:])
    assert any(gone.id.encode() in raw for raw in raw_objects(object_store, JOURNAL).values())
    object_store.erase([gone.id, gone_too.id])
    for key, raw in raw_objects(object_store, JOURNAL).items():
        assert b'"gone' not in raw, key
        if key.endswith(RECORDS):
            assert gone.id.encode() not in raw and gone_too.id.encode() not in raw, key
    assert [k for k in object_store._list(JOURNAL) if k.endswith(RECORDS)]  # keep[2:]'s is untouched
    compactor = Store(object_store.url)
    name = compactor.compact()  # the first: it lists the inbox, and takes what it can from the journal
    assert set(compactor.read_snapshot(name or "")[0]) == {r.key for r in keep}
    assert compactor.gets["inbox"] == 2  # keep[:2] shared a records object with `gone`
    object_store.put_many([gotcha("more")])
    object_store.compact()
    object_store.erase([keep[0].id])  # with snapshots: its compaction, then the journal
    for key, raw in [*raw_objects(object_store, JOURNAL).items(), *raw_objects(object_store, SEGMENTS).items()]:
        assert b'"keep 0"' not in raw, key  # its content; entries list keys only, like the tombstone
        assert key.endswith(".keys") or keep[0].id.encode() not in raw, key
    assert len(Store(object_store.url).read().records) == 4


def test_replaced_versions_do_not_come_back_from_the_journal(object_store: Store) -> None:
    object_store.put(gotcha("base"))
    object_store.compact()
    v1 = gotcha("version one")
    v2 = new_record(
        "gotcha",
        title="version two",
        anchors=[parse_anchor("app/x.py::f")],
        fields={"symptom": "s", "cause": "c"},
        provenance=PROV,
        record_id=v1.id,
    )
    object_store.put_derived([v1], replace=True)
    object_store.put_derived([v2], replace=True)
    name = Store(object_store.url).compact()
    assert {r.title for r in Store(object_store.url).read_snapshot(name or "")[0].values()} == {"base", "version two"}


def test_compaction_prunes_journal_records_behind_the_previous_snapshot(object_store: Store) -> None:
    positions = []
    for round_ in range(4):
        object_store.put_many([gotcha(f"round {round_} {i}") for i in range(3)])
        object_store.put(gotcha(f"round {round_} single"))
        positions.append(snapshot_journal(object_store.compact() or ""))
        left = sorted(
            k.removeprefix(JOURNAL).removesuffix(RECORDS) for k in object_store._list(JOURNAL) if k.endswith(RECORDS)
        )
        previous = positions[-2] if round_ else ""
        assert all(entry > (previous or "") for entry in left)  # up to the previous snapshot: pruned
        assert len(left) == 2  # this round's two writes
    assert object_store.read_manifest(object_store.snapshot_name() or "").pruned == positions[-2]
    assert len(Store(object_store.url).read().records) == 16
    assert Store(object_store.url).compact() is None


def lists(store: Store) -> dict[str, int]:
    return {k: n for k, n in store.requests.items() if k.startswith("LIST")}


def test_a_compaction_lists_three_times_however_long_the_journal(object_store: Store) -> None:
    """The journal is listed from the last pruned position, the snapshots once (their listing also serves the
    collection of old snapshots and segments), the tombstones once (after the snapshot is written, their
    digest in the manifest standing for the listing before); the inbox and the segments never."""
    rounds = []
    for n, writes in enumerate((2, 30)):
        for i in range(writes):  # one journal entry each
            object_store.put(gotcha(f"round {n} write {i}"))
        for _ in range(2):  # the first takes in the writes, the second prunes their records objects
            object_store.put(gotcha(f"round {n} more {_}"))
            compactor = Store(object_store.url)
            assert compactor.compact() is not None
        rounds.append(lists(compactor))
        assert compactor.requests["LIST journal"] == 1 and compactor.gets["inbox"] == 0
    expected = {"LIST snapshots": 1, "LIST journal": 1, "LIST erased": 1}
    assert rounds == [expected, expected]
    assert len(Store(object_store.url).read().records) == 2 + 30 + 4


def test_compaction_listings_do_not_grow_with_a_journal_of_many_pages(tmp_path: Path) -> None:
    store = Store(f"memory://{tmp_path.name}-pages")
    first = [gotcha(f"old {i}") for i in range(1500)]
    store.put_many(first)
    for i, r in enumerate(first):  # 1,500 keys-only entries of an earlier version: two pages of journal
        obs.put(store._store, f"{JOURNAL}{i + 2:012d}-{i:016x}.keys", r.key.encode())
    store.compact()
    for n in range(3):
        store.put(gotcha(f"new {n}"))
        compactor = Store(store.url)
        compactor.compact()
    assert lists(compactor) == {"LIST snapshots": 1, "LIST journal": 1, "LIST erased": 1}
    assert len(Store(store.url).read().records) == 1503


def test_a_tombstone_the_newest_snapshot_did_not_apply_is_applied(object_store: Store) -> None:
    """An erasure that died after its tombstone (or one of an earlier version): the next compaction finds
    it when it lists the tombstones, and starts again knowing it, also when nothing else is new."""
    gone, keep = gotcha("gone"), gotcha("keep")
    object_store.put_many([gone, keep])
    object_store.compact()
    obs.put(object_store._store, f"_ledger/erased/{gone.id}", b"")  # the tombstone only
    compactor = Store(object_store.url)
    name = compactor.compact()
    assert name is not None and compactor.requests["LIST erased"] >= 2
    assert set(compactor.read_snapshot(name)[0]) == {keep.key}
    object_store.put(gotcha("later"))  # the new snapshot knows it: one listing of tombstones again
    compactor = Store(object_store.url)
    compactor.compact()
    assert compactor.requests["LIST erased"] == 1


def test_an_erased_record_written_again_by_a_racing_writer_stays_out(object_store: Store) -> None:
    gone, keep = gotcha("gone"), gotcha("keep")
    object_store.put_many([gone, keep])
    object_store.compact()
    object_store.erase([gone.id])
    racing = Store(object_store.url)
    racing._erased = set()  # it checked the tombstones before the erasure
    with pytest.raises(StoreError, match="was erased"):
        racing.put(gone)  # it finds the tombstone after its put, and deletes the record again
    assert gone.key not in object_store.inbox_keys()
    obs.put(object_store._store, INBOX + gone.key, gone.to_json())  # one that died before it could
    later = gotcha("later")
    object_store.put(later)
    name = Store(object_store.url).compact()
    assert name is not None
    for key, data in raw_objects(object_store, SEGMENTS).items():
        assert gone.id.encode() not in data, key
    assert set(Store(object_store.url).read().records) == {keep.key, later.key}


def test_collection_without_listing_keeps_the_newest_snapshots_and_what_they_name(object_store: Store) -> None:
    for n in range(8):
        object_store.put_many([gotcha(f"round {n} {i}") for i in range(n + 1)])
        object_store.compact()
    manifests = object_store._snapshot_names()[0]
    assert len(manifests) == store_module.KEEP_SNAPSHOTS + 1
    named = {s for m in manifests for s in object_store.read_manifest(m).segments}
    listed = {k.removeprefix(SEGMENTS).split(".", 1)[0] for k in object_store._list(SEGMENTS)}
    assert listed == named  # the segments of deleted snapshots went with them
    assert len(object_store.read().records) == sum(range(1, 9))


def test_an_audit_reads_the_journal_records_objects_too(object_store: Store) -> None:
    kept, changed, dropped = gotcha("kept"), gotcha("changed"), gotcha("dropped")
    object_store.put_many([kept, changed, dropped])
    assert object_store.verify() == []
    [key] = [k for k in raw_objects(object_store, JOURNAL) if k.endswith(RECORDS)]
    body = gzip.decompress(bytes(obs.get(object_store._store, key).bytes()))
    lines = [line for line in body.split(b"\n") if line and not line.startswith(dropped.key.encode())]
    obs.put(object_store._store, key, gzip.compress(b"\n".join(lines).replace(b'"title":"changed"', b'"title":"evil"')))
    problems = {p.reason.split(":")[0] for p in Store(object_store.url).verify()}
    assert problems == {
        "lists other records than its journal entry (1 missing, 0 not in the entry)",
        f"its copy of {changed.key}",
    }
    obs.put(object_store._store, key, b"not gzip")
    [problem] = Store(object_store.url).verify()
    assert problem.key == key and problem.reason.startswith("not a records object")
    assert set(Store(object_store.url).read().records) == {kept.key, changed.key, dropped.key}  # nothing lost


def test_snapshots_made_within_one_millisecond_sort_in_the_order_made(tmp_path: Path) -> None:
    names = [store_module._ulid() for _ in range(2000)]  # many share a millisecond
    assert names == sorted(names) and len(set(names)) == len(names)
    store = Store(f"memory://{tmp_path.name}-fast")
    for n in range(5):  # a memory store compacts in well under a millisecond
        store.put(gotcha(f"record {n}"))
        assert store.compact() == store.snapshot_name()
