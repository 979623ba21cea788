"""The record model: kinds, validation at the boundary, canonical hashing, ids, cleaning."""

from __future__ import annotations

import contextlib
import json
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.anchors import parse_anchor
from comind.errors import ValidationError
from comind.records import (
    BODY_MAX,
    KIND_FIELDS,
    CorruptRecord,
    beyond_title,
    canonical,
    content_hash,
    harvested_id,
    load_record,
    new_record,
)

PROV = {"actor": "p-0123456789abcdef", "author_kind": "human", "source": "cli"}
ANCHOR = [parse_anchor("app/perm.py::Checker.check")]
FIELDS = {
    "intent": {"need": "revocation within a minute"},
    "decision": {"chosen": "server-side sessions", "alternatives": [{"option": "JWT", "why_not": "leaks roles"}]},
    "attempt": {"approach": "cache grants in Redis", "outcome": "reverted"},
    "constraint": {"rule": "handlers never call raw_query", "severity": "must"},
    "gotcha": {"symptom": "stale grants", "cause": "cache not invalidated on role change"},
    "question": {"question": "what happens on Redis failover?"},
    "suppression": {"constraint": "no-raw-query", "reason": "migration script", "owner": "p-1"},
}


def make(kind: str = "constraint", **overrides: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {
        "title": "A title",
        "anchors": ANCHOR,
        "fields": FIELDS.get(kind, {}),
        "provenance": PROV,
    }
    if kind == "attempt":
        args["evidence"] = [{"type": "commit", "ref": "a" * 40}]
    args.update(overrides)
    return new_record(kind, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_every_kind_builds_and_round_trips(kind: str) -> None:
    record = make(kind)
    assert record.kind == kind
    again = load_record(record.to_json(), record.key)
    assert again == record
    assert record.hash == content_hash(record.data)


def test_relation_kinds() -> None:
    target = make()
    for relation in ("supersedes", "retracts", "confirms", "disputes", "relates"):
        fields = {"relation": relation, "target": target.id}
        if relation in ("supersedes", "relates"):
            fields["source"] = make().id
        record = new_record("relation", title="", anchors=[], fields=fields, provenance=PROV)
        assert record.fields["relation"] == relation


@pytest.mark.parametrize(
    ("kind", "missing"), [(k, f.name) for k, spec in KIND_FIELDS.items() for f in spec if f.required]
)
def test_each_required_kind_field_is_named_when_missing(kind: str, missing: str) -> None:
    fields = dict(FIELDS.get(kind, {"relation": "confirms", "target": str(uuid.uuid4())}))
    fields.pop(missing, None)
    with pytest.raises(ValidationError) as err:
        make(kind, fields=fields)
    assert f"fields.{missing}: required" in err.value.problems


def test_one_error_per_bad_field_all_at_once() -> None:
    with pytest.raises(ValidationError) as err:
        new_record(
            "attempt",
            title="x" * 121,
            trigger="t" * 201,
            body="b" * (BODY_MAX + 1),
            anchors=[],
            fields={"approach": "a", "outcome": "exploded", "color": "red"},
            provenance={"actor": "ada@example.com", "author_kind": "robot", "source": "cli"},
        )
    problems = err.value.problems
    expected = [
        "title: 121 characters",
        "trigger: 201 characters",
        "body: 2049 bytes",
        "anchors: at least one",
        "evidence: an attempt needs",
        "fields.color: unknown",
        "fields.outcome: must be one of",
        "provenance.actor: must be a pseudonymous id",
        "provenance.author_kind",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in problems), (start, problems)
    assert len(problems) == len(expected)


def test_body_cap_counts_utf8_bytes() -> None:
    make(body="é" * (BODY_MAX // 2))
    with pytest.raises(ValidationError, match="body: 2050 bytes"):
        make(body="é" * (BODY_MAX // 2 + 1))


@pytest.mark.parametrize(
    ("secret", "name"),
    [
        ("AKIAIOSFODNN7EXAMPLE", "AWS access key"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret"),
        ("ghp_" + "a1B2" * 9, "GitHub token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "GitHub token"),
        ("glpat-abcdefghij0123456789", "GitLab token"),
        ("xoxb-1234567890-abcdefghij", "Slack token"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "private key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key"),
        ('password = "hunter2hunter2"', "password"),
    ],
)
@pytest.mark.parametrize("where", ["title", "body", "fields.rule"])
def test_secrets_are_redacted_keeping_the_record(secret: str, name: str, where: str) -> None:
    kwargs: dict[str, object] = {}
    if where == "fields.rule":
        kwargs["fields"] = {"rule": f"use {secret}", "severity": "must"}
    else:
        kwargs[where] = f"x {secret}" if where == "body" else f"x {secret.splitlines()[0]}"[:120]
    record = make(**kwargs)
    text = record.data["fields"]["rule"] if where == "fields.rule" else record.data[where]
    assert "[redacted:" in text and text.startswith(("use ", "x ")), text
    assert secret.splitlines()[0].split("= ")[-1].strip('"') not in text


@pytest.mark.parametrize(
    "text",
    [
        "password = <your password>",
        "password=${DB_PASSWORD}",
        "pwd: ****",
        "password = os.environ('X')",
        "the password policy",
    ],
)
def test_placeholders_are_not_secrets(text: str) -> None:
    assert make(body=text).body == text


def test_invisible_controls_are_stripped() -> None:
    sneaky = "Run\u202e tests\U000e0041\U000e0042 first\u2066"
    record = make(title=sneaky, body=sneaky)
    assert record.title == "Run tests first"
    assert record.body == "Run tests first"


def test_stored_invisible_controls_are_corrupt() -> None:
    record = make()
    data = dict(record.data, title="evil\u202e")
    data["hash"] = content_hash(data)
    with pytest.raises(CorruptRecord, match="invisible"):
        load_record(canonical(data))


def test_canonical_json_is_rfc8785() -> None:
    assert canonical({"b": 1, "a": [1.0, 2.5, 1e21], "é": "ü"}) == b'{"a":[1,2.5,1e+21],"b":1,"\xc3\xa9":"\xc3\xbc"}'


def test_hash_ignores_key_order_and_detects_tampering() -> None:
    record = make()
    shuffled = json.dumps(dict(reversed(list(record.data.items())))).encode()
    assert load_record(shuffled) == record
    tampered = dict(record.data, title="Another title")
    with pytest.raises(CorruptRecord, match="hash: does not match"):
        load_record(json.dumps(tampered).encode())


def test_object_name_must_match_id_and_hash() -> None:
    record = make()
    with pytest.raises(CorruptRecord, match="object name"):
        load_record(record.to_json(), f"{record.id}-{'0' * 64}.json")


def test_ids() -> None:
    a, b = make(), make()
    assert uuid.UUID(a.id).version == 7 and a.id != b.id
    key = "git-revert:acme/app:" + "b" * 40
    assert harvested_id(key) == harvested_id(key)
    assert uuid.UUID(harvested_id(key)).version == 5
    assert harvested_id(key) != harvested_id(key + "x")
    fixed = make(record_id=harvested_id(key), created_at="2024-01-02T03:04:05Z")
    assert fixed == make(record_id=harvested_id(key), created_at="2024-01-02T03:04:05Z")


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b'{"schema": 2}', b'{"schema": 1}', b"\xff\xfe"])
def test_corrupt_objects_say_what_is_wrong(raw: bytes) -> None:
    with pytest.raises(CorruptRecord):
        load_record(raw)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_load_record_only_ever_raises_corrupt_record(raw: bytes) -> None:
    with contextlib.suppress(CorruptRecord):
        load_record(raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "title",
                "body",
                "kind",
                "anchors",
                "fields",
                "provenance",
                "extra",
                "evidence",
                "created_at",
                "id",
                "trust",
                "until",
            ]
        ),
        json_values,
    )
)
def test_arbitrary_records_never_crash_validation(overrides: dict[str, object]) -> None:
    data = dict(make().data, **overrides)
    data.pop("hash", None)
    data["hash"] = "0" * 64
    with pytest.raises(CorruptRecord):
        load_record(json.dumps(data).encode())


@settings(max_examples=100, deadline=None)
@given(title=st.text(min_size=1, max_size=120).filter(str.strip), body=st.text(max_size=500))
def test_valid_text_round_trips(title: str, body: str) -> None:
    try:
        record = make(title=title, body=body)
    except ValidationError as exc:  # only for secrets or a title made of invisible controls
        assert all("contains" in p or p == "title: required" for p in exc.problems)
        return
    assert load_record(record.to_json(), record.key) == record


jcs_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), jcs_values, max_size=5))
def test_fast_canonical_json_equals_rfc8785(value: dict[str, object]) -> None:
    import rfc8785

    assert canonical(value) == rfc8785.dumps(value)


