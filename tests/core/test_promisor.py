"""Partial clones: comind fetches the blobs of past changes a `--filter=blob:none` clone lacks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2
import pytest
from gitrepo import GitRepo

PERM = "class Checker:\n    def check(self, user, perm):\n        return perm in load_grants(user)\n"
CACHED = (
    "import redis\n\n_cache = redis.Redis(host='localhost', port=6379)\n\n\nclass Checker:\n"
    "    def check(self, user, perm):\n        key = f'perm:{user.id}:{perm}'\n"
    "        hit = _cache.get(key)\n        if hit is not None:\n            return hit == b'1'\n"
    "        allowed = perm in load_grants(user)\n        _cache.set(key, b'1' if allowed else b'0', ex=300)\n"
    "        return allowed\n"
)


@pytest.fixture
def blobless(tmp_path: Path) -> tuple[GitRepo, Path]:
    """An origin whose Redis cache was reverted, and a blobless partial clone of it: every commit and
    tree, but only the blobs main's head checked out (neither the reverted cache's nor the file's
    before it)."""
    origin = GitRepo(tmp_path, "origin")
    origin.write("app/__init__.py", "")
    origin.write("app/perm.py", PERM)
    origin.commit("initial")
    origin.write("app/perm.py", CACHED)
    cached = origin.commit("Cache permission checks in Redis")
    origin.git("revert", "--no-edit", "HEAD")
    origin.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Cache permission checks in Redis"\n\nThis reverts commit '
        f"{cached}.\n\nStale grants after role change.\n",
    )
    origin.write("app/perm.py", PERM + "\n\ndef deny(user):\n    return not user.active\n")
    origin.commit("Deny inactive users")  # the file as the revert left it is not checked out either
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{origin.path}", str(clone)], check=True
    )
    for key, value in (("user.name", "Bea"), ("user.email", "bea@example.com")):
        subprocess.run(["git", "-C", str(clone), "config", key, value], check=True)
    return origin, clone


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True, text=True).stdout


def _propose_the_cache_again(clone: Path) -> None:
    _git(clone, "checkout", "-q", "-b", "speed-up")
    (clone / "app" / "perm.py").write_text(CACHED.replace("ex=300", "ex=600"))  # not the reverted blob itself
    _git(clone, "commit", "-q", "-am", "Speed up permission checks")


def test_a_blobless_clone_fetches_what_the_revert_changed_and_finds_the_dead_end(cli, blobless) -> None:  # type: ignore[no-untyped-def]
    origin, clone = blobless
    reverted_blob = origin.git("rev-parse", "HEAD~2:app/perm.py").strip()
    assert pygit2.Oid(hex=reverted_blob) not in pygit2.Repository(str(clone)).odb  # what libgit2 cannot read
    _propose_the_cache_again(clone)
    result = cli(clone, "check", "--base", "main", "--format", "json")
    report = json.loads(result.out)
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert result.code == 1 and dead["path"] == "app/perm.py" and report["warnings"] == []
    assert pygit2.Oid(hex=reverted_blob) in pygit2.Repository(str(clone)).odb


def test_a_promisor_out_of_reach_is_a_warning_naming_what_is_missed(cli, blobless) -> None:  # type: ignore[no-untyped-def]
    origin, clone = blobless
    origin.path.rename(origin.path.with_name("moved"))
    _propose_the_cache_again(clone)
    result = cli(clone, "check", "--base", "main", "--format", "json")
    report = json.loads(result.out)
    [warning] = report["warnings"]
    assert result.code == 0 and not [f for f in report["findings"] if f["type"] == "dead_end"]
    assert warning.startswith(
        "partial clone: blobs of past changes could not be fetched from the promisor remote "
        f"('{origin.path}' does not appear to be a git repository), "
    )
    assert warning.endswith(
        "so the dead ends of those changes are not matched; give the job network access to it, "
        "or clone without --filter"
    )
    # the attempt is still made, from what the clone has: its title, its reason, the file it touched
    [row] = [json.loads(line) for line in cli(clone, "log", "--json").out.splitlines()]
    assert row["kind"] == "attempt" and row["title"] == "Cache permission checks in Redis"
    assert [a["path"] for a in row["anchors"]] == ["app/perm.py"]


def test_the_harvest_fetches_every_revert_s_blobs_in_one_request(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One fetch per attempt is a round trip each: deno's history has hundreds of reverts."""
    origin = GitRepo(tmp_path, "origin")
    origin.write("app/__init__.py", "")
    origin.commit("initial")
    for name in ("alpha", "beta", "gamma"):
        origin.write(
            f"app/{name}.py", "".join(f"def {name}_{i}(x):\n    return x * {i} + len('{name}')\n" for i in range(6))
        )
        origin.commit(f"Add the {name} helpers")
        origin.git("revert", "--no-edit", "HEAD")
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{origin.path}", str(clone)], check=True
    )
    packs = sorted((clone / ".git" / "objects" / "pack").glob("*.pack"))
    result = cli(clone, "harvest")
    assert result.code == 0, result.err
    assert len(sorted((clone / ".git" / "objects" / "pack").glob("*.pack"))) == len(packs) + 1
    rows = [json.loads(line) for line in cli(clone, "log", "--json").out.splitlines()]
    added = {f["path"]: len(f["added"]) for row in rows for f in row["fields"]["fingerprint"]["files"]}
    assert added == {"app/alpha.py": 12, "app/beta.py": 12, "app/gamma.py": 12}  # every attempt read whole


