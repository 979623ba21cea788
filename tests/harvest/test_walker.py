"""The shared history walk and its helpers, on real repositories (including shallow clones)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harvest_repo import HarvestRepo, run_git

from comind.harvest.walker import (
    SubjectIndex,
    Watermarks,
    default_branch,
    is_ancestor,
    resolve_prefix,
    shallow_boundary,
    walk,
)


def shas(repo: Path | str, tips: list[str], hide: list[str] | None = None, **kw: bool) -> list[str]:
    return [c.sha for c in walk(repo, tips, hide or [], **kw)]


def git_log(repo: HarvestRepo, *args: str) -> list[str]:
    return repo.git("log", "--format=%H", *args).split()


@pytest.fixture
def history(tmp_path: Path) -> HarvestRepo:
    """main: a - b - M(b, f2) - d, feature: f1 - f2 branching from a."""
    r = HarvestRepo(tmp_path / "r")
    r.commit("a: root\n", {"a.txt": "a\n"})
    r.git("branch", "feature")
    r.commit("b\n\nbody of b\n", {"b.txt": "b\n"})
    r.checkout("feature")
    r.commit("f1\n", {"f.txt": "1\n"})
    r.commit("f2\n", {"f.txt": "2\n"})
    r.checkout("main")
    r.merge("feature", "Merge branch 'feature'")
    r.commit("d\n", {"d.txt": "d\n"})
    return r


def test_walk_matches_git_log(history: HarvestRepo) -> None:
    assert shas(history.path, ["main"]) == git_log(history, "--topo-order", "main")
    assert shas(history.path, ["main"], oldest_first=True) == git_log(history, "--topo-order", "--reverse", "main")
    assert shas(history.path, ["main"], first_parent=True) == git_log(history, "--first-parent", "main")


def test_commit_info_fields(history: HarvestRepo) -> None:
    commits = {c.subject: c for c in walk(history.path, ["main"])}
    b = commits["b"]
    assert b.body == "body of b\n" and b.message == "b\n\nbody of b\n"
    assert (b.author_name, b.author_email) == ("Ada Tester", "ada@example.com")
    assert b.author_time == b.committer_time == int(history.git("log", "-1", "--format=%at", b.sha))
    merge = commits["Merge branch 'feature'"]
    assert merge.is_merge and len(merge.parents) == 2
    assert commits["a: root"].parents == () and not commits["a: root"].is_merge


def test_incremental_walk_with_watermarks(history: HarvestRepo, tmp_path: Path) -> None:
    store = tmp_path / "cache" / "watermarks.json"
    marks = Watermarks(store).load()
    assert marks.get("main") == []
    first = shas(history.path, ["main"], marks.get("main"))
    marks.set("main", [first[0]])
    marks.save()
    new = history.commit("e\n", {"e.txt": "e\n"})
    again = Watermarks(store).load()
    assert shas(history.path, ["main"], again.get("main")) == [new]
    assert json.loads(store.read_text()) == {"main": [first[0]]}
    assert [p.name for p in store.parent.iterdir()] == ["watermarks.json"]  # no temp files left


def test_watermark_rewritten_away_rereads_history(history: HarvestRepo) -> None:
    everything = shas(history.path, ["main"])
    assert shas(history.path, ["main"], ["0" * 40, "no-such-branch"]) == everything


def test_corrupt_watermark_file_loads_empty(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text("{not json")
    assert Watermarks(path).load().marks == {}
    path.write_text(json.dumps({"main": "not-a-list", "dev": ["abc"]}))
    assert Watermarks(path).load().marks == {"dev": ["abc"]}


def test_octopus_merge_and_several_tips(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    r.commit("root\n", {"r.txt": "r\n"})
    for name in ("x", "y", "z"):
        r.checkout("-b", name, "main")
        r.commit(f"{name}\n", {f"{name}.txt": name})
    r.checkout("main")
    r.commit("main moves on\n", {"m.txt": "m"})
    r.tick += 1
    r.git("merge", "-q", "-m", "octopus", "x", "y", "z")
    (top, *_rest) = list(walk(r.path, ["main"]))
    assert top.subject == "octopus" and len(top.parents) == 4 and top.is_merge
    assert sorted(shas(r.path, ["x", "y"], ["main~1"])) == sorted(git_log(r, "x", "y", "^main~1"))


def test_odd_messages_never_crash(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    root = r.commit("root\n", {"a": "a\n"})
    latin = r.raw_commit(
        "caf\xe9 subject\n\nbody \xe9\n".encode("latin-1"), parents=(root,), headers=b"encoding ISO-8859-1\n"
    )
    bad = r.raw_commit(b"bad \xff\xfe bytes\n\nbefore nul\x00after nul\n", parents=(latin,))
    bogus = r.raw_commit(b"unknown encoding\n", parents=(bad,), headers=b"encoding x-no-such-codec\n")
    huge = r.raw_commit(b"huge\n\n" + b"Constraint: x\n" * 80_000, parents=(bogus,))
    empty = r.raw_commit(b"", parents=(huge,))
    commits = {c.sha: c for c in walk(r.path, ["HEAD"])}
    assert commits[latin].subject == "café subject" and commits[latin].body == "body é\n"
    assert commits[bad].subject == "bad \ufffd\ufffd bytes"
    assert commits[bad].body == "before nul"  # like git, the message ends at the NUL
    assert commits[bogus].subject == "unknown encoding"
    assert len(commits[huge].message) > 1_000_000
    assert commits[empty].subject == "" and commits[empty].body == ""


def test_shallow_clone(history: HarvestRepo, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    run_git(tmp_path, "clone", "-q", "--depth", "2", "--no-single-branch", f"file://{history.path}", str(clone))
    boundary = shallow_boundary(clone)
    assert boundary and boundary <= set(shas(clone, ["HEAD", "origin/feature"]))
    assert shallow_boundary(history.path) == set()
    walked = {c.sha: c for c in walk(clone, ["HEAD", "origin/feature"])}
    for sha in boundary:
        recorded = history.git("log", "-1", "--format=%P", sha).split()
        assert list(walked[sha].parents) == recorded  # recorded parents, though absent here
        for parent in recorded:
            assert not is_ancestor(clone, parent, "HEAD")


def test_resolve_prefix_reports_ambiguity(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    r.fast_import(1500)
    made = [c.sha for c in walk(r.path, ["bulk"])]
    objects = r.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)").split("\n")
    others = {line.split()[0] for line in objects if line and not line.endswith(" commit")}
    full = made[7]
    assert resolve_prefix(r.path, full) == [full]
    assert resolve_prefix(r.path, full[:7]) == [full]
    assert resolve_prefix(r.path, full.upper()[:10]) == [full]
    assert resolve_prefix(r.path, "f" * 40) == []
    assert resolve_prefix(r.path, "not-hex") == []
    by_prefix: dict[str, list[str]] = {}
    for sha in made:
        by_prefix.setdefault(sha[:4], []).append(sha)
    # two commits sharing a prefix: both come back, sorted; never a guess
    shared = next(sorted(v) for v in by_prefix.values() if len(v) > 1)
    assert resolve_prefix(r.path, shared[0][:4]) == shared
    # a prefix one commit shares with a blob or tree only: still that one commit
    lonely = next(v[0] for k, v in by_prefix.items() if len(v) == 1 and any(o.startswith(k) for o in others))
    assert resolve_prefix(r.path, lonely[:4]) == [lonely]
    assert resolve_prefix(r.path, next(iter(others))) == []


def test_is_ancestor(history: HarvestRepo) -> None:
    log = git_log(history, "main")
    assert is_ancestor(history.path, log[-1], log[0])
    assert is_ancestor(history.path, log[0], log[0])
    assert not is_ancestor(history.path, log[0], log[-1])
    assert not is_ancestor(history.path, "0" * 40, log[0])


def test_default_branch(tmp_path: Path, history: HarvestRepo) -> None:
    assert default_branch(history.path, "release") == "release"
    assert default_branch(history.path) == "main"
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", f"file://{history.path}", str(clone))
    run_git(clone, "checkout", "-q", "-b", "topic")
    run_git(clone, "branch", "-q", "-D", "main")
    assert default_branch(clone) == "origin/main"  # origin/HEAD
    run_git(clone, "remote", "set-head", "origin", "-d")
    assert default_branch(clone) == "origin/main"
    other = HarvestRepo(tmp_path / "other", branch="trunk")
    other.commit("x\n")
    assert default_branch(other.path) == "HEAD"
    legacy = HarvestRepo(tmp_path / "legacy", branch="master")
    legacy.commit("x\n")
    assert default_branch(legacy.path) == "master"


def test_subject_index(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    a = r.commit("fix: upgrade esbuild (#100)\n", {"a": "1"})
    b = r.commit("Sync upstream\n", {"a": "2"})
    c = r.commit("Sync upstream\n", {"a": "3"})
    index = SubjectIndex()
    for commit in walk(r.path, ["HEAD"]):
        index.add(commit.sha, commit.subject)
    assert index.lookup('revert: "fix: upgrade esbuild" (#120)') == [a]
    assert sorted(index.lookup('Revert "Sync upstream"')) == sorted([b, c])  # ambiguous: both
    assert SubjectIndex.from_json(json.loads(json.dumps(index.to_json()))).lookup("sync upstream") == index.lookup(
        "Sync upstream"
    )


def test_walk_of_nothing_and_missing_tips(history: HarvestRepo) -> None:
    assert shas(history.path, []) == []
    with pytest.raises(KeyError):
        shas(history.path, ["no-such-branch"])
    with pytest.raises(ValueError):
        list(walk(history.path.parent / "not-a-repo-dir-xyz", ["HEAD"]))


def test_bare_repository(history: HarvestRepo, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(history.path), str(bare)], check=True)
    assert shas(bare, ["main"]) == shas(history.path, ["main"])
