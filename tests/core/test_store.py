"""The store: create-only puts, snapshots, erasure, corrupt objects; local path and real S3 server."""

from __future__ import annotations

import gzip
import http.client
import http.server
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import ClassVar

import pytest

from comind.anchors import parse_anchor
from comind.records import new_record
from comind.store import ERASED, INBOX, JOURNAL, RECORDS, SEGMENTS, SNAPSHOTS, CorruptObjectWarning, Store, StoreError
from comind.store.layout import KEEP_SNAPSHOTS

PROV = {"actor": "p-1", "author_kind": "human", "source": "cli"}


def record(title: str = "Handlers never call raw_query"):  # type: ignore[no-untyped-def]
    return new_record(
        "constraint",
        title=title,
        anchors=[parse_anchor("app/db.py::raw_query")],
        fields={"rule": "no raw SQL in handlers", "severity": "must"},
        provenance=PROV,
    )


@pytest.fixture(params=["local", "s3", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "local":
        return Store(str(tmp_path / "ledger"))
    if request.param == "memory":
        return Store(f"memory://{tmp_path.name}")
    return Store(request.getfixturevalue("s3_url"))


def test_put_is_create_only_and_idempotent(store: Store) -> None:
    r = record()
    assert store.put(r) is True
    assert store.put(r) is False
    assert store.inbox_keys() == [r.key]
    assert store.read().records == {r.key: r}


def test_reader_takes_newest_snapshot_plus_missing_inbox_keys(store: Store) -> None:
    first = [record(f"rule {i}") for i in range(5)]
    store.put_many(first)
    name = store.compact()
    assert name and store.newest_snapshot() == name
    assert store.compact() is None  # nothing new: idempotent
    later = record("rule later")
    store.put(later)
    contents = store.read()
    assert contents.snapshot == name
    assert set(contents.records) == {r.key for r in [*first, later]}
    assert contents.snapshot_keys == {r.key for r in first}


def test_a_derived_cache_replacing_a_compacted_record_keeps_no_old_version(tmp_path: Path) -> None:
    # a newer harvester (or cleaning rules) replaces a record of a compacted harvest cache: the
    # snapshot, a cache over the inbox, must not bring the old version back as a conflict
    cache = Store(str(tmp_path / "harvest"))
    old = new_record(
        "constraint",
        title="Old words",
        anchors=[parse_anchor("app/db.py")],
        fields={"rule": "old words", "severity": "must"},
        provenance=PROV,
        record_id="0190a9d2-7c1e-7000-8000-000000000001",
    )
    assert cache.put_derived([old], replace=True) == (1, 0)  # (new, re-derived)
    assert cache.compact()
    new = new_record(
        "constraint",
        title="New words",
        anchors=[parse_anchor("app/db.py")],
        fields={"rule": "new words", "severity": "must"},
        provenance=PROV,
        record_id=old.id,
    )
    assert cache.put_derived([new], replace=True) == (0, 1)
    assert cache.put_derived([new], replace=True) == (0, 0)
    shared = Store(str(tmp_path / "shared"))  # not listed to tell (a LIST per publish): another version is new
    assert [shared.put_derived([r], replace=False) for r in (old, new, new)] == [(1, 0), (1, 0), (0, 0)]
    assert list(Store(str(tmp_path / "harvest")).read().records.values()) == [new]
    files = [p for p in (tmp_path / "harvest").rglob("*") if p.is_file()]
    assert not any(b"old words" in (gzip.decompress if p.suffix == ".gz" else bytes)(p.read_bytes()) for p in files)


def test_erasure_deletes_and_tombstones(store: Store) -> None:
    keep, gone = record("keep"), record("gone")
    store.put_many([keep, gone])
    store.compact()
    assert store.erase([gone.id]) == [gone.id]
    assert set(store.read().records) == {keep.key}
    assert gone.key not in store.inbox_keys()
    # the content is gone from every snapshot and segment, not just hidden
    for name in store._list(SNAPSHOTS) + store._list(SEGMENTS):
        raw = bytes(__import__("obstore").get(store._store, name).bytes())
        assert gone.id.encode() not in gzip.decompress(raw)
    with pytest.raises(StoreError, match="erased"):
        Store(store.url).put(gone)
    assert store.erased_ids() == {gone.id}


@pytest.mark.parametrize("derived", [False, True])
def test_a_record_written_while_it_is_erased_does_not_stay_behind_its_tombstone(store: Store, derived: bool) -> None:
    """A writer (a harvest, `remember`) listed the tombstones before an erasure and puts after the erasure
    listed what to delete: it finds the tombstone after its put and deletes what it wrote."""
    import obstore as obs

    keep, gone, other = record("keep"), record("gone"), record("other")
    store.put_many([keep, gone])
    writer = Store(store.url)
    writer._erased = set()  # it listed the tombstones before the erasure began
    assert Store(store.url).erase([gone.id]) == [gone.id]
    if derived:
        assert writer.put_derived([gone, other], replace=True) == (1, 0)
    else:
        with pytest.raises(StoreError, match=f"record {gone.id} was erased"):
            writer.put_many([other, gone])
    for key in store._list("_ledger/"):
        if key.startswith(ERASED) or (key.startswith(JOURNAL) and not key.endswith(RECORDS)):
            continue  # tombstones and journal entries name ids only
        data = bytes(obs.get(store._store, key).bytes())
        assert gone.id.encode() not in (gzip.decompress(data) if key.endswith(".gz") else data), key
    assert set(Store(store.url).read().records) == {keep.key, other.key}


def test_corrupt_objects_are_skipped_with_a_warning_naming_the_key(store: Store) -> None:
    import obstore as obs

    good = record()
    store.put(good)
    bad_json = f"{INBOX}{'1' * 8}-0000-7000-8000-{'0' * 12}-{'0' * 64}.json"
    obs.put(store._store, bad_json, b"{not json")
    tampered = dict(record("tampered").data, title="changed after hashing")
    tampered_key = f"{INBOX}{tampered['id']}-{tampered['hash']}.json"
    obs.put(store._store, tampered_key, __import__("json").dumps(tampered).encode())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        contents = store.read()
    assert set(contents.records) == {good.key}
    assert {p.key for p in contents.problems} == {bad_json, tampered_key}
    messages = [str(w.message) for w in caught if issubclass(w.category, CorruptObjectWarning)]
    assert any(bad_json in m and "not JSON" in m for m in messages)
    assert any(tampered_key in m and "hash" in m for m in messages)


def test_unsupported_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unsupported scheme 'ftp'"):
        Store("ftp://example.com/x").inbox_keys()


WRITER = """
import sys
from comind.anchors import parse_anchor
from comind.records import new_record
from comind.store import Store
store = Store(sys.argv[1])
prov = {"actor": "p-w" + sys.argv[2], "author_kind": "agent", "source": "cli"}
records = [new_record("gotcha", title=f"writer {sys.argv[2]} record {i}", anchors=[parse_anchor("a.py")],
                      fields={"symptom": "s", "cause": "c"}, provenance=prov) for i in range(200)]
if sys.argv[3] == "many":
    store.put_many(records)
else:
    for r in records:
        store.put(r)
"""
COMPACTOR = """
import sys, time
from comind.store import Store
store = Store(sys.argv[1])
for _ in range(5):
    store.compact(); time.sleep(0.05)
"""


@pytest.mark.parametrize("where", ["local", "s3"])
def test_eight_processes_writing_at_once_lose_nothing(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = str(tmp_path / "ledger") if where == "local" else request.getfixturevalue("s3_url")
    env = dict(os.environ)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, url, str(n), "many" if n % 2 else "one"], env=env)
        for n in range(8)
    ]
    compactor = subprocess.Popen([sys.executable, "-c", COMPACTOR, url], env=env)
    assert [w.wait(timeout=300) for w in writers] == [0] * 8
    assert compactor.wait(timeout=300) == 0
    contents = Store(url).read()
    assert not contents.problems
    assert len({r.id for r in contents.records.values()}) == 1600
    store = Store(url)
    if store.journaled:  # each write's records object lists exactly its own entry's keys
        journal = store._list(JOURNAL)
        entries = [k for k in journal if k.endswith(".keys")]
        assert len(entries) >= 8 + 4 * 200
        for key in journal:
            if key.endswith(RECORDS) and (entry := key.removesuffix(RECORDS) + ".keys") in entries:
                listed = [k for k in store._get(entry).decode().split("\n") if k]  # keys only, as before
                lines = gzip.decompress(store._get(key)).split(b"\n")  # <key> <record JSON> per line
                assert [line.split(b" ", 1)[0].decode() for line in lines if line] == listed
    store.compact()
    assert len(Store(url).read().records) == 1600


