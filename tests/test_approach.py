"""Approach fingerprints of real commits and the containment of one change in another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harvest_repo import HarvestRepo

from comind.harvest.approach import (
    MAX_BLOB,
    Approach,
    approach,
    approach_of_range,
    containment,
    is_trivial,
    normalise_line,
)

CACHE = """import functools
from typing import Any

# cache the lookups
def lookup(key: str) -> Any:
    value   =  STORE.get(key)
    if value is None:
        value = load(key)
        STORE[key] = value
    return value
"""


@pytest.fixture
def repo(tmp_path: Path) -> HarvestRepo:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Initial\n", {"app.py": "def lookup(key):\n    return load(key)\n", "README.md": "demo\n"})
    return r


def by_path(a: Approach) -> dict[str, tuple[list[tuple[int, str, bool]], list[tuple[int, str, bool]]]]:
    return {f.path: ([(ln.lineno, ln.text, ln.trivial) for ln in f.added],
                     [(ln.lineno, ln.text, ln.trivial) for ln in f.removed]) for f in a.files}


def test_added_and_removed_lines_with_numbers_and_triviality(repo: HarvestRepo) -> None:
    sha = repo.commit("Cache lookups\n", {"app.py": CACHE})
    a = approach(repo.path, sha)
    assert a.head == sha and a.base == repo.git("rev-parse", f"{sha}^").strip()
    added, removed = by_path(a)["app.py"]
    assert removed == [(1, "def lookup(key):", False), (2, "return load(key)", False)]
    assert added[:5] == [(1, "import functools", True), (2, "from typing import Any", True), (3, "", True),
                         (4, "# cache the lookups", True), (5, "def lookup(key: str) -> Any:", False)]
    assert (6, "value = STORE.get(key)", False) in added  # whitespace collapsed
    assert a.files[0].status == "M"


def test_root_commit_against_the_empty_tree(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    sha = r.commit("Root\n", {"a.py": "x = 1\n"})
    a = approach(r.path, sha)
    assert a.base is None and by_path(a) == {"a.py": ([(1, "x = 1", False)], [])}


def test_binary_large_and_renamed_files(repo: HarvestRepo) -> None:
    body = "".join(f"line number {i} of a long file\n" for i in range(60))
    repo.commit("Add module\n", {"old/mod.py": body})
    (repo.path / "old" / "mod.py").unlink()
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary\x00data")
    repo.write("big.txt", "x" * (MAX_BLOB + 10) + "\n")
    repo.write("new/mod.py", body + "one more line\n")
    sha = repo.commit("Move module, add assets\n")
    a = approach(repo.path, sha)
    files = {f.path: f for f in a.files}
    assert files["new/mod.py"].status == "R" and files["new/mod.py"].old_path == "old/mod.py"
    assert [ln.text for ln in files["new/mod.py"].added] == ["one more line"]
    assert files["logo.png"].binary and files["logo.png"].added == ()
    assert files["big.txt"].skipped and a.skipped == 1


def test_comment_styles_by_extension() -> None:
    assert is_trivial("// note", "//") and not is_trivial("// note", "#")
    assert is_trivial("-- note", "--") and is_trivial("# note", "#")
    assert is_trivial("* inside a block comment", "//") and is_trivial("/* one */", "//")
    assert is_trivial("});", "") and is_trivial("", "")
    assert is_trivial("use std::io;", "//") and is_trivial("const x = require('x')", "//")
    assert not is_trivial("value = compute()", "#") and not is_trivial("常量", "")
    assert normalise_line("  a \t  b  ") == "a b"


def test_json_round_trip_is_plain(repo: HarvestRepo) -> None:
    sha = repo.commit("Cache lookups\n", {"app.py": CACHE, "bin.dat": b"\x00\x01"})
    a = approach(repo.path, sha)
    data = json.loads(json.dumps(a.to_json()))
    assert Approach.from_json(data) == a

    def plain(x: object) -> bool:
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, list):
            return all(plain(v) for v in x)
        if isinstance(x, int) and not isinstance(x, bool):
            return abs(x) < 2**53
        return x is None or isinstance(x, str | bool)

    assert plain(data)


def test_revert_then_reproposal_is_contained(repo: HarvestRepo) -> None:
    attempt_sha = repo.commit("Cache lookups\n", {"app.py": CACHE})
    attempt = approach(repo.path, attempt_sha)
    repo.revert(attempt_sha)
    # the same approach again, reformatted and moved to another file, on a branch
    repo.checkout("-b", "mr")
    moved = CACHE.replace("    ", "\t").replace("import functools\n", "")
    repo.commit("Speed up lookups\n", {"lib/cache.py": moved, "app.py": "from lib.cache import lookup\n"})
    change = approach_of_range(repo.path, "main", "mr")
    c = containment(attempt, change)
    assert c.added_total == 6 and c.added_matched == 6  # every non-trivial added line again
    assert c.removed_total == 2 and c.removed_matched == 2
    assert c.ratio == 1.0 and c.per_file[0].path == "app.py"
    unrelated = repo.commit("Docs\n", {"README.md": "demo\nmore docs\n"})
    assert containment(attempt, approach(repo.path, unrelated)).matched == 0


def test_containment_is_a_multiset(repo: HarvestRepo) -> None:
    a1 = repo.commit("Twice\n", {"x.py": "retry()\nretry()\nretry()\n"})
    a2 = repo.commit("Once more\n", {"x.py": "retry()\nretry()\nretry()\nretry()\n"})
    c = containment(approach(repo.path, a1), approach(repo.path, a2))
    assert (c.added_matched, c.added_total) == (1, 3)


def test_range_uses_the_merge_base(repo: HarvestRepo) -> None:
    repo.checkout("-b", "mr")
    repo.commit("MR work\n", {"mr.py": "feature = True\n"})
    repo.checkout("main")
    repo.commit("Main moves\n", {"main.py": "other = 1\n"})
    a = approach_of_range(repo.path, "main", "mr")
    assert list(by_path(a)) == ["mr.py"]


def test_ten_thousand_file_change(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Root\n", {"keep.txt": "k\n"})
    for i in range(10_000):
        r.write(f"pkg/m{i // 100}/f{i}.py", f"value_{i} = compute({i})\nshared = 1\n")
    sha = r.commit("Generate\n")
    change = approach(r.path, sha)
    assert len(change.files) == 10_000
    c = containment(change, change)
    assert c.matched == c.total == 20_000 and len(c.per_file) == 10_000