def test_a_treeless_clone_is_refused_with_what_to_clone_instead(cli, blobless, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--filter=tree:0` lacks past commits' trees: every diff and anchor would need a fetch each."""
    origin, _ = blobless
    treeless = tmp_path / "treeless"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=tree:0", f"file://{origin.path}", str(treeless)], check=True
    )
    for args in (["check"], ["log"], ["harvest"]):
        result = cli(treeless, *args)
        assert result.code == 2 and result.err.count("\n") == 1
        assert result.err.startswith("comind: this is a treeless clone (--filter=tree:0): ")
        assert "clone with --filter=blob:none (actions/checkout: filter: blob:none) or without a filter" in result.err
    assert not (treeless / ".git" / "comind").exists()  # nothing written


def test_statuses_fetch_the_anchored_bodies_in_one_request(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Records committed with the code, read in a blobless clone: comparing each anchored body with
    today's reads the blob as it was anchored, which the clone lacks once the file has changed."""
    origin = GitRepo(tmp_path, "origin")
    for name in ("perm", "views"):
        origin.write(f"app/{name}.py", f"def {name}(user):\n    return load_{name}(user.id, strict=True)\n")
    origin.commit("initial")
    for name in ("perm", "views"):
        result = cli(
            origin.path,
            "remember",
            "gotcha",
            "--on",
            f"app/{name}.py::{name}",
            "--title",
            f"{name} is slow",
            "--symptom",
            "slow",
            "--cause",
            "no cache",
        )
        assert result.code == 0, result.err
    origin.git("add", ".comind")
    origin.commit("remember")
    for name in ("perm", "views"):
        origin.write(f"app/{name}.py", f"def {name}(user):\n    return load_{name}(user.id, strict=False)\n")
    origin.commit("relax")
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{origin.path}", str(clone)], check=True
    )
    packs = len(list((clone / ".git" / "objects" / "pack").glob("*.pack")))
    rows = [json.loads(line) for line in cli(clone, "log", "--json").out.splitlines()]
    assert len(rows) == 2 and all(row["status"] == "active" for row in rows)
    assert all(any("body changed since" in note for note in row["notes"]) for row in rows)  # compared, not skipped
    assert len(list((clone / ".git" / "objects" / "pack").glob("*.pack"))) == packs + 1


BODY = "def perm(user):\n    grants = load_grants(user.id)\n    return grants.allows(user, strict={})\n"


@pytest.mark.parametrize("renamed", [False, True])
def test_a_status_read_while_the_promisor_was_away_is_not_kept(cli, tmp_path: Path, renamed: bool) -> None:  # type: ignore[no-untyped-def]
    """The anchored blob could not be fetched: the body could not be compared, or the file renamed and
    edited since was not found, for now; once the promisor is back the next read says what is so,
    whatever the first one cached (verdicts, locations, renames, tokens)."""
    origin = GitRepo(tmp_path, "origin")
    origin.write("app/perm.py", "".join(f"# line {i}\n" for i in range(20)) + BODY.format("True"))
    origin.commit("initial")
    result = cli(
        origin.path,
        "remember",
        "gotcha",
        "--on",
        "app/perm.py::perm",
        "--title",
        "perm is slow",
        "--symptom",
        "slow",
        "--cause",
        "no cache",
    )
    assert result.code == 0, result.err
    origin.git("add", ".comind")
    origin.commit("remember")
    if renamed:
        origin.git("mv", "app/perm.py", "app/permissions.py")
    path = "app/permissions.py" if renamed else "app/perm.py"
    origin.write(path, "".join(f"# line {i}\n" for i in range(20)) + BODY.format("False"))
    origin.commit("relax")
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{origin.path}", str(clone)], check=True
    )
    away = origin.path.with_name("away")
    origin.path.rename(away)
    [row] = [json.loads(line) for line in cli(clone, "log", "--json").out.splitlines()]
    assert row["status"] == ("orphaned" if renamed else "stale"), row["status"]
    away.rename(origin.path)
    for _ in range(2):  # and the second read, from what the first one cached
        [row] = [json.loads(line) for line in cli(clone, "log", "--json").out.splitlines()]
        assert row["status"] == "active" and any("body changed since" in n for n in row["notes"]), row["notes"]


def test_one_warning_says_the_promisor_was_out_of_reach(cli, blobless) -> None:  # type: ignore[no-untyped-def]
    """The fetch failed for the change's files and for past changes': one warning says both."""
    origin, clone = blobless
    origin.path.rename(origin.path.with_name("moved"))
    result = cli(clone, "check", "--base", "main~2", "--format", "json")
    report = json.loads(result.out)
    [warning] = report["warnings"]
    assert report["unread"] == ["app/perm.py"]
    assert warning == (
        "partial result: 1 changed file could not be read (not fetched from the promisor remote: "
        f"'{origin.path}' does not appear to be a git repository): app/perm.py; the symbols the change touches"
        " there, and the records on them, are not known, nor the dead ends of past changes whose blobs were not"
        " fetched; give the job network access to the promisor remote, or clone without --filter"
    )