def test_tombstone_key_layout(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s"))
    r = record()
    store.put(r)
    store.erase([r.id])
    assert (tmp_path / "s" / ERASED / r.id).is_file()
    assert (tmp_path / "s" / INBOX).is_dir() and not any((tmp_path / "s" / INBOX).iterdir())


@pytest.mark.parametrize(
    "url",
    [
        "s3://AKIAIOSFODNN7EXAMPLE:{secret}@bucket/prefix",
        "https://account.blob.core.windows.net/container?sv=2022-11-02&sig={secret}",  # a signed (SAS) URL
        "az://container/prefix?sig={secret}",
        "s3://bucket/prefix?aws_secret_access_key={secret}",
        "gs://bucket/prefix#token={secret}",
    ],
)
def test_a_url_carrying_credentials_is_refused_without_echoing_them(url: str) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with pytest.raises(StoreError) as caught:
        Store(url.format(secret=secret)).inbox_keys()
    message = str(caught.value)
    assert "must not carry credentials" in message
    assert secret not in message and "AKIAIOSFODNN7EXAMPLE" not in message


@pytest.mark.parametrize(
    ("url", "names", "not_named"),
    [
        ("s3://AKIDEXAMPLE:s3cr3tv4lue@bucket/prefix", "AWS_ACCESS_KEY_ID", ("GOOGLE_", "AZURE_")),
        ("abfss://acct:s3cr3tv4lue@container/prefix", "AZURE_STORAGE_ACCOUNT_KEY", ("AWS_", "GOOGLE_")),
        # a scheme no cloud's (a MinIO server's address written as the store): every cloud's variables
        ("http://minioadmin:minioadmin@127.0.0.1:9000/bucket", "AWS_ACCESS_KEY_ID", ()),
    ],
)
def test_a_url_carrying_credentials_is_told_its_own_cloud_s_variables(
    url: str, names: str, not_named: tuple[str, ...]
) -> None:
    with pytest.raises(StoreError) as caught:
        Store(url).inbox_keys()
    message = str(caught.value)
    assert "must not carry credentials" in message and names in message, message
    assert "s3cr3tv4lue" not in message and "minioadmin" not in message
    assert not any(other in message for other in not_named), message


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "az://container/prefix"])
def test_a_url_obstore_cannot_open_is_a_one_line_error(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("AZURE_")]:
        monkeypatch.delenv(name)
    with pytest.raises(StoreError) as caught:
        Store(url).inbox_keys()
    assert "\n" not in str(caught.value) and "Debug source" not in str(caught.value)


