"""The ledger view: incremental sync equals a full rebuild; search; conflicts; problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comind.anchors import parse_anchor
from comind.ledger import Ledger
from comind.records import content_hash, new_record
from comind.store import INBOX, Store

PROV = {"actor": "p-1", "author_kind": "human", "source": "cli"}
WORDS = ["redis", "cache", "permission", "session", "token", "retry", "timeout", "schema"]


def knowledge(title: str, body: str = "", created_at: str | None = None):  # type: ignore[no-untyped-def]
    return new_record(
        "gotcha",
        title=title,
        body=body,
        anchors=[parse_anchor("app/x.py::f")],
        fields={"symptom": "s", "cause": "c"},
        provenance=PROV,
        created_at=created_at,
    )


def relation(kind: str, target: str, source: str | None = None):  # type: ignore[no-untyped-def]
    fields = {"relation": kind, "target": target}
    if source:
        fields["source"] = source
    return new_record("relation", title="", anchors=[], fields=fields, provenance=PROV)


def test_sync_reads_only_new_keys(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s"))
    ledger = Ledger(tmp_path / "view.sqlite", {"store": store})
    store.put_many([knowledge(f"gotcha {i}") for i in range(3)])
    assert ledger.sync().added == 3
    assert ledger.sync().added == 0
    store.put(knowledge("one more"))
    report = ledger.sync()
    assert (report.added, report.removed) == (1, 0)
    assert ledger.count() == 4


def test_search_ranks_title_first_and_handles_fts_syntax(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s"))
    store.put_many(
        [
            knowledge("Redis cache for permissions"),
            knowledge("Session handling", body="mentions redis"),
            knowledge("Unrelated"),
        ]
    )
    ledger = Ledger(tmp_path / "v.sqlite", {"store": store})
    ledger.sync()
    assert [r.title for r in ledger.search("redis")] == ["Redis cache for permissions", "Session handling"]
    assert len(ledger.search('redis" * NEAR(')) == 0  # user text never reaches FTS as syntax
    assert len(ledger.search('"redis" *')) == 2
    assert ledger.search("nothing-like-this") == []


def test_get_by_prefix_or_suffix(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s"))
    a = knowledge("a")
    store.put(a)
    ledger = Ledger(tmp_path / "v.sqlite", {"store": store})
    ledger.sync()
    assert ledger.get(a.id) == a
    assert ledger.get(a.id[:13]) == a
    assert ledger.get(a.id[-8:]) == a
    from comind.errors import ComindError

    with pytest.raises(ComindError, match="no record"):
        ledger.get("ffffffff")
    with pytest.raises(ComindError, match="at least 6"):
        ledger.get("ab")


def test_conflicting_versions_of_one_id_keep_the_earliest(tmp_path: Path) -> None:
    import obstore as obs

    store = Store(str(tmp_path / "s"))
    original = knowledge("original", created_at="2026-01-01T00:00:00Z")
    store.put(original)
    replay = dict(original.data, title="changed payload", created_at="2026-02-01T00:00:00Z")
    replay["hash"] = content_hash(replay)
    obs.put(store._store, f"{INBOX}{replay['id']}-{replay['hash']}.json", json.dumps(replay).encode())
    ledger = Ledger(tmp_path / "v.sqlite", {"store": store})
    ledger.sync()
    assert ledger.get(original.id).title == "original"
    [(record_id, keys)] = ledger.conflicts()
    assert record_id == original.id and len(keys) == 2


def test_two_sources_and_a_deleted_cache(tmp_path: Path) -> None:
    shared, harvest = Store(str(tmp_path / "s")), Store(str(tmp_path / "h"))
    a, b = knowledge("shared"), knowledge("harvested")
    shared.put(a)
    harvest.put_many([a, b])  # a published harvested record may sit in both
    view = tmp_path / "v.sqlite"
    Ledger(view, {"store": shared, "harvest": harvest}).sync()
    view.unlink()
    ledger = Ledger(view, {"store": shared, "harvest": harvest})
    ledger.sync()
    assert {r.title for r in ledger.all()} == {"shared", "harvested"}
    assert ledger.conflicts() == []


def test_corrupt_cache_file_is_a_clear_error(tmp_path: Path) -> None:
    from comind.errors import ComindError

    view = tmp_path / "v.sqlite"
    view.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ComindError, match="only a cache"):
        Ledger(view, {})


# -- differential property: incremental view == full rebuild ---------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(WORDS), st.sampled_from(["store", "harvest"])),
        st.tuples(st.just("supersede"), st.integers(0, 50), st.integers(0, 50)),
        st.tuples(st.just("retract"), st.integers(0, 50)),
        st.tuples(st.just("erase"), st.integers(0, 50)),
        st.tuples(st.just("compact"), st.sampled_from(["store", "harvest"])),
        st.tuples(st.just("sync")),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_incremental_view_equals_full_rebuild(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[object, ...]]
) -> None:
    from comind.status import derive

    base = tmp_path_factory.mktemp("prop")
    sources = {"store": Store(f"memory://{base.name}-s"), "harvest": Store(f"memory://{base.name}-h")}
    incremental = Ledger(base / "inc.sqlite", sources)
    written: list[str] = []
    for op in operations:
        kind = op[0]
        if kind == "write":
            r = knowledge(f"{op[1]} gotcha {len(written)}")
            sources[str(op[2])].put(r)
            written.append(r.id)
        elif kind == "supersede" and written:
            new, old = written[int(op[1]) % len(written)], written[int(op[2]) % len(written)]
            if new != old:
                r = relation("supersedes", old, new)
                sources["store"].put(r)
                written.append(r.id)
        elif kind == "retract" and written:
            r = relation("retracts", written[int(op[1]) % len(written)])
            sources["store"].put(r)
            written.append(r.id)
        elif kind == "erase" and written:
            victim = written[int(op[1]) % len(written)]
            for store in sources.values():
                store.erase([victim])
        elif kind == "compact":
            sources[str(op[1])].compact()
        elif kind == "sync":
            incremental.sync(warn=False)
    incremental.sync(warn=False)
    full = Ledger(base / "full.sqlite", sources)
    full.sync(warn=False)
    assert incremental.dump() == full.dump()
    listed = Ledger(base / "listed.sqlite", sources)
    listed.rebuild()  # lists every inbox instead of following the journal
    assert incremental.dump() == listed.dump()
    when = __import__("datetime").datetime(2027, 1, 1, tzinfo=__import__("datetime").UTC)
    assert derive(incremental.all(), now=when) == derive(full.all(), now=when)


def test_a_cache_of_an_older_shape_is_rebuilt_not_an_error(tmp_path: Path) -> None:
    import sqlite3

    store = Store(str(tmp_path / "s"))
    store.put_many([knowledge(f"gotcha {i}") for i in range(3)])
    old = sqlite3.connect(tmp_path / "view.sqlite")  # what an earlier comind left: no segment column
    old.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('version', '2');"
        "CREATE TABLE snapshot_keys(source TEXT, key TEXT, PRIMARY KEY(source, key));"
        "CREATE VIRTUAL TABLE fts USING fts5(title, body);"
    )
    old.close()
    ledger = Ledger(tmp_path / "view.sqlite", {"store": store})
    assert ledger.sync().added == 3 and ledger.count() == 3
    ledger.close()
    assert Ledger(tmp_path / "view.sqlite", {"store": store}).count() == 3  # and kept when current


def test_an_erased_record_leaves_no_text_in_the_view_file(tmp_path: Path) -> None:
    # the view is a SQLite file: a deleted row's text stays in its free pages, its FTS index and its
    # write-ahead log unless they are zeroed, merged and truncated
    store = Store(str(tmp_path / "s"))
    ledger = Ledger(tmp_path / "view.sqlite", {"store": store})
    kept = [knowledge(f"gotcha {i}", body=" ".join(WORDS)) for i in range(50)]
    gone = knowledge("Quokkaspecimen title", body="the quokkaspecimen password lives here " * 20)
    store.put_many([*kept, gone])
    ledger.sync()
    assert [r.id for r in ledger.search("quokkaspecimen")] == [gone.id]
    store.erase([gone.id])
    assert ledger.sync().removed == 1 and not ledger.search("quokkaspecimen")
    files = [p for p in tmp_path.iterdir() if p.name.startswith("view.sqlite")]
    assert not [p.name for p in files if b"quokkaspecimen" in p.read_bytes().lower()]
    ledger.close()
    assert b"quokkaspecimen" not in (tmp_path / "view.sqlite").read_bytes().lower()
