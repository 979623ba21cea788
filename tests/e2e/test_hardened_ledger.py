"""No input breaks the ledger: bad dates are refused at the boundary, and bad objects in the store are
skipped, named by `ledger audit`, and rebuilt around by `ledger compact` (issue 24, items 1 and 4)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import CliResult

from comind.anchors import parse_anchor
from comind.records import canonical, content_hash, new_record
from comind.store import INBOX, SEGMENTS, SNAPSHOTS, Store

READERS = (("log",), ("status",), ("check",), ("why", "a.py"), ("search", "raw"))


@pytest.fixture
def initialised(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli(repo, "init").code == 0
    return repo


def inbox(repo: Path) -> list[str]:
    folder = repo / ".comind" / "ledger" / "_ledger" / "inbox"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def remember(cli, repo: Path, title: str, *extra: str) -> CliResult:  # type: ignore[no-untyped-def]
    return cli(repo, "remember", "gotcha", "--on", "a.py", "--title", title, "--symptom", "s", "--cause", "c", *extra)


def every_reader_works(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    for command in READERS:
        result = cli(repo, *command)
        assert result.code in (0, 1), (command, result.err)
        assert "internal error" not in result.err, (command, result.err)


@pytest.mark.parametrize("until", ["2024-02-30", "2024-13-45", "0000-01-01", "2024-00", "9999-13"])
def test_remember_refuses_a_date_that_is_not_one(initialised: Path, cli, until: str) -> None:  # type: ignore[no-untyped-def]
    result = remember(cli, initialised, "Dates are real", "--until", until)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1 and "until" in result.err and until in result.err
    assert inbox(initialised) == []  # nothing written


@pytest.mark.parametrize("until", ["2020", "2020-1", "2020-01-1", "20-01", "2020/01", "next month"])
def test_a_partial_or_odd_until_is_refused_naming_the_flag_and_its_formats(initialised: Path, cli, until: str) -> None:  # type: ignore[no-untyped-def]
    result = remember(cli, initialised, "Dates are real", "--until", until)
    assert (result.code, result.out) == (2, "") and inbox(initialised) == []
    assert (
        result.err == f"comind: --until {until!r}: expected a date YYYY-MM-DD, or YYYY-MM for the end of that month\n"
    )


def test_a_month_until_holds_to_its_last_day_and_says_so(  # type: ignore[no-untyped-def]
    initialised: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--until 2020-01` is the documented YYYY-MM: through 2020-01-31. Said when written, and a date
    already past is said too (the record is dormant from the start: kept as history, not hidden)."""
    monkeypatch.setenv("COMIND_NOW", "2026-03-01T00:00:00Z")
    ahead = remember(cli, initialised, "Until June", "--until", "2027-06")
    assert ahead.code == 0 and "“Until June” (dormant after 2027-06-30) in " in ahead.err and "warning" not in ahead.err
    past = remember(cli, initialised, "Until January", "--until", "2020-01")
    assert past.code == 0 and "“Until January” (dormant after 2020-01-31) in " in past.err
    assert past.err.endswith("comind: warning: --until 2020-01: 2020-01-31 has passed; the record is dormant already\n")
    states = {
        r["title"]: r["status"]
        for r in map(json.loads, cli(initialised, "log", "--json", "--history").out.splitlines())
    }
    assert states == {"Until June": "active", "Until January": "dormant"}