class _Metadata(http.server.BaseHTTPRequestHandler):
    """A proxy in place of the cloud's instance metadata endpoint, refusing as one off the cloud does."""

    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("url", "advice"),
    [
        ("gs://bucket/ledger", "set GOOGLE_APPLICATION_CREDENTIALS (or GOOGLE_SERVICE_ACCOUNT) to a service account"),
        ("az://container/ledger", "set AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY"),
        ("s3://bucket/ledger", "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
    ],
)
def test_a_store_without_credentials_gets_advice_for_its_own_cloud(
    url: str, advice: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no keys, obstore asks the instance metadata endpoint (169.254.169.254 on all three
    clouds); a gs:// or az:// store was then told to set AWS_ACCESS_KEY_ID."""
    for name in [n for n in os.environ if n.startswith(("AWS_", "GOOGLE_", "AZURE_")) or "proxy" in n.lower()]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # no gcloud application-default credentials
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "acct")  # an account, and no key
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_port}")  # the metadata endpoint is http
    _Metadata.asked = []
    try:
        with pytest.raises(StoreError) as caught:
            Store(url).inbox_keys()
    finally:
        server.shutdown()
        server.server_close()
    message = str(caught.value)
    assert _Metadata.asked and "\n" not in message
    assert f"no credentials found: {advice}" in message, message
    assert ("AWS_" in message) == url.startswith("s3://"), message


