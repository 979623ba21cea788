"""Approach fingerprints of real commits (the matcher that compares them: test_deadends.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harvest_repo import CACHE, HarvestRepo
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.harvest.approach import (
    MAX_BLOB,
    Approach,
    approach,
    approach_of_range,
    is_trivial,
    normalise_line,
)
from comind.rulebook import RuleBook


@pytest.fixture
def repo(tmp_path: Path) -> HarvestRepo:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Initial\n", {"app.py": "def lookup(key):\n    return load_from_disk(key)\n", "README.md": "demo\n"})
    return r


def by_path(a: Approach) -> dict[str, tuple[list[tuple[int, str, bool]], list[tuple[int, str, bool]]]]:
    return {
        f.path: (
            [(ln.lineno, ln.text, ln.trivial) for ln in f.added],
            [(ln.lineno, ln.text, ln.trivial) for ln in f.removed],
        )
        for f in a.files
    }


def test_added_and_removed_lines_with_numbers_and_triviality(repo: HarvestRepo) -> None:
    sha = repo.commit("Cache lookups\n", {"app.py": CACHE})
    a = approach(repo.path, sha)
    assert a.head == sha and a.base == repo.git("rev-parse", f"{sha}^").strip()
    added, removed = by_path(a)["app.py"]
    assert removed == [(1, "def lookup(key):", False), (2, "return load_from_disk(key)", False)]
    assert added[:5] == [
        (1, "import functools", True),
        (2, "from typing import Any", True),
        (3, "", True),
        (4, "# cache the lookups", True),
        (5, "def lookup(key: str) -> Any:", False),
    ]
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


def test_a_blob_the_clone_lacks_is_one_unread_file_not_an_unreadable_change(repo: HarvestRepo) -> None:
    """An incomplete mirror (or a partial clone whose remote is out of reach) lacks a blob: that file
    is skipped and the rest of the change is read (astro's merge of its Netlify adapter lacked a png)."""
    sha = repo.commit(
        "Add two modules\n", {"a.py": "def alpha(x):\n    return x + 1\n", "b.py": "def beta(x):\n    return x + 2\n"}
    )
    blob = repo.git("rev-parse", f"{sha}:b.py").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    a = approach(repo.path, sha)
    files = {f.path: f for f in a.files}
    assert files["b.py"].skipped and a.skipped == 1
    assert [ln.text for ln in files["a.py"].added] == ["def alpha(x):", "return x + 1"]


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


def test_range_uses_the_merge_base(repo: HarvestRepo) -> None:
    repo.checkout("-b", "mr")
    repo.commit("MR work\n", {"mr.py": "feature = True\n"})
    repo.checkout("main")
    repo.commit("Main moves\n", {"main.py": "other = 1\n"})
    a = approach_of_range(repo.path, "main", "mr")
    assert list(by_path(a)) == ["mr.py"]


def test_scaffolding_a_new_file_shares_with_its_siblings_is_trivial(repo: HarvestRepo) -> None:
    # astro: every `examples/*` folder has the same .gitignore and package.json fields; a new example
    # copies them, and that copy proposes nothing
    ignore = "# build output\ndist/\n.astro/\nnode_modules/\n"
    package = '{\n  "type": "module",\n  "scripts": {\n    "dev": "astro dev",\n    "build": "astro build"\n  },\n'
    repo.commit(
        "Examples\n",
        {
            "examples/blog/.gitignore": ignore + ".vercel/\n",
            "examples/blog/package.json": package + '  "name": "@example/blog"\n}\n',
            "examples/docs/.gitignore": ignore,
            "examples/docs/package.json": package + '  "name": "@example/docs"\n}\n',
            "examples/solo/only.txt": "a file no sibling has\n",
            **{
                f"rules/{name}/rule.py": f"class Rule(Base):\n    code = '{code}'\n    def check(self, node):\n"
                f"        return {name}(node)\n"
                for name, code in (("quotes", "Q001"), ("commas", "C001"))
            },
        },
    )
    sha = repo.commit(
        "Add the Deno example\n",
        {
            "examples/deno/.gitignore": ignore + ".deno-cache/\n",
            "examples/deno/package.json": package
            + '  "name": "@example/deno",\n  "deno": "deno run -A server.ts"\n}\n',
            "examples/deno/server.ts": "serve(handler, { port: 8085 });\n",
            "examples/solo/more.txt": "dist/\n",
            "rules/gettext/rule.py": (
                "class Rule(Base):\n    code = 'INT001'\n    def check(self, node):\n"
                "        if is_gettext_call(node):\n            return format_in_call(node)\n"
            ),
        },
    )
    files = by_path(approach(repo.path, sha))
    informative = {path: [t for _, t, trivial in added if not trivial] for path, (added, _) in files.items()}
    assert informative["examples/deno/.gitignore"] == [".deno-cache/"]
    assert informative["examples/deno/package.json"] == ['"name": "@example/deno",', '"deno": "deno run -A server.ts"']
    assert informative["examples/deno/server.ts"] == ["serve(handler, { port: 8085 });"]
    assert informative["examples/solo/more.txt"] == ["dist/"]  # no sibling holds a more.txt
    # a new rule module shares its idioms with the others (2 of 5 lines), but it is written, not copied
    assert len(informative["rules/gettext/rule.py"]) == 5
    # deleting the example again: the same lines are scaffolding on the removed side
    repo.git("rm", "-q", "-r", "examples/deno")
    removed = by_path(approach(repo.path, repo.commit("Drop the Deno example\n")))["examples/deno/.gitignore"][1]
    assert [t for _, t, trivial in removed if not trivial] == [".deno-cache/"]


def test_a_new_file_copying_the_file_beside_it_named_most_like_it_is_trivial_there(repo: HarvestRepo) -> None:
    # rule L4: a release's API snapshot is the last one's with a few entries more; what it copies proposes nothing
    entries = "".join(f'<method name="call{i}" returns="Result{i}" static="false"/>\n' for i in range(20))
    repo.commit(
        "API snapshots\n",
        {
            "api/4.0.xml": entries[: len(entries) // 2],
            "api/4.1.xml": entries,
            "api/notes.md": "\n".join(f"note number {i} about the api" for i in range(20)),
        },
    )
    extra = '<method name="stream" returns="Flow" static="true"/>\n'
    sha = repo.commit(
        "API snapshot of 4.2\n",
        {"api/4.2.xml": entries + extra, "api/4.2.md": "the stream method returns a flow\n"},
    )
    files = by_path(approach(repo.path, sha))
    informative = {path: [t for _, t, trivial in added if not trivial] for path, (added, _) in files.items()}
    assert informative["api/4.2.xml"] == [extra.strip()]  # copied from 4.1.xml, not 4.0.xml
    assert informative["api/4.2.md"] == ["the stream method returns a flow"]  # written: nothing beside it is like it
    # a file named like one beside it but written anew keeps its lines; so with the rule off
    sha = repo.commit("Written anew\n", {"api/4.3.xml": extra + '<method name="close" returns="void" static="x"/>\n'})
    assert len([ln for ln in approach(repo.path, sha).files[0].added if not ln.trivial]) == 2
    sha = repo.commit("API snapshot of 4.4\n", {"api/4.4.xml": entries + extra})
    off = RuleBook({"L4.share": 0})
    assert len([ln for ln in approach(repo.path, sha, rules=off).files[0].added if not ln.trivial]) == 21


def test_a_new_version_numbered_past_nine_is_a_copy_of_the_last_not_the_first(repo: HarvestRepo) -> None:
    # rule L4: `api/4.10.xml` follows `api/4.9.xml`; by characters alone `4.1.xml` is named more like it
    def snapshot(version: int) -> str:
        return "".join(f'<method name="call{i}" since="4.{min(i, version)}"/>\n' for i in range(10 + 3 * version))

    repo.commit("API snapshots\n", {f"api/4.{v}.xml": snapshot(v) for v in range(1, 10)})
    extra = '<method name="stream" since="4.10"/>\n'
    sha = repo.commit("API snapshot of 4.10\n", {"api/4.10.xml": snapshot(9) + extra})
    assert [ln.text for ln in approach(repo.path, sha).files[0].added if not ln.trivial] == [extra.strip()]


@pytest.mark.parametrize(
    "mark",
    [
        "// Code generated by protoc-gen-gogo. DO NOT EDIT.",
        "# This file is @generated by the schema tool.",
        "/* AUTO-GENERATED FILE. DO NOT EDIT! */",
    ],
)
def test_a_file_that_says_it_is_generated_has_only_trivial_lines(repo: HarvestRepo, mark: str) -> None:
    # rule L5: a regenerated file follows its source and its generator; its lines are not the approach
    body = "".join(f"func (m *Sample) GetField{i}() int64 {{ return m.field{i} }}\n" for i in range(6))
    repo.commit("Generate\n", {"gen/sample.pb.go": f"{mark}\npackage gen\n{body}", "gen/hand.go": body})
    more = "func (m *Sample) GetStart() int64 { return m.start }\n"
    sha = repo.commit(
        "Regenerate\n", {"gen/sample.pb.go": f"{mark}\npackage gen\n{body}{more}", "gen/hand.go": body + more}
    )
    files = by_path(approach(repo.path, sha))
    assert [t for _, t, trivial in files["gen/sample.pb.go"][0] if not trivial] == []
    assert [t for _, t, trivial in files["gen/hand.go"][0] if not trivial] == [more.strip()]  # written by hand
    off = by_path(approach(repo.path, sha, rules=RuleBook({"L5.head": 0})))
    assert [t for _, t, trivial in off["gen/sample.pb.go"][0] if not trivial] == [more.strip()]
    # deleted: the mark is read from the side that has it
    repo.git("rm", "-q", "gen/sample.pb.go")
    removed = by_path(approach(repo.path, repo.commit("Drop the generated file\n")))["gen/sample.pb.go"][1]
    assert removed and all(trivial for _, _, trivial in removed)


def test_a_generated_mark_needs_both_words_on_one_line() -> None:
    from comind.rulebook import Generated

    rule = RuleBook().get(Generated)
    assert not rule.judge(b"# Do not edit this list by hand; see CONTRIBUTING\nitems generated daily\n")
    assert not rule.judge(b"def generated_names():\n    return names  # the ones a user generated\n")
    assert rule.judge(b"# This file was generated by go generate; DO NOT EDIT\n")


def test_a_generator_writing_the_mark_in_a_string_is_not_generated(repo: HarvestRepo) -> None:
    # the generator is the approach its output follows: the mark it writes is in code, not in a comment
    head = 'package main\n\nfunc header(w io.Writer) {\n\tfmt.Fprintln(w, "// Code generated by gen. DO NOT EDIT.")\n'
    head += "}\n"
    repo.commit("Generator\n", {"gen/main.go": head})
    more = "func body(w io.Writer) { cache.flushTo(w, lookupTable) }\n"
    files = by_path(approach(repo.path, repo.commit("Cache the lookups\n", {"gen/main.go": head + more})))
    assert [t for _, t, trivial in files["gen/main.go"][0] if not trivial] == [more.strip()]
    from comind.rulebook import Generated

    rule = RuleBook().get(Generated)
    assert not rule.judge(b'HEADER = "# This file is generated; do not edit."\n')
    assert not rule.judge(b'if b"@generated" in data:\n')
    assert rule.judge(b"package gen\n  * @generated SignedSource<<0>>\n")
    assert rule.judge(b'"""Generated by the schema tool. Do not edit."""\n')


def test_a_diff_taken_in_the_folder_holding_every_difference_is_the_whole_diff(tmp_path: Path) -> None:
    """`tree_diff` reads only the folders on the way down to the changes: the same files, paths
    whole, in the same order, with the same renames as libgit2's diff of the two whole trees."""
    import pygit2

    from comind.harvest.approach import diff_approach, tree_diff

    r = HarvestRepo(tmp_path / "r")
    body = "".join(f"line_{i} = compute({i})\n" for i in range(30))
    r.commit("Initial\n", {"top.py": "x = 1\n", "pkg/a/core.py": body, "pkg/a/util.py": "y = 2\n", "pkg/b/z.py": "z\n"})
    r.commit("Deep edit\n", {"pkg/a/core.py": body.replace("compute(3)", "compute(33)")})
    r.git("mv", "pkg/a/core.py", "pkg/a/engine.py")
    r.commit("Rename inside the folder\n", {"pkg/a/util.py": "y = 3\n"})
    r.commit("Two folders\n", {"pkg/a/util.py": "y = 4\n", "pkg/b/z.py": "zz\n"})
    r.git("mv", "pkg/b/z.py", "pkg/b/y.py")
    r.commit("A rename in one folder, an edit in another\n", {"top.py": "x = 2\n", "pkg/a/util.py": "y = 5\n"})
    r.git("mv", "pkg/a/engine.py", "engine.py")
    r.commit("Out to the top\n")
    r.git("rm", "-q", "-r", "pkg/b")
    r.commit("A folder gone\n")
    repo = pygit2.Repository(str(r.path))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL))[:-1]
    prefixes = []
    for c in commits:
        base = c.parents[0]
        whole = diff_approach(repo, repo.diff(base, c, context_lines=0), str(base.id), str(c.id))
        parts = tree_diff(repo, base.tree, c.tree)
        assert diff_approach(repo, parts, str(base.id), str(c.id)) == whole
        prefixes.append([p[1] if len(p) == 2 else p[0] for p in parts])
    assert prefixes == [  # newest first
        ["pkg/"],  # a folder deleted: the diff in its parent
        [""],  # moved out of pkg/a to the top: the top's diff
        ["pkg/a/util.py", "pkg/b/", "top.py"],  # the rename's folder diffed, each file edited elsewhere a patch
        ["pkg/a/util.py", "pkg/b/z.py"],  # two files changed in two folders: a patch of each
        ["pkg/a/"],  # a rename in pkg/a
        ["pkg/a/core.py"],
    ]
    renamed = approach(r.path, str(commits[4].id))
    assert [(f.path, f.old_path, f.status) for f in renamed.files] == [
        ("pkg/a/engine.py", "pkg/a/core.py", "R"),
        ("pkg/a/util.py", None, "M"),
    ]


