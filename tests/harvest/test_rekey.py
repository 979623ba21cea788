"""A new actor key re-keys the harvest cache (`harvest.rekey`): the records a fresh harvest under that
key makes, without walking the history again. Real repositories in tmp folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from comind.harvest.run import harvest
from comind.store import Store
from comind.workspace import Workspace
from tests.gitrepo import GitRepo

BEA = "Bea Reviewer <bea@example.com>"
CY = "Cy Lorekeeper <cy@example.com>"


@pytest.fixture(autouse=True)
def _store_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMIND_ACTOR_SALT", raising=False)


def _history(tmp_path: Path) -> GitRepo:
    """Reverts and Lore by three people: records whose actors a key change touches."""
    r = GitRepo(tmp_path)
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
    r.write("a.py", body)
    r.commit("Start")
    for n, author in ((1, BEA), (3, CY)):
        r.write("a.py", body.replace(f"x + {n}\n", f"x + {n} + 0\n"))
        r.commit(f"Make f{n} faster", author=author)
        r.revert_head("slower on small inputs")
    r.write("b.py", "def g():\n    return 2\n")
    r.commit("Add g\n\nConstraint: g stays pure\nRejected: caching g | it is cheap", author=CY)
    return r


def _records(path: Path) -> dict[str, object]:
    ws = Workspace(path)
    return {r.id: r.data for store in (ws.harvest_store, ws.branch_store) for r in store.iter_records()}


def _fresh(path: Path, tmp_path: Path) -> dict[str, object]:
    """What a first harvest of the same work tree (and so the same key) makes."""
    copy = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}" / path.name  # (ids name the repository)
    shutil.copytree(path, copy, symlinks=True)
    shutil.rmtree(copy / ".git" / "comind")
    harvest(Workspace(copy))
    return _records(copy)


def _actors(records: dict[str, object]) -> set[str]:
    return {data["provenance"]["actor"] for data in records.values()}  # type: ignore[index]


def _keyed(r: GitRepo, message: str) -> None:
    """The in-repository store gets its key (as the first `comind remember` makes it), committed."""
    assert Store(str(r.path / ".comind" / "ledger")).actor_salt(create=True)
    r.commit(message)


def test_a_new_store_key_rekeys_the_cache_instead_of_harvesting_again(tmp_path: Path) -> None:
    r = _history(tmp_path)
    harvest(Workspace(r.path))
    before = _records(r.path)
    assert len(before) >= 4 and len(_actors(before)) >= 2
    _keyed(r, "Remember a constraint")
    result = harvest(Workspace(r.path))
    assert result.commits == 1  # the new commit only: the history was not walked again
    assert result.rekeyed >= 4 and f"{result.rekeyed} cached records re-keyed" in result.line()
    after = _records(r.path)
    assert after == _fresh(r.path, tmp_path)  # ids, hashes, actors: record for record
    assert after.keys() == before.keys() and not _actors(after) & _actors(before)


def test_switching_to_and_from_a_branch_with_a_store_re_keys_without_walking(tmp_path: Path) -> None:
    r = _history(tmp_path)
    harvest(Workspace(r.path))
    r.branch("memory")
    r.checkout("memory")
    _keyed(r, "Keep memory in the repository")
    for where in ("memory", "main", "memory", "main"):
        r.checkout(where)
        result = harvest(Workspace(r.path))
        assert result.commits == (1 if where == "memory" else 0)  # the branch's own commit, read every time
        assert _records(r.path) == _fresh(r.path, tmp_path)


def test_a_rekey_stopped_half_way_is_finished_by_the_next_harvest(tmp_path: Path) -> None:
    r = _history(tmp_path)
    harvest(Workspace(r.path))
    ws = Workspace(r.path)
    one = next(rec for rec in ws.harvest_store.iter_records() if rec.provenance.get("source") == "git")
    _keyed(r, "Remember a constraint")
    from comind.harvest.rekey import _with_actor

    ws = Workspace(r.path)  # the new key: one record re-keyed by hand, the state not saved (a stop)
    ws.harvest_store.put_derived([_with_actor(one, "actor-of-a-stopped-run")], replace=True)
    harvest(Workspace(r.path))
    assert _records(r.path) == _fresh(r.path, tmp_path)