def test_fuzzed_records_that_validate_never_break_a_reader() -> None:
    """Whatever passes validation, status derivation and the record's accessors can read (issue 24)."""
    from datetime import UTC, datetime

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from comind.records import CorruptRecord, canonical, content_hash, load_record, new_record
    from comind.status import derive

    base = new_record(
        "gotcha",
        title="t",
        anchors=[{"raw": "a.py", "scope": "file", "path": "a.py", "role": "subject"}],
        fields={"symptom": "s", "cause": "c"},
        provenance={"actor": "p-1", "author_kind": "human", "source": "cli"},
    ).data
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.text(max_size=12))
    value = st.recursive(leaf, lambda v: st.lists(v, max_size=3) | st.dictionaries(st.text(max_size=6), v, max_size=3))
    dates = st.from_regex(r"\A\d{4}-\d{2}(-\d{2})?\Z") | st.text(max_size=12)
    keys = st.sampled_from(["until", "created_at", "trust", "anchors", "fields", "title", "attributes", "valid_from"])

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(keys, value | dates, max_size=3))
    def check(changes: dict[str, object]) -> None:
        data = {k: v for k, v in base.items() if k != "hash"} | changes
        try:
            data["hash"] = content_hash(data)
            record = load_record(canonical(data))
        except (CorruptRecord, ValueError, TypeError):
            return  # refused at the boundary: the reader never sees it
        derive([record], now=datetime(2026, 1, 1, tzinfo=UTC))
        assert record.anchors is not None and record.created_at and record.key

    check()