def test_the_siblings_of_a_new_file_are_read_as_each_revision_has_them(tmp_path: Path) -> None:
    """The sibling files' lines are kept by blob id, for the next revision that creates a file
    beside them: one changed since is read again, not taken from the last reading of its path."""
    r = HarvestRepo(tmp_path / "r")
    old, new = "node_modules/\ndist/\n.cache/\n", "target/\nbuild/\n.gradle/\n"
    r.commit("Examples\n", {f"examples/{n}/.gitignore": old for n in ("a", "b", "c")})
    first = approach(r.path, r.commit("Example d\n", {"examples/d/.gitignore": old}))
    assert [ln.trivial for f in first.files for ln in f.added] == [True, True, True]
    r.commit("Another stack\n", {f"examples/{n}/.gitignore": new for n in ("a", "b", "c", "d")})
    second = approach(r.path, r.commit("Example e\n", {"examples/e/.gitignore": new}))
    assert [ln.trivial for f in second.files for ln in f.added] == [True, True, True]
    third = approach(r.path, r.commit("Example f\n", {"examples/f/.gitignore": old}))
    assert [ln.trivial for f in third.files for ln in f.added] == [False, False, False]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\r\n\x0bab\u00a0\u2003", max_size=30))
def test_a_line_is_folded_as_the_pattern_folds_it(text: str) -> None:
    """Most lines hold no run to fold: only those holding a tab or two spaces go through the pattern."""
    import re

    assert normalise_line(text) == re.sub(r"[ \t]+", " ", text.strip())
