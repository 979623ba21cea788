"""The compiled check types, each against real repositories with real commits.

Every type: violated on a branch but not on the base → one new violation; already on the base →
none in diff-aware mode and all with --all; moved lines → still not new; broken specs → a clear
CheckError. semgrep runs for real when installed (else those tests skip); "not installed" and
"hangs" use PATH and a tiny external executable, never a stand-in for our own code.
"""

from __future__ import annotations

import stat
import textwrap
from pathlib import Path
from typing import Any

import pytest
from check_repo import APP, NO_EVAL, NO_RAW, app_repo, check_all, constraint, texts
from gitrepo import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comind.checks.context import CheckContext
from comind.checks.globs import module_matches, path_matches
from comind.checks.interface import Check, CheckError
from comind.checks.types import CHECK_TYPES, compile_check
from comind.checks.types.semgrep import find_semgrep
from comind.codeindex import CodeIndex

# --- globs ----------------------------------------------------------------------------------------


def test_globs() -> None:
    assert path_matches("myapp/handlers/**", "myapp/handlers/a/b.py")
    assert path_matches("myapp/handlers/", "myapp/handlers/x.py")
    assert path_matches("myapp/handlers", "myapp/handlers/x.py")
    assert path_matches("src/**/*.py", "src/a.py") and path_matches("src/**/*.py", "src/a/b/c.py")
    assert not path_matches("src/*.py", "src/a/b.py")
    assert path_matches("**/test_*.py", "tests/test_x.py") and path_matches("**/test_*.py", "test_x.py")
    assert module_matches("myapp.db", "myapp.db.raw_query")
    assert not module_matches("myapp.db", "myapp.dbx")
    assert module_matches("myapp.handlers.*", "myapp.handlers.views.sub")
    assert not module_matches("myapp.handlers.*", "myapp.handlers")
    assert module_matches("myapp.**.models", "myapp.a.b.models")


# --- graph ----------------------------------------------------------------------------------------