def _scan_every_text(data: dict[str, object]) -> list[str]:
    """`_scan_text` as it was: every text's field named, then checked."""
    import re

    from comind.records import _INVISIBLE, _strings
    from comind.sanitize import find_secret

    problems = []
    for where, text in _strings(dict(data), ""):
        if where == "hash":
            continue
        if secret := find_secret(text):
            problems.append(f"{where}: contains {secret}; remove the secret (records are shared and shown)")
        elif re.search(_INVISIBLE, text):
            problems.append(f"{where}: contains invisible Unicode control characters")
    return problems


def test_a_clean_record_names_no_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """The texts are checked first; only a record with something to report has its fields named."""
    from comind import records

    def named(value: object, where: str) -> object:
        raise AssertionError("fields named")

    monkeypatch.setattr(records, "_strings", named)
    lines = [[n, f"line {n}", False] for n in range(1, 200)]
    make("attempt", fields={"approach": "x", "outcome": "reverted", "fingerprint": {"files": [{"added": lines}]}})


JVM_PATH = "okhttp/src/jvmTest/java/okhttp3/internal/tls/CertificatePinnerChainValidationTest.java"


def test_paths_of_the_tree_are_kept_whole_where_text_would_be_redacted() -> None:
    # the path has the shape of a base64 key; as an anchor's or a fingerprint file's path it is none
    anchor = {"scope": "file", "path": JVM_PATH, "raw": JVM_PATH, "commit": "a" * 40}
    files = [{"path": JVM_PATH, "old_path": JVM_PATH, "added": [[1, f"see {JVM_PATH}", False]]}]
    fields = {"approach": "x", "outcome": "reverted", "fingerprint": {"files": files}}
    record = make("attempt", anchors=[anchor], fields=fields, body=f"see {JVM_PATH}")
    assert record.anchors[0]["path"] == record.anchors[0]["raw"] == JVM_PATH
    kept = record.fields["fingerprint"]["files"][0]
    assert kept["path"] == kept["old_path"] == JVM_PATH
    assert "[redacted:" in kept["added"][0][1] and "[redacted:" in record.body  # text is text
    assert load_record(canonical(record.data)) == record  # and it validates as stored
    secret = {"scope": "file", "path": "AKIAIOSFODNN7EXAMPLE/key.txt"}  # a key with a prefix: a key anywhere
    assert "[redacted:" in make("attempt", anchors=[secret], fields=fields).anchors[0]["path"]


def test_a_secret_stored_deep_is_named_by_its_field() -> None:
    record = make()
    data = dict(
        record.data, fields={**record.fields, "deep": {"files": [{"added": [[1, "AKIAIOSFODNN7EXAMPLF", False]]}]}}
    )
    data["hash"] = content_hash(data)
    with pytest.raises(CorruptRecord, match=r"fields\.deep\.files\[0\]\.added\[0\]\[1\]: contains aws"):
        load_record(canonical(data))


@settings(max_examples=150, deadline=None)
@given(
    json_values,
    st.sampled_from(["plain", "AKIAIOSFODNN7EXAMPLF", "x\u202ey", "token = 'hunter2hunter2'", "\u00e9t\u00e9"]),
)
def test_texts_are_scanned_as_every_field_named_would_be(value: object, text: str) -> None:
    from comind.records import _scan_text

    data = {"title": text, "fields": {"v": value, "w": [text, (text,), {"k": text}]}, "hash": "f" * 64}
    assert _scan_text(data) == _scan_every_text(data)


def test_a_stored_record_is_cleaned_again_only_when_it_was_written_whole() -> None:
    from comind.records import canonical, content_hash, recleaned

    record = make(body="connect with DB_PASSWORD=[redacted:password] only")
    assert recleaned(record.to_json()) is None  # nothing to clean
    old = json.loads(record.to_json())
    old["body"] = "connect with DB_PASSWORD=s3cretvalue42 only"  # what an older version's rules kept
    old["hash"] = content_hash(old)
    fresh = recleaned(canonical(old))
    assert fresh is not None and fresh.id == record.id and fresh == record
    old["body"] += "!"  # the hash no longer matches: not a record written whole, nothing laundered
    assert recleaned(canonical(old)) is None
    assert recleaned(b"not json") is None


@pytest.mark.parametrize(
    ("text", "beyond"),
    [
        ("Cache grants", None),  # the title itself
        ("re-doing: Cache  grants", None),  # a lead-in adds nothing
        ("Cache grants (0871179de7)", " (0871179de7)"),
        ("cache grants, with a TTL", ", with a TTL"),
        ("Cache grants in Redis", "Cache grants in Redis"),  # more than the title, not after it: whole
        ("a very long lead-in then: Cache grants", "a very long lead-in then: Cache grants"),
    ],
)
def test_beyond_title_keeps_what_a_field_adds_to_the_title(text: str, beyond: str | None) -> None:
    assert beyond_title("Cache grants", text) == beyond
