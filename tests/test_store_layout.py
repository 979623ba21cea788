"""Segments, snapshot manifests and the journal: incremental compaction, journal-only reads,
first-layout stores, and readers that survive a snapshot losing a segment. Real stores only."""

from __future__ import annotations

import gzip
from pathlib import Path

import obstore as obs
import pytest

from comind.anchors import parse_anchor
from comind.ledger import Ledger
from comind.records import new_record
from comind.store import INBOX, JOURNAL, SEGMENTS, SNAPSHOTS, Store, snapshot_journal

PROV = {"actor": "p-1", "author_kind": "human", "source": "cli"}


def gotcha(title: str):  # type: ignore[no-untyped-def]
    return new_record("gotcha", title=title, anchors=[parse_anchor("app/x.py::f")],
                      fields={"symptom": "s", "cause": "c"}, provenance=PROV)


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
    entries = [k.removeprefix(JOURNAL) for k in store_list(slow, JOURNAL)]
    assert sum(e.startswith("000000000001-") for e in entries) == 2  # its first try landed behind
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