def test_the_last_month_of_the_calendar_is_a_date(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert remember(cli, initialised, "Until the end", "--until", "9999-12").code == 0
    every_reader_works(cli, initialised)


def _raw_record(until: str) -> bytes:
    """What main wrote for `--until 2024-02-30`: a record whose hash is right and whose date is not."""
    good = new_record(
        "gotcha",
        title="Written before validation",
        anchors=[parse_anchor("a.py")],
        fields={"symptom": "s", "cause": "c"},
        provenance={"actor": "p-1", "author_kind": "human", "source": "cli"},
    )
    data = {k: v for k, v in good.data.items() if k != "hash"} | {"until": until}
    data["hash"] = content_hash(data)
    return canonical(data)


def test_a_stored_record_with_an_impossible_date_is_skipped_and_audited(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert remember(cli, initialised, "A good one").code == 0
    raw = _raw_record("2024-02-30")
    data = json.loads(raw)
    key = f"{data['id']}-{data['hash']}.json"
    (initialised / ".comind" / "ledger" / INBOX / key).write_bytes(raw)
    every_reader_works(cli, initialised)
    assert "A good one" in cli(initialised, "log").out
    audit = cli(initialised, "ledger", "audit")
    assert audit.code == 1 and key in audit.out and "until" in audit.out
    assert cli(initialised, "ledger", "compact").code == 0
    every_reader_works(cli, initialised)


def test_import_refuses_an_impossible_date(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "dump.ndjson"
    dump.write_bytes(_raw_record("2024-13-45") + b"\n")
    result = cli(initialised, "ledger", "import", str(dump))
    assert result.code == 2 and "line 1" in result.err and "until" in result.err
    assert inbox(initialised) == []


# -- item 4: one bad object must not make the store unreadable ------------------------------------------


def _store_of(repo: Path, where: str, request: pytest.FixtureRequest) -> Store:
    if where == "s3":
        url = str(request.getfixturevalue("s3_url"))
        request.getfixturevalue("monkeypatch").setenv("COMIND_STORE", url)
        return Store(url)
    return Store(str(repo / ".comind" / "ledger"))


def _put(store: Store, key: str, data: bytes) -> None:
    import obstore as obs

    obs.put(store._store, key, data)


def _with_two_records_compacted(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    for title in ("First raw query rule", "Second raw query rule"):
        assert remember(cli, repo, title).code == 0
    assert cli(repo, "ledger", "compact").code == 0


def _survives(cli, repo: Path, bad: str) -> None:  # type: ignore[no-untyped-def]
    every_reader_works(cli, repo)
    log = cli(repo, "log")
    assert "First raw query rule" in log.out and "Second raw query rule" in log.out
    audit = cli(repo, "ledger", "audit")
    assert audit.code == 1 and bad in audit.out, audit.out + audit.err
    assert "internal error" not in audit.err
    compact = cli(repo, "ledger", "compact")
    assert compact.code == 0, compact.err
    assert "Second raw query rule" in cli(repo, "log").out


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize(
    "garbage",
    [b"not gzip at all", gzip.compress(b"{not json"), gzip.compress(b"[1, 2]"), gzip.compress(b'{"segments": 3}')],
    ids=["not-gzip", "not-json", "a-list", "wrong-shape"],
)
def test_a_bad_newest_manifest(  # type: ignore[no-untyped-def]
    initialised: Path, cli, where: str, garbage: bytes, request: pytest.FixtureRequest
) -> None:
    store = _store_of(initialised, where, request)
    _with_two_records_compacted(cli, initialised)
    name = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ.json.gz"  # sorts after every real snapshot: the newest
    _put(store, SNAPSHOTS + name, garbage)
    _survives(cli, initialised, SNAPSHOTS + name)


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_deeply_nested_object_in_the_inbox(  # type: ignore[no-untyped-def]
    initialised: Path, cli, where: str, request: pytest.FixtureRequest
) -> None:
    store = _store_of(initialised, where, request)
    _with_two_records_compacted(cli, initialised)
    key = "01234567-89ab-7def-8123-456789abcdef-" + "0" * 64 + ".json"
    _put(store, INBOX + key, b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    _survives(cli, initialised, INBOX + key)


def test_a_directory_in_the_inbox(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    _with_two_records_compacted(cli, initialised)
    name = "01234567-89ab-7def-8123-456789abcdef-" + "1" * 64 + ".json"
    (initialised / ".comind" / "ledger" / INBOX / name).mkdir()
    _survives(cli, initialised, INBOX + name)


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("garbage", [b"not gzip", gzip.compress(b"\xff\xfe not text")], ids=["not-gzip", "not-utf8"])
def test_a_corrupt_segment_key_file(  # type: ignore[no-untyped-def]
    initialised: Path, cli, where: str, garbage: bytes, request: pytest.FixtureRequest
) -> None:
    store = _store_of(initialised, where, request)
    _with_two_records_compacted(cli, initialised)
    segment = store.snapshot().segments[0]  # type: ignore[union-attr]
    import obstore as obs

    obs.delete(store._store, f"{SEGMENTS}{segment}.keys.gz")
    _put(store, f"{SEGMENTS}{segment}.keys.gz", garbage)
    _survives(cli, initialised, f"{SEGMENTS}{segment}.keys.gz")