def test_a_plain_http_endpoint_without_leave_says_how_to_allow_it(s3_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    with pytest.raises(StoreError, match=r"is plain HTTP; set AWS_ALLOW_HTTP=true to use it"):
        Store(s3_url).inbox_keys()


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A hop in front of the S3 server that refuses one kind of PUT with 403 (not retried): a write
    that fails half-way, as a network or a policy can make it."""

    upstream = ""
    refuse = ".keys"

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "PUT" and self.refuse in self.path:
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        conn = http.client.HTTPConnection(self.upstream.removeprefix("http://"))
        conn.request(self.command, self.path, body=body, headers=dict(self.headers))
        answer = conn.getresponse()
        data = answer.read()
        self._pause()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _pause(self) -> None:
        """Before answering what the server answered: nothing here."""

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("refused", [".records.gz", ".keys"])  # the entry's records object; the entry
def test_a_write_that_cannot_journal_takes_its_records_back(
    s3_url: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    _Refusing.upstream, _Refusing.refuse = s3_endpoint, refused
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(StoreError, match=r"cannot write .*journal.*; nothing was written"):
            Store(s3_url).put(record())
    finally:
        server.shutdown()
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    assert Store(s3_url).inbox_keys() == [] and Store(s3_url).unjournaled() == []


def test_the_segments_a_compaction_left_unnamed_are_listed_once_the_kept_snapshots_are_newer(
    s3_url: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction whose snapshot PUT fails (as one killed between its puts) leaves its segments
    named by nothing; compaction lists no segments, so they stayed for good. Listed by
    `leftover_segments` once every snapshot a compaction keeps is newer: a slow compaction that
    is still running names its segments after others finished (see the racing test below)."""
    Store(s3_url).put(record("first"))
    Store(s3_url).compact()
    Store(s3_url).put(record("second"))
    before = set(Store(s3_url)._list(SEGMENTS))
    _Refusing.upstream, _Refusing.refuse = s3_endpoint, SNAPSHOTS
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(StoreError, match=f"cannot write {SNAPSHOTS}"):
            Store(s3_url).compact()
    finally:
        server.shutdown()
        server.server_close()
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    left = sorted(set(Store(s3_url)._list(SEGMENTS)) - before)
    assert left and Store(s3_url).leftover_segments() == []  # newer than the newest snapshot: maybe running
    later = [f"later {i}" for i in range(KEEP_SNAPSHOTS)]
    for i, title in enumerate(later, 1):
        Store(s3_url).put(record(title))
        assert Store(s3_url).compact()
        assert set(left) <= set(Store(s3_url)._list(SEGMENTS))  # compaction never sees them
        assert Store(s3_url).leftover_segments() == (left if i == KEEP_SNAPSHOTS else [])
    store = Store(s3_url)
    store.delete_leftovers(left)
    after = Store(s3_url)
    assert not set(left) & set(after._list(SEGMENTS)) and after.leftover_segments() == []
    assert {r.title for r in after.read().records.values()} == {"first", "second", *later}
    assert not after.read().problems and after.verify() == []


class _Holding(_Refusing):
    """A hop in front of the S3 server that writes everything, but answers the first segment keys
    PUT only once `release` is set: a compaction paused between writing a segment and naming it."""

    refuse = "\0"  # (nothing: `_Refusing.refuse` is what another test last set)
    held = threading.Event()
    release = threading.Event()

    def _pause(self) -> None:
        if self.command == "PUT" and SEGMENTS in self.path and ".keys" in self.path and not self.held.is_set():
            self.held.set()
            self.release.wait(60)


def test_a_racing_compaction_s_segments_are_not_leftovers(
    s3_url: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers compact one store: the slow one has written its segment, the fast one finishes
    first. The slow one's segment is then older than the newest snapshot and named by none, but the
    slow one names it next; an audit deleting it then left the newest snapshot broken (readers fell
    back to reading every inbox object)."""
    Store(s3_url).put_many([record(f"rule {i}") for i in range(3)])
    assert Store(s3_url).compact()
    Store(s3_url).put(record("slow"))
    _Holding.upstream, _Holding.held, _Holding.release = s3_endpoint, threading.Event(), threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Holding)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    written: list[str | None] = []
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
        slow = threading.Thread(target=lambda: written.append(Store(s3_url).compact()))
        slow.start()
        assert _Holding.held.wait(60)
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)  # the slow one's client keeps the hop
        Store(s3_url).put(record("fast"))
        assert Store(s3_url).compact()
        audit = Store(s3_url)
        audit.delete_leftovers(audit.leftover_segments())
    finally:
        _Holding.release.set()
        slow.join(60)
        server.shutdown()
        server.server_close()
    after = Store(s3_url).read()
    assert written and after.snapshot == written[0]  # the newest snapshot is whole: read from it
    assert {r.title for r in after.records.values()} == {"rule 0", "rule 1", "rule 2", "slow", "fast"}


def test_audit_finds_and_journals_what_a_failed_writer_left(s3_url: str) -> None:
    writer = Store(s3_url)
    writer.put(record("first"))
    writer.compact()
    orphan = record("left by a writer that died before its journal entry")
    writer._put(INBOX + orphan.key, orphan.to_json())  # as a writer that failed after its inbox put
    reader = Store(s3_url)
    assert reader.unjournaled() == [orphan.key] and orphan.id not in {r.id for r in reader.read().records.values()}
    reader.journal_keys(reader.unjournaled())
    assert Store(s3_url).unjournaled() == [] and orphan.id in {r.id for r in Store(s3_url).read().records.values()}
