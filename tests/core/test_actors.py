"""Actor pseudonyms: keyed by a random key the store keeps, not by what the git log shows."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from comind.actors import actor_id
from comind.store import Store
from comind.store.layout import ACTOR_SALT

REMEMBER = (
    "remember",
    "constraint",
    "--on",
    "a.py",
    "--title",
    "No raw SQL",
    "--rule",
    "no raw SQL",
    "--severity",
    "must",
)


def _identity(repo: Path) -> str:
    from comind.workspace import Workspace

    return Workspace(repo).user_email()


def _actor(cli, repo: Path, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = cli(repo, *args, *REMEMBER)
    assert result.code == 0, result.err
    shown = cli(repo, *args, "show", result.out.strip(), "--json")
    return str(json.loads(shown.out)["provenance"]["actor"])


def test_a_new_store_keys_pseudonyms_by_a_random_key_of_its_own(repo: Path, cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("COMIND_ACTOR_SALT", raising=False)
    actor = _actor(cli, repo)
    assert actor != actor_id(_identity(repo), "repo")  # what anyone with the git log could compute
    salt = (repo / ".comind" / "ledger" / ACTOR_SALT).read_text().strip()
    assert len(salt) == 64 and actor == actor_id(_identity(repo), salt)
    assert _actor(cli, repo) == actor  # kept: the same person, the same pseudonym


def test_a_record_refused_leaves_the_store_without_a_key(repo: Path, cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("COMIND_ACTOR_SALT", raising=False)
    result = cli(repo, *REMEMBER[:-2])  # a constraint without its severity
    assert result.code == 2 and "severity" in result.err
    assert not (repo / ".comind").exists()  # nothing half-written: no key made for a record never written


def test_a_store_holding_records_from_before_keeps_its_pseudonyms(repo: Path, cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # an older comind keyed by the repository name: its records and the new ones must keep matching
    monkeypatch.setenv("COMIND_ACTOR_SALT", "repo")
    older = _actor(cli, repo)
    monkeypatch.delenv("COMIND_ACTOR_SALT")
    assert _actor(cli, repo) == older == actor_id(_identity(repo), "repo")
    assert not (repo / ".comind" / "ledger" / ACTOR_SALT).exists()


def test_a_store_key_that_is_no_key_is_a_one_line_error(repo: Path, cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("COMIND_ACTOR_SALT", raising=False)
    salt = repo / ".comind" / "ledger" / ACTOR_SALT
    salt.parent.mkdir(parents=True)
    salt.write_text("my-repo\n")
    result = cli(repo, *REMEMBER)
    assert result.code == 2 and "actor-salt is not a key" in result.err and len(result.err.strip().splitlines()) == 1
    assert not list((repo / ".comind" / "ledger" / "_ledger").glob("inbox/*"))  # nothing half-written


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_concurrent_first_writers_agree_on_one_key(kind: str, tmp_path: Path, request) -> None:  # type: ignore[no-untyped-def]
    url = str(tmp_path / "ledger") if kind == "local" else request.getfixturevalue("s3_url")
    assert Store(url).actor_salt(create=False) is None
    found: list[str | None] = []
    barrier = threading.Barrier(8)

    def first() -> None:
        store = Store(url)
        barrier.wait()
        found.append(store.actor_salt(create=True))

    threads = [threading.Thread(target=first) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and len(set(found)) == 1 and found[0] is not None
    assert Store(url).actor_salt(create=False) == found[0]