def test_graph_forbidden_import_on_branch_is_one_new_violation(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    repo.write(
        "myapp/handlers/views.py",
        "from myapp.services import fetch\nfrom myapp.db import raw_query\n\n\n"
        "def index():\n    return fetch() + raw_query('1')\n",
    )
    repo.commit("use raw_query")
    ev = check_all(repo, NO_RAW, base=base)
    assert texts(ev) == ["imports myapp.db.raw_query"]
    v = ev.violations[0]
    assert (v.path, v.line) == ("myapp/handlers/views.py", 2)
    assert ev.failing and not ev.passing
    # the module glob form of `from` finds the same edge
    ev = check_all(repo, {**NO_RAW, "from": "myapp.handlers.*"}, base=base)
    assert texts(ev) == ["imports myapp.db.raw_query"]


def test_graph_violation_already_on_base_is_not_new_but_listed_with_all(tmp_path: Path) -> None:
    files = dict(APP)
    files["myapp/handlers/views.py"] = "from myapp.db import raw_query\n\n\ndef index():\n    return raw_query('1')\n"
    repo, base = app_repo(tmp_path, files)
    # the same import moves down three lines, and something else changes
    repo.write(
        "myapp/handlers/views.py",
        "import os\n\n\nfrom myapp.db import raw_query\n\n\ndef index():\n    return raw_query(os.sep)\n",
    )
    repo.commit("move things around")
    ev = check_all(repo, NO_RAW, base=base)
    assert ev.violations == [] and ev.baseline == 1
    assert ev.failing  # it still fails at head: not T4
    ev = check_all(repo, NO_RAW, base=None)
    assert [(v.path, v.line) for v in ev.violations] == [("myapp/handlers/views.py", 4)]


def test_graph_indirect_paths(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    spec = {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.db"]}
    assert check_all(repo, spec, base=None).violations == []  # views -> services -> db is indirect
    ev = check_all(repo, {**spec, "indirect": True}, base=None)
    assert texts(ev) == ["imports myapp.db.safe"]
    v = ev.violations[0]
    assert (v.path, v.line) == ("myapp/handlers/views.py", 1)  # the first hop of the chain
    assert "myapp.handlers.views -> myapp.services -> myapp.db.safe" in v.message
    # diff-aware: the chain existed at the base, so a change elsewhere adds nothing
    repo.write("myapp/services.py", APP["myapp/services.py"] + "\n\ndef more():\n    return 2\n")
    repo.commit("more")
    assert check_all(repo, {**spec, "indirect": True}, base=base).violations == []


def test_graph_checks_name_c_and_ruby_modules_by_their_paths(tmp_path: Path) -> None:
    # A C module is its path without extension, a Ruby one its require path: a path glob names them.
    repo = GitRepo(tmp_path)
    repo.write("src/net/sock.c", '#include "db/conn.h"\nint sock(void) { return conn(); }\n')
    repo.write("src/db/conn.h", "int conn(void);\n")
    repo.write("lib/rack/auth/basic.rb", 'require "rack/utils"\n')
    repo.write("lib/rack/utils.rb", "module Rack; end\n")
    repo.commit("base")
    c_spec = {"type": "graph", "from": "src/net/**", "forbid": ["src/db/**"]}
    assert texts(check_all(repo, c_spec, base=None)) == ["imports src/db/conn"]
    ruby_spec = {"type": "graph", "from": "rack/auth/**", "forbid": ["rack/utils"]}
    assert texts(check_all(repo, ruby_spec, base=None)) == ["imports rack/utils"]


def test_graph_checks_name_javascript_modules_and_their_names_by_path(tmp_path: Path) -> None:
    """As the docs name a JS module (`src/db/index`), and a name in it as the call graph does."""
    repo = GitRepo(tmp_path)
    repo.write("src/db/index.js", "export function rawQuery() {}\nexport function safe() {}\n")
    repo.write("src/web/api.js", "export function get() {}\n")
    base = repo.commit("base")
    repo.write(
        "src/web/api.js",
        "import { rawQuery, safe } from '../db/index.js';\nexport function get() { rawQuery(); }\n",
    )
    repo.commit("query straight from the handler")
    imports = {"type": "graph", "from": "src/web/**", "forbid": ["src/db/index"]}
    assert texts(check_all(repo, imports, base=base)) == ["imports src/db/index.rawQuery", "imports src/db/index.safe"]
    one = {**imports, "forbid": ["src/db/index.rawQuery"]}
    assert texts(check_all(repo, one, base=base)) == ["imports src/db/index.rawQuery"]
    for forbid in ("src/db/index.rawQuery", "src/db/index", "src/**/*.rawQuery"):
        calls = {**imports, "forbid": [forbid], "edges": "calls"}
        assert texts(check_all(repo, calls, base=base)) == ["get calls src/db/index.rawQuery"], forbid
    assert texts(check_all(repo, {**one, "forbid": ["src/db/index.safe"], "edges": "calls"}, base=base)) == []


def test_graph_checks_over_rust_see_the_crate_s_modules_and_other_crates(tmp_path: Path) -> None:
    """A Rust `use` was never an internal edge, nor matched by a module glob (`mio::net` was one name):
    a graph check over Rust code could not fail, and said nothing of it."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod fs;\npub mod sync;\n")
    repo.write("src/fs/mod.rs", "pub struct File;\npub fn read() {}\n")
    repo.write("src/sync/mutex.rs", "use std::sync::Arc;\npub struct Mutex;\n")
    base = repo.commit("base")
    repo.write(
        "src/sync/mutex.rs",
        "use std::sync::Arc;\nuse crate::fs::File;\nuse mio::net::TcpStream;\npub struct Mutex;\n"
        "fn lock() { super::super::fs::read(); std::process::exit(1); }\n",
    )
    repo.commit("sync reaches into fs")
    internal = {"type": "graph", "from": "src/sync/**", "forbid": ["src/fs/**"]}
    assert texts(check_all(repo, internal, base=base)) == ["imports src/fs/mod.File"]
    assert texts(check_all(repo, {**internal, "edges": "calls"}, base=base)) == ["lock calls src/fs/mod.read"]
    crate = {"type": "graph", "from": "src/sync/**", "forbid": ["mio"]}
    assert texts(check_all(repo, crate, base=base)) == ["imports mio.net.TcpStream"]
    for written in ("rt::fs", "rt.fs.*", "mio::net"):  # as Rust writes a path, or with dots
        named = {**crate, "forbid": [written]}
        assert len(texts(check_all(repo, named, base=base))) == 1, written
    with pytest.raises(CheckError, match=r"by their files' paths \(src/fs/\*\* for crate::fs\)"):
        compile_check("", {**crate, "forbid": ["crate::fs"]})
    exits = {"type": "graph", "from": "src/**", "forbid": ["std.process.exit"], "edges": "calls"}
    assert texts(check_all(repo, exits, base=base)) == ["lock calls std.process.exit"]


def test_a_rust_forbid_of_a_module_sees_the_names_it_defines_through_re_exports(tmp_path: Path) -> None:
    """A Rust crate re-exports from private modules (`mod raw; pub use raw::Query;`): a forbid of the
    defining file never matched `use crate::db::Query`. The finding keeps the name as written when a
    glob matches that, so a forbid of the whole folder reads as it did."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod db;\npub mod web;\n")
    repo.write("src/db/mod.rs", "mod raw;\npub use raw::Query;\npub struct Pool;\n")
    repo.write("src/db/raw.rs", "pub struct Query;\n")
    repo.write("src/web.rs", "pub fn get() {}\n")
    base = repo.commit("base")
    repo.write("src/web.rs", "use crate::db::{Pool, Query};\npub fn get() {}\n")
    repo.commit("web reaches into db")
    spec = {"type": "graph", "from": "src/web.rs", "forbid": ["src/db/raw.rs"]}
    assert texts(check_all(repo, spec, base=base)) == ["imports src/db/raw.Query"]
    assert texts(check_all(repo, {**spec, "forbid": ["rt.db.raw"]}, base=base)) == ["imports rt.db.raw.Query"]
    assert texts(check_all(repo, {**spec, "forbid": ["src/db/**"]}, base=base)) == [
        "imports src/db/mod.Pool",
        "imports src/db/mod.Query",
    ]


def test_an_import_of_several_names_is_one_finding_per_name_in_python_and_rust(tmp_path: Path) -> None:
    """Python's `from myapp.db import a, b` is two findings on its line; Rust's `use crate::db::{a, b}`
    is too, and `{self, …}` adds the module, as Python's `import myapp.db` would."""
    repo = GitRepo(tmp_path)
    repo.write("myapp/__init__.py", "")
    repo.write("myapp/db.py", "def raw():\n    pass\n\n\ndef safe():\n    pass\n")
    repo.write("myapp/views.py", "from myapp.db import raw, safe\n")
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod db;\npub mod views;\n")
    repo.write("src/db.rs", "pub fn raw() {}\npub fn safe() {}\n")
    repo.write("src/views.rs", "use crate::db::{raw, safe};\nuse crate::db::{self, raw as r};\n")
    repo.commit("both")
    python = {"type": "graph", "from": "myapp/views.py", "forbid": ["myapp.db"]}
    assert [(v.line, v.text) for v in check_all(repo, python, base=None).violations] == [
        (1, "imports myapp.db.raw"),
        (1, "imports myapp.db.safe"),
    ]
    rust = {"type": "graph", "from": "src/views.rs", "forbid": ["src/db.rs"]}
    assert [(v.line, v.text) for v in check_all(repo, rust, base=None).violations] == [
        (1, "imports src/db.raw"),
        (1, "imports src/db.safe"),
        (2, "imports src/db"),
        (2, "imports src/db.raw"),
    ]


def test_a_javascript_default_import_imports_the_module(tmp_path: Path) -> None:
    """`import db from` binds the module's default export: the violation names the module, as it did
    before named imports carried their members (and as Python's `import db` does), not `db.default`."""
    repo = GitRepo(tmp_path)
    repo.write("src/db/index.js", "export default function q() {}\nexport function rawQuery() {}\n")
    repo.write("src/web/api.js", "export function get() {}\n")
    base = repo.commit("base")
    repo.write(
        "src/web/api.js",
        "import db, { rawQuery } from '../db/index.js';\nimport moment from 'moment';\n"
        "import { default as dayjs } from 'dayjs';\nexport function get() { return db(moment(), dayjs()); }\n",
    )
    repo.commit("query straight from the handler")
    spec = {"type": "graph", "from": "src/web/**", "forbid": ["src/db/**", "moment", "dayjs"]}
    assert texts(check_all(repo, spec, base=base)) == [
        "imports src/db/index",
        "imports src/db/index.rawQuery",
        "imports moment",
        "imports dayjs",
    ]


def test_a_named_import_of_a_package_is_no_package_of_a_dotted_name(tmp_path: Path) -> None:
    """npm names hold dots: `lodash.get` and `lodash.merge` are packages of their own, which a team
    forbids in favour of lodash itself. `import { get } from 'lodash'` imports the package lodash,
    not one named `lodash.get`."""
    repo = GitRepo(tmp_path)
    repo.write("src/api.js", "export function get() {}\n")
    base = repo.commit("base")
    repo.write(
        "src/api.js",
        "import { get as pick, debounce } from 'lodash';\nimport merge from 'lodash.merge';\n"
        "export function read(o) { return merge(pick(o, 'a'), debounce); }\n",
    )
    repo.commit("lodash")
    spec = {"type": "graph", "from": "src/**", "forbid": ["lodash.*"]}
    assert texts(check_all(repo, spec, base=base)) == ["imports lodash.merge"]
    # one statement importing two names of a package is one import of the package: one finding
    assert texts(check_all(repo, {**spec, "forbid": ["lodash"]}, base=base)) == [
        "imports lodash",
        "imports lodash.merge",
    ]


def test_a_call_into_a_package_is_matched_by_the_package_as_its_import_is(tmp_path: Path) -> None:
    """`debounce()` after `import { debounce } from 'lodash'` calls lodash's own debounce: with `edges:
    calls` (or `both`), `forbid: lodash.*` matched it as the package lodash.debounce, which the import
    of the same name is not (see the test above)."""
    repo = GitRepo(tmp_path)
    repo.write("src/api.js", "export function read() {}\n")
    base = repo.commit("base")
    repo.write(
        "src/api.js",
        "import { get as pick, debounce } from 'lodash';\nimport merge from 'lodash.merge';\n"
        "const _ = require('lodash');\n"
        "export function read(o) { return merge(pick(o, 'a'), debounce(), _.map(o)); }\n",
    )
    repo.commit("lodash")
    spec = {"type": "graph", "from": "src/**", "forbid": ["lodash.*"], "edges": "calls"}
    assert texts(check_all(repo, spec, base=base)) == ["read calls lodash.merge"]
    assert texts(check_all(repo, {**spec, "edges": "both"}, base=base)) == [
        "imports lodash.merge",
        "read calls lodash.merge",
    ]
    assert texts(check_all(repo, {**spec, "forbid": ["lodash.debounce"]}, base=base)) == []
    assert sorted(texts(check_all(repo, {**spec, "forbid": ["lodash"]}, base=base))) == [
        "read calls lodash.debounce",
        "read calls lodash.get",
        "read calls lodash.map",
        "read calls lodash.merge",
    ]


def test_a_subpath_import_is_the_package_s_own_and_package_json_maps_it(tmp_path: Path) -> None:
    """`#db` is a file of the package through package.json's "imports": a change to that map alone
    changes what is imported; a `#` name mapped to no indexed file is matched by its members, not as
    an npm package. Both read `#db` as an npm package before."""
    repo = GitRepo(tmp_path)
    repo.write("package.json", '{"imports": {"#db": "./src/db/safe.js", "#gen/*": "./dist/*.js"}}')
    repo.write("src/db/safe.js", "export default function q() {}\n")
    repo.write("src/db/raw.js", "export default function q() {}\n")
    repo.write(
        "src/web/api.js", "import q from '#db';\nimport { made } from '#gen/x';\nexport const g = () => q(made());\n"
    )
    base = repo.commit("base")
    repo.write("package.json", '{"imports": {"#db": "./src/db/raw.js", "#gen/*": "./dist/*.js"}}')
    repo.commit("map #db to the raw queries")
    spec = {"type": "graph", "from": "src/web/**", "forbid": ["src/db/raw"]}
    assert texts(check_all(repo, spec, base=base)) == ["imports src/db/raw"]
    calls = {"type": "graph", "from": "src/web/**", "forbid": ["#gen/x.made"], "edges": "calls"}
    assert texts(check_all(repo, calls, base=None)) == ["g calls #gen/x.made"]


def test_graph_call_globs_written_with_colons_still_match_cpp_and_ruby_calls(tmp_path: Path) -> None:
    """A glob's `::` is read as a dot for Rust's paths; C++'s and Ruby's calls keep theirs
    (`std::system`, `Net::HTTP.get`), and `forbid: std::system` stopped matching them, silently."""
    repo = GitRepo(tmp_path)
    repo.write("src/main.cpp", "int main() { return 0; }\n")
    repo.write("lib/app.rb", "def fetch\nend\n")
    base = repo.commit("base")
    repo.write("src/main.cpp", '#include <cstdlib>\nint main() { std::system("ls"); return 0; }\n')
    repo.write("lib/app.rb", "def fetch\n  Net::HTTP.get('x')\nend\n")
    repo.commit("shell out, fetch")
    for written in ("std::system", "std.system", "std::*"):
        cpp = {"type": "graph", "from": "src/**", "forbid": [written], "edges": "calls"}
        assert texts(check_all(repo, cpp, base=base)) == ["main calls std::system"], written
    for written in ("Net::HTTP.get", "Net::HTTP*"):
        ruby = {"type": "graph", "from": "lib/**", "forbid": [written], "edges": "calls"}
        assert texts(check_all(repo, ruby, base=base)) == ["fetch calls Net::HTTP.get"], written


def test_graph_path_globs_do_not_read_go_import_paths_as_paths(tmp_path: Path) -> None:
    # Go's module `app/db` lives in db/, not app/: a glob over paths must not match the import path.
    repo = GitRepo(tmp_path)
    repo.write("go.mod", "module app\n\ngo 1.22\n")
    repo.write("db/db.go", "package db\n\nfunc Open() {}\n")
    repo.write("app/app.go", "package app\n")
    repo.write("cmd/tool/main.go", 'package main\n\nimport "app/db"\n\nfunc main() { db.Open() }\n')
    repo.commit("base")
    assert check_all(repo, {"type": "graph", "from": "cmd/**", "forbid": ["app/**"]}, base=None).violations == []
    assert texts(check_all(repo, {"type": "graph", "from": "cmd/**", "forbid": ["db/**"]}, base=None)) == [
        "imports app/db"
    ]


def test_graph_globs_name_go_packages_by_an_import_path_under_a_domain(tmp_path: Path) -> None:
    # `github.com/acme/tool/db` is the package in db/ (go.mod names the module); `doc/` imports the root one.
    repo = GitRepo(tmp_path)
    repo.write("go.mod", "module github.com/acme/tool\n\ngo 1.22\n")
    repo.write("tool.go", "package tool\n\nfunc Run() {}\n")
    repo.write("db/db.go", "package db\n\nfunc Open() {}\n")
    repo.write("doc/doc.go", 'package doc\n\nimport "github.com/acme/tool"\n\nfunc Gen() { tool.Run() }\n')
    repo.write("cmd/main.go", 'package main\n\nimport "github.com/acme/tool/db"\n\nfunc main() { db.Open() }\n')
    repo.commit("base")
    root = {"type": "graph", "from": "github.com/acme/tool/doc", "forbid": ["github.com/acme/tool"]}
    assert texts(check_all(repo, root, base=None)) == ["imports github.com/acme/tool"]
    below = {"type": "graph", "from": "cmd/**", "forbid": ["github.com/acme/tool/**"]}
    assert texts(check_all(repo, below, base=None)) == ["imports github.com/acme/tool/db"]
    # `x/**` is x and what is below it, as Go's `x/...`: the root package's own files too
    whole = {"type": "graph", "from": "github.com/acme/tool/**", "forbid": ["github.com/acme/tool/db/**"]}
    assert texts(check_all(repo, whole, base=None)) == ["imports github.com/acme/tool/db"]
    assert check_all(repo, {**whole, "from": "github.com/acme/tool/doc/**"}, base=None).warnings == []
    # a function of a package, as a call's target
    calls = {"type": "graph", "from": "cmd/**", "forbid": ["github.com/acme/tool/db.Open"], "edges": "calls"}
    assert texts(check_all(repo, calls, base=None)) == ["main calls github.com/acme/tool/db.Open"]
    other = {**calls, "forbid": ["github.com/acme/tool/db.Close"]}
    assert check_all(repo, other, base=None).violations == []


def test_graph_php_modules_follow_composer_json(tmp_path: Path) -> None:
    # A change to composer.json's PSR-4 prefixes renames modules: the check reads the whole head again.
    repo = GitRepo(tmp_path)
    repo.write("composer.json", '{"autoload": []}\n')  # valid for composer: nothing to load
    repo.write("legacy/Db.php", "<?php\nnamespace Legacy;\nclass Db {}\n")
    repo.write("app/Http.php", "<?php\nnamespace App;\nuse Legacy\\Db;\nclass Http {}\n")
    base = repo.commit("base")
    spec = {"type": "graph", "from": "app/**", "forbid": ["legacy/**"]}
    assert check_all(repo, spec, base=None).violations == []  # Legacy.Db names no indexed module yet
    repo.write("composer.json", '{"autoload": {"psr-4": {"App\\\\": "app/", "Legacy\\\\": "legacy/"}}}\n')
    repo.commit("autoload the legacy classes")
    assert texts(check_all(repo, spec, base=base)) == ["imports Legacy.Db"]


def test_graph_checks_read_csharp_namespaces_and_usings(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/Data/Db.cs", "namespace Acme.Data;\npublic class Db { public static void Open() {} }\n")
    repo.write("src/Web/Page.cs", "namespace Acme.Web;\nclass Page { void Render() {} }\n")
    base = repo.commit("base")
    repo.write(
        "src/Web/Page.cs", "using Acme.Data;\nnamespace Acme.Web;\nclass Page { void Render() { Db.Open(); } }\n"
    )
    repo.commit("render straight from the database")
    for forbid in ("Acme.Data", "src/Data/**"):
        spec = {"type": "graph", "from": "src/Web/**", "forbid": [forbid]}
        assert texts(check_all(repo, spec, base=base)) == ["imports Acme.Data"]
    calls = {"type": "graph", "from": "src/Web/**", "forbid": ["Acme.Data.Db.Open"], "edges": "calls"}
    assert texts(check_all(repo, calls, base=base)) == ["Page.Render calls Acme.Data.Db.Open"]


def test_a_file_moved_to_another_namespace_is_checked_again(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/Data/Db.cs", "namespace Acme.Data;\npublic class Db { }\n")
    repo.write("src/Tools/Page.cs", "using Acme.Data;\nnamespace Acme.Tools;\nclass Page { }\n")
    base = repo.commit("base")
    repo.write("src/Tools/Page.cs", "using Acme.Data;\nnamespace Acme.Web;\nclass Page { }\n")
    repo.commit("the page is the web's now")
    for spec in (
        {"type": "graph", "from": "Acme.Web", "forbid": ["Acme.Data"]},
        {"type": "graph", "from": "Acme.Web", "forbid": ["Acme.Data"], "indirect": True},
    ):
        assert texts(check_all(repo, spec, base=base)) == ["imports Acme.Data"], spec


def test_a_partial_graph_reads_the_types_of_the_namespaces_its_calls_see(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    for n in range(5):
        repo.write(f"src/Other{n}.cs", f"namespace Acme.Other{n} {{ class T{n} {{ void M() {{ }} }} }}\n")
    repo.write("src/Db.cs", "namespace Acme.Data { public class Db { public static void Open() { } } }\n")
    repo.write("src/Page.cs", "namespace Acme.Web { class Page { void R() { } } }\n")
    base = repo.commit("base")
    repo.write("src/Page.cs", "using Acme.Data;\nnamespace Acme.Web { class Page { void R() { Db.Open(); } } }\n")
    repo.commit("open the database")
    ctx = CheckContext(CodeIndex(repo.path, tmp_path / "index.sqlite"))
    ctx.set_change(base, "HEAD")
    graph = ctx.partial_graph("HEAD", frozenset({"src/Page.cs"}))
    assert [(c.callee, c.resolved) for c in graph.call_edges()] == [("Acme.Data.Db.Open", True)]
    assert sorted(ctx.snapshot("HEAD")._symbols) == ["src/Db.cs", "src/Page.cs"]  # no other file's read


def test_graph_calls_resolved_through_aliases(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    repo.write(
        "myapp/handlers/views.py",
        "from myapp.services import fetch\nimport myapp.db as d\n\n\n"
        "def index():\n    x = fetch()\n    return d.raw_query(x)\n",
    )
    repo.commit("call raw_query through an alias")
    spec = {"type": "graph", "from": "myapp.handlers.**", "forbid": ["myapp.db.raw_query"], "edges": "calls"}
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["index calls myapp.db.raw_query"]
    assert (ev.violations[0].path, ev.violations[0].line) == ("myapp/handlers/views.py", 7)
    # indirect calls: index -> fetch -> safe -> raw_query, already at the base
    spec_indirect = {**spec, "indirect": True}
    ev = check_all(repo, spec_indirect, base=None)
    assert sorted(texts(ev)) == ["index calls myapp.db.raw_query"]
    repo.git("checkout", "-q", base)
    ev = check_all(repo, spec_indirect, base=None)
    assert texts(ev) == ["index calls myapp.db.raw_query"]
    assert "myapp.services.fetch -> myapp.db.safe" in ev.violations[0].message


def test_graph_require(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    spec = {"type": "graph", "from": "myapp/handlers/**", "require": ["myapp.services"]}
    ev = check_all(repo, spec, base=base)
    assert ev.violations == [] and ev.passing == [ev.passing[0]]
    repo.write("myapp/handlers/views.py", "def index():\n    return 1\n")
    repo.commit("drop the service layer")
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["requires myapp/handlers/** imports myapp.services"]
    assert ev.violations[0].path is None
    # indirect require: handlers reach myapp.db only through services
    spec = {"type": "graph", "from": "myapp/handlers/**", "require": ["myapp.db"], "indirect": True}
    assert check_all(repo, spec, base=base, head=base).violations == []
    assert check_all(repo, {**spec, "indirect": False}, base=None, head=base).violations != []


# --- dependency -----------------------------------------------------------------------------------

PYPROJECT = '[project]\nname = "shop"\nversion = "1"\ndependencies = ["requests>=2"]\n'


def uv_lock(version: str) -> str:
    return textwrap.dedent(f'''\
        version = 1

        [[package]]
        name = "certifi"
        version = "2024.8.30"

        [[package]]
        name = "requests"
        version = "{version}"
        source = {{ registry = "https://pypi.org/simple" }}
    ''')


def test_dependency_bump_into_forbidden_range_in_lockfile(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("uv.lock", uv_lock("2.32.3"))
    base = repo.commit("deps")
    repo.git("checkout", "-q", "-b", "bump")
    repo.write("uv.lock", uv_lock("3.0.1"))
    repo.commit("bump requests")
    spec = {"type": "dependency", "ecosystem": "pypi", "package": "Requests", "forbid": ">=3"}
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["pypi/requests locked in forbidden range >=3"]
    v = ev.violations[0]
    assert (v.path, v.line) == ("uv.lock", 9) and "3.0.1" in v.message
    assert check_all(repo, spec, base=None, head=base).passing  # 2.32.3 at the base passes
    # a further bump inside the forbidden range is not new
    repo.write("uv.lock", uv_lock("3.1.0"))
    second = repo.commit("bump again")
    assert check_all(repo, spec, base="HEAD~1", head=second).violations == []
    # a change that touches no manifest does not even look at the base
    repo.write("README.md", "hi\n")
    assert check_all(repo, spec, base="HEAD", head=repo.commit("docs")).violations == []


def test_dependency_require_and_declared_ranges(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("requirements.txt", "requests<2\nflask>=3.1\n")
    head = repo.commit("deps")
    req = {"type": "dependency", "ecosystem": "pypi", "package": "requests", "require": ">=2.31,<3"}
    ev = check_all(repo, req, base=None, head=head)
    assert texts(ev) == ["pypi/requests declared outside required range >=2.31,<3"]
    assert (ev.violations[0].path, ev.violations[0].line) == ("requirements.txt", 1)
    missing = {"type": "dependency", "ecosystem": "pypi", "package": "httpx", "require": ">=0.27"}
    assert texts(check_all(repo, missing, base=None)) == ["pypi/httpx missing, required >=0.27"]
    forbid = {"type": "dependency", "ecosystem": "pypi", "package": "flask", "forbid": ">=3"}
    assert texts(check_all(repo, forbid, base=None)) == ["pypi/flask declared in forbidden range >=3"]
    allows = {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": ">=1"}
    # "<2" admits 1.x (forbidden) and 0.x (allowed): the locked version would decide, there is none
    assert check_all(repo, allows, base=None).violations == []


def test_dependency_npm_lockfile(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("package.json", '{"name": "web", "dependencies": {"lodash": "^4.17.0"}}\n')
    lock = (
        '{"name": "web", "lockfileVersion": 3, "packages": {"": {"dependencies": {"lodash": "^4.17.0"}},\n'
        ' "node_modules/lodash": {"version": "VERSION"}}}\n'
    )
    repo.write("package-lock.json", lock.replace("VERSION", "4.17.21"))
    base = repo.commit("deps")
    repo.write("package-lock.json", lock.replace("VERSION", "4.17.20"))
    repo.commit("downgrade")
    spec = {"type": "dependency", "ecosystem": "npm", "package": "lodash", "require": ">=4.17.21"}
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["npm/lodash locked outside required range >=4.17.21"]
    assert ev.violations[0].path == "package-lock.json"


def test_dependency_toolchain(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write(".nvmrc", "18\n")
    base = repo.commit("deps")
    repo.write(".nvmrc", "16\n")
    repo.commit("downgrade")
    node = {"type": "dependency", "ecosystem": "toolchain", "package": "node", "forbid": "<18"}
    ev = check_all(repo, node, base=base)
    assert texts(ev) == ["toolchain/node locked in forbidden range <18"]
    assert ev.violations[0].path == ".nvmrc"


def test_dependency_action_named_as_github_spells_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    workflow = "jobs:\n  ci:\n    steps:\n      - uses: Swatinem/rust-cache@{}\n"
    repo.write(".github/workflows/ci.yml", workflow.format("v2"))
    base = repo.commit("ci")
    repo.write(".github/workflows/ci.yml", workflow.format("v3"))
    repo.commit("bump")
    spec = {"type": "dependency", "ecosystem": "actions", "package": "Swatinem/rust-cache", "forbid": ">=3"}
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["actions/swatinem/rust-cache locked in forbidden range >=3"]
    assert (ev.violations[0].path, ev.violations[0].line) == (".github/workflows/ci.yml", 4)


# --- ast-grep -------------------------------------------------------------------------------------


def test_ast_grep_new_existing_and_moved(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/a.py", "def f(x):\n    return eval(x)\n")
    repo.write("src/b.py", "def g():\n    return 1\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("src/a.py", "import os\n\n\ndef f(x):\n    y = 2\n    return eval( x )\n")  # moved, re-spaced
    repo.write("src/b.py", "def g(data):\n    return eval(data)\n")  # new
    repo.commit("feature")
    ev = check_all(repo, NO_EVAL, base=base)
    assert [(v.path, v.line, v.text, v.message) for v in ev.violations] == [
        ("src/b.py", 2, "eval(data)", "eval of data")
    ]
    assert ev.baseline == 1
    assert ev.failing and not ev.passing
    ev = check_all(repo, NO_EVAL, base=None)
    assert sorted((v.path, v.text) for v in ev.violations) == [("src/a.py", "eval( x )"), ("src/b.py", "eval(data)")]
    # a second eval of the same text in the same file is new (multiset), a removed one is not
    repo.write("src/b.py", "def g(data):\n    return eval(data) + eval(data)\n")
    repo.commit("twice")
    assert texts(check_all(repo, NO_EVAL, base="HEAD~1")) == ["eval(data)"]
    # diff-aware, nothing found in the changed files: the verdict for the whole head is unknown
    repo.write("src/c.py", "X = 1\n")
    ev = check_all(repo, NO_EVAL, base="HEAD", head=repo.commit("c"))
    assert ev.violations == [] and ev.unknown and not ev.passing and not ev.failing


def test_ast_grep_relational_rule_files_and_rename(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("app/service.py", "def run():\n    print('x')\n")
    repo.write("scripts/tool.py", "def main():\n    print('ok')\n")
    base = repo.commit("base")
    spec = {
        "type": "ast-grep",
        "language": "py",
        "files": ["app/**"],
        "rule": {"pattern": "print($$$A)", "inside": {"kind": "function_definition", "stopBy": "end"}},
        "message": "print($$$A) in app code",
    }
    ev = check_all(repo, spec, base=None)
    assert [(v.path, v.message) for v in ev.violations] == [("app/service.py", "print('x') in app code")]
    repo.mv("app/service.py", "app/services.py")  # a rename keeps the violation old
    repo.commit("rename")
    assert check_all(repo, spec, base=base).violations == []


def test_ast_grep_parallel_workers_give_the_same_result(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    for i in range(80):
        body = "eval(x)" if i % 7 == 0 else "x"
        repo.write(f"pkg/m{i:02}.py", f"def f{i}(x):\n    return {body}\n")
    repo.commit("many files")
    serial = check_all(repo, NO_EVAL, base=None, workers=1)
    parallel = check_all(repo, NO_EVAL, base=None, workers=2)
    assert [(v.path, v.line, v.text) for v in serial.violations] == [
        (v.path, v.line, v.text) for v in parallel.violations
    ]
    assert len(serial.violations) == 12


def test_ast_grep_results_are_cached_per_rule_and_blob(tmp_path: Path) -> None:
    import sqlite3

    repo = GitRepo(tmp_path)
    repo.write("a.py", "eval(x)\n")
    repo.write("b.py", "y = 1\n")
    repo.commit("files")
    first = check_all(repo, NO_EVAL, base=None)
    db = repo.path / ".git" / "comind" / "checks.sqlite"
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM astgrep").fetchone()[0]
    assert rows == 2  # one rule × two blobs (the one without a match too)
    repo.mv("a.py", "moved.py")  # same blob under another path: read from the cache
    repo.commit("move")
    second = check_all(repo, NO_EVAL, base=None)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM astgrep").fetchone()[0] == rows
    assert [(v.path, v.text) for v in first.violations] == [("a.py", "eval(x)")]
    assert [(v.path, v.line, v.text, v.message) for v in second.violations] == [("moved.py", 1, "eval(x)", "eval of x")]
    other = check_all(repo, {**NO_EVAL, "message": "no eval"}, base=None)  # another rule: matched again
    assert [v.message for v in other.violations] == ["no eval"]
    assert sqlite3.connect(db).execute("SELECT count(*) FROM astgrep").fetchone()[0] == 2 * rows


# --- test -----------------------------------------------------------------------------------------

TESTS = textwrap.dedent("""\
    def test_revocation():
        assert 1 + 1 == 2


    class TestTokens:
        def test_expiry(self):
            assert True
""")


def test_test_check_existence(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("tests/test_auth.py", TESTS)
    base = repo.commit("tests")
    specs = [
        {"type": "test", "test": "tests/test_auth.py::test_revocation"},
        {"type": "test", "test": "tests/test_auth.py::TestTokens::test_expiry[param-1]"},
    ]
    ev = check_all(repo, specs, base=None)
    assert ev.violations == [] and len(ev.passing) == 2
    repo.git("checkout", "-q", "-b", "drop")
    repo.write("tests/test_auth.py", "class TestTokens:\n    def test_expiry(self):\n        assert True\n")
    repo.commit("drop a test")
    ev = check_all(repo, specs, base=base)
    assert texts(ev) == ["test tests/test_auth.py::test_revocation missing"]
    assert ev.violations[0].path == "tests/test_auth.py"


def test_test_check_runs_at_head_only(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("tests/test_auth.py", TESTS)
    base = repo.commit("tests")
    spec = {"type": "test", "test": "tests/test_auth.py::test_revocation", "run": True, "timeout": 120}
    ev = check_all(repo, spec, base=None)
    assert ev.violations == [] and ev.passing
    repo.write("tests/test_auth.py", TESTS.replace("1 + 1 == 2", "1 + 1 == 3"))
    repo.commit("break it")
    ev = check_all(repo, spec, base=base)
    assert texts(ev) == ["test tests/test_auth.py::test_revocation fails"]
    assert ev.violations[0].head_only and "fails" in ev.violations[0].message
    # a failure on the base too is no excuse: the run is at head only
    ev = check_all(repo, spec, base="HEAD")
    assert texts(ev) == ["test tests/test_auth.py::test_revocation fails"]
    # a work tree that is not at head: not run, a warning, verdict unknown
    ev = check_all(repo, spec, base=None, head=base)
    assert ev.violations == [] and ev.unknown and any("not run" in w for w in ev.warnings)


# --- semgrep --------------------------------------------------------------------------------------

SEMGREP_RULE = {
    "type": "semgrep",
    "rule": {
        "id": "no-eval",
        "languages": ["python"],
        "pattern": "eval(...)",
        "message": "eval() is forbidden",
        "severity": "ERROR",
    },
}


def test_semgrep_file_selection_follows_languages_files_and_rule_paths() -> None:
    check = compile_check(
        "",
        {
            "type": "semgrep",
            "ignores": ["vendor/**"],
            "rule": {
                "id": "x",
                "languages": ["python"],
                "pattern": "eval(...)",
                "paths": {"include": ["tests", "src/app/"], "exclude": ["*_slow.py"]},
            },
        },
    )
    assert check.wants("tests/test_a.py") and check.wants("pkg/tests/test_b.py") and check.wants("src/app/x.py")
    assert not check.wants("src/lib/x.py")  # not included
    assert not check.wants("tests/test_c_slow.py")  # excluded
    assert not check.wants("tests/data.json")  # not a Python file
    assert not check.wants("vendor/tests/t.py")  # ignored by the check
    generic = compile_check("", {"type": "semgrep", "rule": {"id": "g", "languages": ["generic"], "pattern": "TODO"}})
    assert generic.wants("docs/notes.txt") and generic.wants("Makefile")


def semgrep_repo(tmp_path: Path) -> tuple[GitRepo, str]:
    repo = GitRepo(tmp_path)
    repo.write("src/a.py", "def f(x):\n    return eval(x)\n")
    repo.write("tests/test_a.py", "def test_a():\n    assert 1\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("src/a.py", "import os\n\n\ndef f(x):\n    return eval(x)\n")
    repo.write("tests/test_a.py", "def test_a():\n    assert eval('1')\n")
    repo.commit("feature")
    return repo, base


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_semgrep_not_installed_is_a_warning_never_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, base = semgrep_repo(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("COMIND_SEMGREP", "semgrep")  # look on PATH only, not next to this Python
    for b in (base, None):
        ev = check_all(repo, [SEMGREP_RULE, SEMGREP_RULE], base=b)
        assert ev.violations == [] and ev.passing == [] and len(ev.unknown) == 2
        assert len(ev.findings) == 2 and all(  # a finding each: an unchecked constraint is no pass
            f.type == "not_run" and "did not run: semgrep is not installed" in f.message for f in ev.findings
        )


def test_semgrep_hanging_is_a_timeout_warning(tmp_path: Path) -> None:
    repo, base = semgrep_repo(tmp_path)
    fake = executable(tmp_path / "bin" / "semgrep", "#!/bin/sh\nsleep 60\n")
    ev = check_all(repo, SEMGREP_RULE, base=base, semgrep=str(fake), semgrep_timeout=1)
    assert ev.violations == [] and ev.unknown
    [finding] = ev.findings
    assert finding.type == "not_run" and finding.message.startswith(
        f"The semgrep check of constraint {ev.unknown[0][-8:]} ("
    )
    assert "did not run: semgrep timed out after 1 s." in finding.message


def test_semgrep_rule_error_names_the_record(tmp_path: Path) -> None:
    """A rule error as semgrep reports it (exit 2, JSON errors) is the constraint's CheckError."""
    repo, base = semgrep_repo(tmp_path)
    report = (
        '{"version": "1.185.0", "results": [], "errors": [{"code": 2, "level": "error", '
        '"type": "Rule parse error", "rule_id": "r1", "message": "Invalid pattern for Python"}], '
        '"paths": {"scanned": []}}'
    )
    fake = executable(tmp_path / "bin" / "semgrep", f"#!/bin/sh\necho '{report}'\nexit 2\n")
    good, bad = constraint(SEMGREP_RULE), constraint(SEMGREP_RULE, title="Second rule")
    with pytest.raises(CheckError) as err:
        check_all(repo, [], records=[good, bad], base=base, semgrep=str(fake))
    assert err.value.record_id == bad.id and "Invalid pattern for Python" in str(err.value)
    assert str(err.value).startswith(f"constraint {bad.id[-8:]}: check.rule: semgrep rejects the rule")


needs_semgrep = pytest.mark.skipif(find_semgrep() is None, reason="semgrep is not installed")


@needs_semgrep
def test_semgrep_real_run_one_invocation_for_base_and_head(tmp_path: Path) -> None:
    repo, base = semgrep_repo(tmp_path)
    real = find_semgrep()
    log = tmp_path / "calls.log"
    wrapper = executable(tmp_path / "bin" / "semgrep", f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    other = {
        "type": "semgrep",
        "rule": {
            "id": "no-os",
            "languages": ["python"],
            "pattern": "import os",
            "message": "no os",
            "severity": "WARNING",
        },
    }
    ev = check_all(repo, [SEMGREP_RULE, other], base=base, semgrep=str(wrapper))
    assert len(log.read_text().splitlines()) == 1  # one invocation: both rules, base and head
    found = sorted((v.rule, v.path, v.line, v.text, v.message) for v in ev.violations)
    assert found == [
        ("no-eval", "tests/test_a.py", 2, "eval('1')", "eval() is forbidden"),
        ("no-os", "src/a.py", 1, "import os", "no os"),
    ]
    assert ev.baseline == 1  # src/a.py's eval(x) moved: not new (tests/ was scanned: empty .semgrepignore)
    ev = check_all(repo, SEMGREP_RULE, base=None, semgrep=str(wrapper))
    assert sorted(v.path for v in ev.violations) == ["src/a.py", "tests/test_a.py"] and ev.failing


@needs_semgrep
def test_semgrep_real_rule_error(tmp_path: Path) -> None:
    repo, _ = semgrep_repo(tmp_path)
    bad = {
        "type": "semgrep",
        "rule": {"id": "bad", "languages": ["python"], "pattern": "eval(", "message": "x", "severity": "ERROR"},
    }
    record = constraint(bad)
    with pytest.raises(CheckError) as err:
        check_all(repo, [], records=[constraint(SEMGREP_RULE), record], base=None)
    assert err.value.record_id == record.id and "semgrep rejects the rule" in str(err.value)


# --- broken specs ---------------------------------------------------------------------------------

BROKEN: list[tuple[Any, str]] = [
    ("graph", "check: expected a mapping with a type, got 'graph'"),
    ({"from": "a"}, "check.type: unknown check type nothing; known types: graph, dependency, ast-grep, semgrep, test"),
    ({"type": "lint"}, "check.type: unknown check type 'lint'; known types: graph"),
    (
        {"type": "graph", "from": "myapp", "forbid": ["myapp..db"]},
        'check.forbid[0]: expected a module glob like "myapp.db.*" (dotted names, * or **)',
    ),
    ({"type": "graph", "from": "myapp", "forbid": [3]}, 'check.forbid[0]: expected a module glob like "myapp.db.*"'),
    ({"type": "graph", "from": "myapp"}, "check: a graph check needs forbid: or require:"),
    ({"type": "graph", "from": [], "forbid": "a"}, "check.from: expected a list of module globs like"),
    (
        {"type": "graph", "from": "a", "forbid": "b", "edges": "imports+calls"},
        "check.edges: expected one of imports, calls, both",
    ),
    ({"type": "graph", "from": "a", "forbid": "b", "bogus": 1}, "check.bogus: unknown field (known: "),
    (
        {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": ">=>3"},
        "check.forbid: expected a pypi version range like",
    ),
    (
        {"type": "dependency", "ecosystem": "maven", "package": "x", "forbid": "1"},
        "check.ecosystem: expected one of pypi, npm, go, cargo",
    ),
    ({"type": "dependency", "ecosystem": "npm", "package": "x"}, "check: a dependency check needs forbid: or require:"),
    ({"type": "ast-grep", "language": "cobol", "rule": {"pattern": "x"}}, "check.language: unknown ast-grep language"),
    (
        {"type": "ast-grep", "language": "python", "rule": {"kind": "functoin_definition"}},
        "check.rule: the ast-grep rule does not compile: cannot get matcher",
    ),
    (
        {"type": "ast-grep", "language": "python", "rule": {"patern": "x"}},
        "check.rule: the ast-grep rule does not compile: unknown field `patern`",
    ),
    (
        {"type": "ast-grep", "language": "python", "rule": {"pattern": "def ("}},
        "check.rule.pattern: the pattern 'def (' is not valid python",
    ),
    (
        {"type": "ast-grep", "language": "python", "rule": {"all": [{"kind": "call"}, {"has": {"pattern": "f(("}}]}},
        "check.rule.all[1].has.pattern: the pattern 'f((' is not valid python",
    ),
    (
        {
            "type": "ast-grep",
            "language": "python",
            "rule": {"pattern": "eval($X)"},
            "constraints": {"X": {"regex": "("}},
        },
        "check.constraints: the ast-grep rule does not compile",
    ),
    ({"type": "ast-grep", "language": "python", "rule": "eval($X)"}, "check.rule: expected a mapping, got 'eval($X)'"),
    ({"type": "semgrep", "rule": {"id": "x", "pattern": "eval(...)"}}, "check.rule.languages: expected a list"),
    ({"type": "semgrep", "rule": {"id": "x", "languages": ["python"]}}, "check.rule: a semgrep rule needs one of"),
    ({"type": "test", "test": "/abs/test_x.py::t"}, "check.test: expected a test node like"),
    ({"type": "test", "test": "tests/test_x.py::not a name"}, "check.test: expected path::function"),
    ({"type": "test", "test": "tests/test_x.go::TestX", "run": True}, "check.run: run: true runs pytest"),
    ({"type": "test", "test": "tests/test_x.py::t", "timeout": -1}, "check.timeout: expected a positive number"),
]


@pytest.mark.parametrize(("spec", "message"), BROKEN)
def test_broken_specs_are_clear_check_errors(spec: Any, message: str) -> None:
    record_id = "0190f0f0-0000-7000-8000-00000000abcd"
    with pytest.raises(CheckError) as err:
        compile_check(record_id, spec)
    assert str(err.value).startswith(f"constraint 0000abcd: {message}"), str(err.value)
    assert err.value.exit_code == 2 and err.value.record_id == record_id


def test_registry_lists_every_type() -> None:
    assert list(CHECK_TYPES) == ["graph", "dependency", "ast-grep", "semgrep", "test"]
    for name, cls in CHECK_TYPES.items():
        assert issubclass(cls, Check) and cls.type == name and cls.fields


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(
        [
            "graph",
            "dependency",
            "ast-grep",
            "semgrep",
            "test",
            "python",
            "pypi",
            "eval($X)",
            "def (",
            "a.b.*",
            "**",
            "x/**",
            "kind",
            ">=3",
            "^1",
            "tests/t.py::t",
            "rule",
            "pattern",
            "imports",
            "calls",
        ]
    )
)
keys = st.sampled_from(
    [
        "type",
        "from",
        "forbid",
        "require",
        "edges",
        "indirect",
        "ecosystem",
        "package",
        "language",
        "rule",
        "constraints",
        "utils",
        "files",
        "ignores",
        "test",
        "run",
        "timeout",
        "pattern",
        "kind",
        "has",
        "inside",
        "any",
        "all",
        "not",
        "regex",
        "languages",
        "id",
        "message",
        "paths",
        "include",
        "stopBy",
    ]
) | st.text(max_size=6)
values = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5), max_leaves=20
)
specs = st.fixed_dictionaries(
    {"type": st.sampled_from(["graph", "dependency", "ast-grep", "semgrep", "test"])},
    optional={
        k: values
        for k in [
            "from",
            "forbid",
            "require",
            "edges",
            "indirect",
            "ecosystem",
            "package",
            "language",
            "rule",
            "constraints",
            "utils",
            "files",
            "test",
            "run",
            "timeout",
            "id",
            "message",
            "paths",
        ]
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(specs, values, st.dictionaries(keys | st.integers(), values, max_size=6)))
def test_garbage_into_compile_check_only_raises_check_error(spec: Any) -> None:
    try:
        check = compile_check("0190f0f0-0000-7000-8000-00000000abcd", spec)
    except CheckError as exc:
        assert str(exc).startswith("constraint 0000abcd: check")
    else:
        assert isinstance(check, Check)
