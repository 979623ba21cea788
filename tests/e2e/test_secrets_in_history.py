"""Secrets in history are redacted, not dropped (issue 24, item 6): each one becomes a marker naming
its kind, the rest of the record stays, and nothing under .git/comind holds the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1YB5VZ9pQb9vR4t8gPhZ5kA7xq2Lw"
GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
SECRETS = {
    "aws-secret-key": AWS_SECRET,
    "high-entropy-string": PEM_BODY,
    "slack-webhook-url": "http://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "url-password": "s3cretpw9",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_Xg",
    "stripe-access-token": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "gcp-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "github-pat": GHP,
}
CONFIG = (
    "import os\n\n"
    f"AWS_SECRET = '{AWS_SECRET}'\n"
    f"KEY_BODY = '{PEM_BODY}'\n"
    f"HOOK = '{SECRETS['slack-webhook-url']}'\n"
    "DB = 'postgres://app:s3cretpw9@db.internal/app'\n"
    f"AUTH = 'Bearer {SECRETS['jwt']}'\n"
    f"STRIPE = '{SECRETS['stripe-access-token']}'\n"
    f"MAPS = '{SECRETS['gcp-api-key']}'\n"
    f"TOKEN = '{GHP[:10]}\u200b{GHP[10:]}'\n"
    "TIMEOUT = connect(retries=3, backoff=2)\n"
)


@pytest.fixture
def harvested(tmp_path: Path, cli) -> GitRepo:  # type: ignore[no-untyped-def]
    gr = GitRepo(tmp_path)
    gr.write("app/main.py", "def main():\n    return 0\n")
    gr.commit("initial")
    gr.write("app/settings.py", CONFIG)
    soft = GHP[:8] + "\u00ad" + GHP[8:]
    gr.commit(f"Configure the services with {GHP}\n\nConstraint: rotate {soft} and {AWS_SECRET} monthly")
    gr.git("revert", "--no-edit", "HEAD")
    result = cli(gr.path, "harvest", "--json")
    assert result.code == 0, result.err
    return gr


def attempt(cli, gr: GitRepo) -> dict:  # type: ignore[no-untyped-def,type-arg]
    rows = [json.loads(line) for line in cli(gr.path, "log", "--history", "--json").out.splitlines()]
    (found,) = [r for r in rows if r["kind"] == "attempt" and r["fields"]["outcome"] == "reverted"]
    return dict(found)


def test_a_reverted_diff_keeps_its_lines_with_the_secrets_redacted(harvested: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    record = attempt(cli, harvested)
    lines = [line for f in record["fields"]["fingerprint"]["files"] for line in f["added"]]
    texts = [text for _, text, _ in lines]
    for kind in SECRETS:
        assert any(f"[redacted:{kind}]" in t for t in texts), (kind, texts)
    assert "TIMEOUT = connect(retries=3, backoff=2)" in texts  # the rest of the diff is kept
    assert any(t.startswith("AWS_SECRET = '[redacted:") for t in texts)
    # a redacted line is kept to read, not matched: it is marked trivial, as the dropped line was
    assert all(trivial for _, text, trivial in lines if "[redacted:" in text)


def test_a_commit_message_keeps_its_words_with_the_secrets_redacted(harvested: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in cli(harvested.path, "log", "--history", "--json").out.splitlines()]
    (constraint,) = [r for r in rows if r["kind"] == "constraint"]
    assert constraint["fields"]["rule"] == "rotate [redacted:github-pat] and [redacted:aws-secret-key] monthly"


def test_nothing_under_git_comind_holds_a_secret(harvested: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli(harvested.path, "log").code == 0  # the ledger view is built in .git/comind too
    cache = harvested.path / ".git" / "comind"
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for secret in [*SECRETS.values(), GHP[:10], GHP[10:], "s3cretpw9"]:
            assert secret.encode() not in data, (path, secret)


JVM_PATH = "okhttp/src/jvmTest/java/okhttp3/internal/tls/CertificatePinnerChainValidationTest.java"


def test_a_deep_path_with_digits_and_capitals_is_kept_whole(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    # 80 characters of letters, digits and slashes: the shape of a base64 key, but a path of the tree
    gr = GitRepo(tmp_path)
    source = "class CertificatePinnerChainValidationTest {\n  void pins() {\n%s  }\n}\n"
    gr.write(JVM_PATH, source % "")
    gr.commit("initial")
    gr.write(JVM_PATH, source % "    expectFailure(19);\n")
    gr.commit("Expect the chain validation to fail on JDK 19")
    gr.git("revert", "--no-edit", "HEAD")
    assert cli(gr.path, "harvest").code == 0
    record = attempt(cli, gr)
    assert {a.get("path") for a in record["anchors"]} == {JVM_PATH}
    assert [f["path"] for f in record["fields"]["fingerprint"]["files"]] == [JVM_PATH]


# A secret assigned to a longer name, a quoted key or after `=`: the forms .env files, JSON configs
# and shell lines take in a commit message and in a diff.
ASSIGNED = {
    "DB_PASSWORD={}": "s3cretvalue42",
    "export POSTGRES_PASSWORD={}": "hunter2hunter",
    "MYSQL_PWD={}": "rootpass1x",
    "API_TOKEN={}": "abcdef123456",
    '"password": "{}"': "jsonpass123",
    "dbPassword: '{}'": "camelpass99",
    "AWS_SECRET_ACCESS_KEY={}": AWS_SECRET,
    "redis://:{}@localhost:6379": "foobared123",
}


def test_a_secret_assigned_to_a_longer_name_is_redacted(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    gr = GitRepo(tmp_path)
    gr.write("app/main.py", "def main():\n    return 0\n")
    gr.commit("initial")
    lines = [form.format(secret) for form, secret in ASSIGNED.items()]
    gr.write("app/settings.py", "".join(f"X{n} = {line!r}\n" for n, line in enumerate(lines)) + "TIMEOUT = 3\n")
    gr.commit("Connect with the service account\n\n" + "\n".join(lines) + f"\n\nConstraint: never log {lines[0]}")
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-m", 'Revert "Connect with the service account"\n\nIt leaked ' + "; ".join(lines))
    assert cli(gr.path, "harvest").code == 0
    record = attempt(cli, gr)
    reason = record["fields"]["reason"]
    assert reason.startswith("It leaked DB_PASSWORD=[redacted:password]; export POSTGRES_PASSWORD=[redacted:")
    added = [text for f in record["fields"]["fingerprint"]["files"] for _, text, _ in f["added"]]
    assert "X0 = 'DB_PASSWORD=[redacted:password]'" in added and "TIMEOUT = 3" in added
    shown = cli(gr.path, "log", "--history", "--json").out
    files = [p for p in (gr.path / ".git" / "comind").rglob("*") if p.is_file()]
    for secret in ASSIGNED.values():
        assert secret not in shown
        for path in files:
            assert secret.encode() not in path.read_bytes(), (path, secret)


def test_a_cache_an_older_harvester_wrote_is_derived_again_without_its_secrets(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    # harvester 20 kept `DB_PASSWORD=<value>`: its cache (kept between CI runs) is read again, not trusted
    from comind.records import canonical, content_hash

    gr = GitRepo(tmp_path)
    gr.write("app/main.py", "def main():\n    return 0\n")
    gr.commit("initial")
    gr.write("app/main.py", "def main():\n    return 1\n")
    gr.commit("Return one\n\nConstraint: never log DB_PASSWORD=[redacted:password] in main")
    assert cli(gr.path, "harvest").code == 0
    cache = gr.path / ".git" / "comind"
    inbox = cache / "harvest" / "_ledger" / "inbox"
    (stored,) = [p for p in inbox.iterdir() if "[redacted:password]" in p.read_text()]
    old = json.loads(stored.read_text().replace("[redacted:password]", "s3cretvalue42"))  # what 20 wrote
    old["hash"] = content_hash(old)
    stored.unlink()
    (inbox / f"{old['id']}-{old['hash']}.json").write_bytes(canonical(old))
    state = json.loads((cache / "harvest-state.json").read_text())
    (cache / "harvest-state.json").write_text(json.dumps({**state, "harvester": "20"}))
    assert cli(gr.path, "harvest").code == 0
    assert not any("s3cretvalue42" in p.read_text() for p in inbox.iterdir())
    assert "never log DB_PASSWORD=[redacted:password] in main" in cli(gr.path, "log", "--json").out
