"""Import graph and call graph of a revision; the Python edges are checked against grimp."""

from __future__ import annotations

import importlib
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import grimp
import pytest
from gitrepo import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comind.codeindex import CodeIndex
from comind.graph import CallEdge, ImportGraph, psr4_prefixes


def graph_of(repo: GitRepo, tmp_path: Path) -> ImportGraph:
    return ImportGraph(CodeIndex(repo.path, tmp_path / "index.sqlite").snapshot("HEAD"))


def test_python_modules_edges_and_calls(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/myapp/__init__.py", "")
    repo.write("src/myapp/db.py", "def raw_query(sql):\n    return sql\n\n\ndef safe():\n    return raw_query('1')\n")
    repo.write("src/myapp/handlers/__init__.py", "from . import views\n")
    repo.write(
        "src/myapp/handlers/views.py",
        textwrap.dedent("""\
        import os
        import myapp.db as d
        from myapp.db import raw_query as rq
        from ..db import safe
        import myapp.db


        def index(request):
            d.raw_query(request)
            rq("x")
            myapp.db.raw_query("y")
            os.path.join("a", "b")
            return helper() + safe()


        def helper():
            return 1


        class View:
            def get(self):
                return self.render()

            def render(self):
                def inner():
                    return 2
                return inner()
    """),
    )
    repo.write("scripts/run.py", "from myapp.handlers import views\nviews.index(None)\n")
    repo.commit("app")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/myapp/handlers/views.py") == "myapp.handlers.views"
    assert g.module_of("src/myapp/__init__.py") == "myapp"
    assert g.module_of("scripts/run.py") == "run"
    assert g.path_of("myapp.db") == "src/myapp/db.py"
    assert g.edges() == {
        ("myapp.handlers", "myapp.handlers.views"),
        ("myapp.handlers.views", "myapp.db"),
        ("run", "myapp.handlers.views"),
    }
    assert g.imports_of("myapp.handlers.views") == {"myapp.db", "os"}
    assert ("myapp.handlers.views", "os") in g.edges(external=True)
    assert g.importers_of("myapp.db") == {"myapp.handlers.views"}
    assert g.path("run", "myapp.db") == ["run", "myapp.handlers.views", "myapp.db"]
    assert g.path("myapp.db", "run") is None

    calls = {(c.caller, c.callee, c.resolved) for c in g.calls_from("myapp.handlers.views")}
    index = "myapp.handlers.views.index"
    assert {
        (index, "myapp.db.raw_query", True),
        (index, "os.path.join", True),
        (index, "myapp.handlers.views.helper", True),
        (index, "myapp.db.safe", True),
    } <= calls
    assert sum(1 for c in calls if c[1] == "myapp.db.raw_query") == 1  # three spellings, one callee
    assert ("myapp.handlers.views.View.get", "myapp.handlers.views.View.render", True) in calls
    assert ("myapp.handlers.views.View.render", "myapp.handlers.views.View.render.inner", True) in calls
    assert CallEdge("run", "myapp.handlers.views.index", "scripts/run.py", 2, True) in g.call_edges()
    assert ("myapp.db.safe", "myapp.db.raw_query", True) in {
        (c.caller, c.callee, c.resolved) for c in g.calls_from("myapp.db")
    }


def test_a_src_layout_namespace_package_is_part_of_its_modules_names(tmp_path: Path) -> None:
    # PEP 420: `src/` is the import root, so `src/acme/` is package `acme` without an __init__.py
    repo = GitRepo(tmp_path)
    repo.write("src/acme/db/__init__.py", "def raw_query(sql):\n    return sql\n")
    repo.write("src/acme/web/__init__.py", "")
    repo.write("src/acme/web/views.py", "from acme.db import raw_query\n\n\ndef index():\n    return raw_query('1')\n")
    repo.write("src/acme/cli.py", "import acme.web.views\n")
    repo.write("src/my-tool/run.py", "import acme.cli\n")  # no identifier: no package, as Python reads it
    repo.write("tools/gen/make.py", "import acme.db\n")  # outside `src/`: a folder is no namespace package
    repo.write("src/main/python/pkg/__init__.py", "")  # a deeper root below src/ keeps its own names
    repo.write("src/main/python/pkg/x.py", "import pkg\n")
    repo.commit("app")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/acme/web/views.py") == "acme.web.views"
    assert g.module_of("src/acme/cli.py") == "acme.cli"
    assert g.module_of("src/acme/db/__init__.py") == "acme.db"
    assert g.module_of("src/my-tool/run.py") == "run"
    assert g.module_of("tools/gen/make.py") == "make"
    assert g.module_of("src/main/python/pkg/x.py") == "pkg.x"
    assert g.edges() == {
        ("acme.web.views", "acme.db"),
        ("acme.cli", "acme.web.views"),
        ("run", "acme.cli"),
        ("make", "acme.db"),
        ("pkg.x", "pkg"),
    }


def test_javascript_and_typescript_resolution(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/db/index.ts", "export function rawQuery(sql: string) { return sql; }\n")
    repo.write("src/util.js", "export default function fmt(x) { return String(x); }\n")
    repo.write("src/esm.ts", "export const twice = (n: number) => n * 2;\n")
    repo.write(
        "src/api/handler.ts",
        textwrap.dedent("""\
        import { rawQuery as rq } from "../db";
        import fmt from "../util.js";
        import * as esm from "../esm.js";
        import express from "express";
        const path = require("node:path");
        export function handle(req: string) {
          rq(req);
          esm.twice(2);
          path.join("a");
          express.json();
          return fmt(express());
        }
    """),
    )
    repo.write("src/api/view.tsx", 'import { handle } from "./handler";\nexport const V = () => handle("x");\n')
    repo.commit("js")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/db/index.ts") == "src/db/index"
    assert g.edges() == {
        ("src/api/handler", "src/db/index"),
        ("src/api/handler", "src/util"),
        ("src/api/handler", "src/esm"),
        ("src/api/view", "src/api/handler"),
    }
    assert {"express", "node:path"} <= g.imports_of("src/api/handler")
    calls = {(c.caller, c.callee) for c in g.calls_from("src/api/handler.handle")}
    assert calls == {
        ("src/api/handler.handle", "src/db/index.rawQuery"),
        ("src/api/handler.handle", "src/esm.twice"),
        ("src/api/handler.handle", "node:path.join"),
        ("src/api/handler.handle", "src/util"),  # a default import binds the module, as `require` does
        ("src/api/handler.handle", "express"),
        ("src/api/handler.handle", "express.json"),
    }
    assert ("src/api/view.V", "src/api/handler.handle") in {(c.caller, c.callee) for c in g.call_edges()}
    assert g.path("src/api/view", "src/db/index") == ["src/api/view", "src/api/handler", "src/db/index"]


def test_javascript_subpath_imports_resolve_through_the_nearest_package_json(tmp_path: Path) -> None:
    """`import x from '#internal/util'` names a file of the package through package.json's "imports"
    map (a pattern, a condition object; the nearest package.json's); one mapping to no indexed file is
    still the package's own, never an npm package. All three were npm packages before."""
    repo = GitRepo(tmp_path)
    repo.write(
        "package.json",
        '{"name": "app", "imports": {"#internal/*": "./src/internal/*.js", "#gen": "./dist/gen.js",'
        ' "#db": {"types": "./types/db.d.ts", "node": "./src/db/index.ts", "default": "./dist/db.js"}}}',
    )
    repo.write("src/internal/util.ts", "export function fmt(x: string) { return x; }\n")
    repo.write("src/db/index.ts", "export default function db() {}\n")
    repo.write(
        "src/web/api.ts",
        "import { fmt } from '#internal/util';\nimport db from '#db';\nimport { made } from '#gen';\n"
        "export function get() { fmt('a'); db(); made(); }\n",
    )
    repo.write("packages/lib/package.json", '{"imports": {"#u": "./u.js"}}')
    repo.write("packages/lib/u.js", "export const u = 1;\n")
    repo.write("packages/lib/a.js", "import { u } from '#u';\n")
    repo.commit("subpaths")
    g = graph_of(repo, tmp_path)
    assert g.edges() == {
        ("src/web/api", "src/internal/util"),
        ("src/web/api", "src/db/index"),
        ("packages/lib/a", "packages/lib/u"),
    }
    gen = [e for e in g.import_edges() if e.imported == "#gen"]
    assert [(e.internal, e.names) for e in gen] == [(False, ("#gen.made",))]  # a member, as the tree's own name
    calls = {(c.callee, c.resolved, c.package) for c in g.calls_from("src/web/api.get")}
    assert calls == {("src/internal/util.fmt", True, ""), ("src/db/index", True, ""), ("#gen.made", True, "")}


def test_go_packages_from_go_mod(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("go.mod", "module example.com/shop\n\ngo 1.22\n\nrequire github.com/lib/pq v1.10.9\n")
    repo.write("internal/db/db.go", "package db\n\nfunc Open() int { return 1 }\n")
    repo.write(
        "cmd/server/main.go",
        textwrap.dedent("""\
        package main

        import (
        \t"fmt"
        \tstore "example.com/shop/internal/db"
        \t"github.com/lib/pq/v2"
        \t"gopkg.in/yaml.v3"
        \t"github.com/mattn/go-sqlite3"
        )

        func main() {
        \tfmt.Println(store.Open())
        \tpq.Connect()
        \tyaml.Marshal(sqlite3.Version())
        \tstart()
        }

        func start() {}
    """),
    )
    repo.commit("go")
    g = graph_of(repo, tmp_path)
    assert g.module_of("cmd/server/main.go") == "example.com/shop/cmd/server"
    assert g.edges() == {("example.com/shop/cmd/server", "example.com/shop/internal/db")}
    assert g.imports_of("example.com/shop/cmd/server") == {
        "fmt",
        "example.com/shop/internal/db",
        "github.com/lib/pq/v2",
        "gopkg.in/yaml.v3",
        "github.com/mattn/go-sqlite3",
    }
    calls = {c.callee for c in g.calls_from("example.com/shop/cmd/server.main")}
    assert calls == {
        "fmt.Println",
        "example.com/shop/internal/db.Open",
        "github.com/lib/pq/v2.Connect",
        "gopkg.in/yaml.v3.Marshal",
        "github.com/mattn/go-sqlite3.Version",
        "example.com/shop/cmd/server.start",
    }


def test_java_and_rust_modules(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/main/java/com/acme/db/Db.java", "package com.acme.db;\npublic class Db { }\n")
    repo.write(
        "src/main/java/com/acme/web/Api.java",
        textwrap.dedent("""\
        package com.acme.web;
        import com.acme.db.Db;
        import java.util.List;
        class Api { void go() { Db.query(); } }
    """),
    )
    repo.write("src/lib.rs", "use std::io;\nfn main() { io::stdout(); }\n")
    repo.commit("jvm")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/main/java/com/acme/web/Api.java") == "com.acme.web.Api"
    assert g.edges() == {("com.acme.web.Api", "com.acme.db.Db")}
    assert "java.util.List" in g.imports_of("com.acme.web.Api")
    assert ("com.acme.web.Api.Api.go", "com.acme.db.Db.query") in {
        (c.caller, c.callee) for c in g.call_edges() if c.resolved
    }
    assert g.imports_of("src/lib") == {"std.io"}  # another crate's path, with dots as module globs write it


def test_rust_use_paths_resolve_to_the_crates_module_files(tmp_path: Path) -> None:
    """`crate::`, `self::`, `super::`, a child module and a workspace package by its crate name name
    the files of their modules; a `use` of another crate stays external. Every Rust edge was external
    before, so a graph check over Rust could never fail."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[workspace]\nmembers = ["core-lib", "app"]\n')
    repo.write("core-lib/Cargo.toml", '[package]\nname = "core-lib"\nversion = "0.1.0"\n\n[dependencies]\nname = "x"\n')
    repo.write("core-lib/src/lib.rs", "pub mod db;\npub mod net;\n")
    repo.write("core-lib/src/db/mod.rs", "pub mod pool;\npub fn raw(q: &str) {}\n")
    repo.write("core-lib/src/db/pool.rs", "use super::raw;\nuse self::inner::Slot;\npub struct Pool;\n")
    repo.write("core-lib/src/db/pool/inner.rs", "pub struct Slot;\n")
    repo.write(
        "core-lib/src/net.rs",
        "mod tls;\nuse crate::db::{self, pool::Pool};\nuse tls::Config as Tls;\nuse mio::net::TcpStream;\n"
        'use std::process;\n\npub fn serve() {\n    db::raw("x");\n    crate::db::raw("y");\n'
        "    process::exit(1);\n    std::process::abort();\n}\n",
    )
    repo.write("core-lib/src/net/tls.rs", "pub struct Config;\n")
    repo.write("core-lib/src/bin/tool.rs", "use crate::db;\nfn main() {}\n")
    repo.write(
        "app/Cargo.toml",
        '[package]\nname = "app"\n\n[lib]\nname = "the_app"\n\n[dependencies]\ncore-lib = { path = "../core-lib" }\n',
    )
    repo.write("app/src/main.rs", "use core_lib::db::pool::Pool;\nuse core_lib::*;\nuse the_app::x;\nfn main() {}\n")
    repo.write("app/tests/it.rs", "use core_lib::net::serve;\nuse crate::helpers;\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.importer, e.imported, e.names) for e in g.import_edges() if e.internal}
    # each named by its path and by its crate, as Rust writes it (`core_lib::db::raw`)
    assert edges == {
        ("core-lib/src/db/pool", "core-lib/src/db/mod", ("core-lib/src/db/mod.raw", "core_lib.db.raw")),
        (
            "core-lib/src/db/pool",
            "core-lib/src/db/pool/inner",
            ("core-lib/src/db/pool/inner.Slot", "core_lib.db.pool.inner.Slot"),
        ),
        ("core-lib/src/net", "core-lib/src/db/mod", ("core_lib.db",)),
        ("core-lib/src/net", "core-lib/src/db/pool", ("core-lib/src/db/pool.Pool", "core_lib.db.pool.Pool")),
        ("core-lib/src/net", "core-lib/src/net/tls", ("core-lib/src/net/tls.Config", "core_lib.net.tls.Config")),
        ("app/src/main", "core-lib/src/db/pool", ("core-lib/src/db/pool.Pool", "core_lib.db.pool.Pool")),
        ("app/src/main", "core-lib/src/lib", ("core_lib",)),
        ("app/tests/it", "core-lib/src/net", ("core-lib/src/net.serve", "core_lib.net.serve")),
    }
    external = {e.imported for e in g.import_edges() if not e.internal}
    # a binary of src/bin and a test are crates of their own: their `crate::` is not the package's;
    # a package with no library (no lib.rs) is no crate another can `use`
    assert external == {"mio.net.TcpStream", "std.process", "crate.db", "crate.helpers", "the_app.x"}
    calls = [(c.caller, c.callee, c.resolved) for c in g.call_edges() if c.path == "core-lib/src/net.rs"]
    assert calls == [
        ("core-lib/src/net.serve", "core-lib/src/db/mod.raw", True),  # `db::raw`, bound by its `use`
        ("core-lib/src/net.serve", "core-lib/src/db/mod.raw", True),  # `crate::db::raw`, a path
        ("core-lib/src/net.serve", "std.process.exit", True),
        ("core-lib/src/net.serve", "std.process.abort", False),  # as written, with dots
    ]


def test_a_rust_crate_is_one_of_the_repository_where_the_package_depends_on_it_by_path(tmp_path: Path) -> None:
    """A package of the repository named like a crate (cargo's test fixture `std`, another `serde`)
    took every `use std::…` and `use serde::…` for an internal edge: cargo's `forbid: tests/**` gave
    870 findings. A crate is the repository's where the package's Cargo.toml depends on it by path,
    by the name its code uses (a renamed one by its key; `workspace = true` as the workspace says)."""
    repo = GitRepo(tmp_path)
    repo.write(
        "Cargo.toml", '[workspace]\nmembers = ["app", "db"]\n\n[workspace.dependencies]\nstore = { path = "db" }\n'
    )
    repo.write("db/Cargo.toml", '[package]\nname = "store"\n')
    repo.write("db/src/lib.rs", "pub mod pool;\n")
    repo.write("db/src/pool.rs", "pub struct Pool;\n")
    repo.write("tests/fixtures/std/Cargo.toml", '[package]\nname = "std"\n')
    repo.write("tests/fixtures/std/src/lib.rs", "pub mod process;\n")
    repo.write("tests/fixtures/std/src/process.rs", "pub fn exit() {}\n")
    repo.write("tests/fixtures/serde/Cargo.toml", '[package]\nname = "serde"\n')
    repo.write("tests/fixtures/serde/src/lib.rs", "pub trait Serialize {}\n")
    repo.write(
        "app/Cargo.toml",
        '[package]\nname = "app"\n\n[dependencies]\nstore.workspace = true\nserde = "1"\n\n'
        '[dev-dependencies]\nold = { package = "store", path = "../db" }\n',
    )
    repo.write(
        "app/src/main.rs",
        "use std::process;\nuse serde::Serialize;\nuse store::pool::Pool;\nfn main() { std::process::exit(1); }\n",
    )
    repo.write("app/tests/it.rs", "use old::pool::Pool;\n")
    repo.write("broken/Cargo.toml", '[package\nname = "broken"\n[dependencies]\nstore = { path = "../db" }\n')
    repo.write("broken/src/main.rs", "use store::pool::Pool;\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.importer, e.imported) for e in g.import_edges() if e.internal}
    assert edges == {
        ("app/src/main", "db/src/pool"),
        ("app/tests/it", "db/src/pool"),  # `old`, the dev-dependency renamed
    }
    external = {e.imported for e in g.import_edges() if not e.internal and e.path.startswith("app/")}
    assert external == {"std.process", "serde.Serialize"}
    # a Cargo.toml that is no TOML names nothing (cargo refuses it too)
    assert {e.imported for e in g.import_edges() if e.path.startswith("broken/")} == {"store.pool.Pool"}
    calls = {(c.callee, c.resolved) for c in g.call_edges() if c.path == "app/src/main.rs"}
    assert calls == {("std.process.exit", False)}  # as written: no crate of the repository


def test_rust_paths_in_an_inline_mod_are_read_from_the_file_s_module(tmp_path: Path) -> None:
    """`super::` in `mod tests { … }` is the file's own module, not its parent: every Rust file with
    inline tests imported its parent module (or lib.rs), which an indirect check then followed."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod sync;\npub use sync::mutex::Mutex;\n")
    repo.write("src/sync/mod.rs", "pub mod mutex;\npub fn spawn() {}\n")
    repo.write(
        "src/sync/mutex.rs",
        "pub struct Mutex;\nfn lock() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::Mutex;\n"
        "    mod deep {\n        use super::super::super::spawn;\n        fn t() { super::super::lock(); }\n    }\n"
        "    fn helper() {}\n    fn t() { super::lock(); self::helper(); }\n}\n",
    )
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.importer, e.imported, e.names) for e in g.import_edges() if e.internal}
    assert edges == {
        ("src/lib", "src/sync/mutex", ("src/sync/mutex.Mutex", "rt.sync.mutex.Mutex")),
        ("src/sync/mutex", "src/sync/mod", ("src/sync/mod.spawn", "rt.sync.spawn")),  # (three up: the parent)
    }
    calls = {(c.caller, c.callee, c.resolved) for c in g.call_edges() if c.path == "src/sync/mutex.rs"}
    assert calls == {
        ("src/sync/mutex.tests.deep.t", "src/sync/mutex.lock", True),
        ("src/sync/mutex.tests.t", "src/sync/mutex.lock", True),
        ("src/sync/mutex.tests.t", "src/sync/mutex.tests.helper", True),
    }


def test_a_cargo_lib_path_is_the_crate_s_root(tmp_path: Path) -> None:
    """`[lib] path = "src/mylib.rs"` (or `"lib.rs"` beside Cargo.toml) is the library's root: its
    modules are beside it, its `self::` is the crate's, and other packages `use` it by its crate name.
    The path was ignored: no `src/lib.rs`, so no library, and a root outside `src/` placed nothing."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[workspace]\nmembers = ["core", "tiny", "app"]\n')
    repo.write("core/Cargo.toml", '[package]\nname = "core-x"\n\n[lib]\npath = "src/mylib.rs"\n')
    repo.write("core/src/mylib.rs", "pub mod db;\npub mod util;\nuse self::util::helper;\n")
    repo.write("core/src/db.rs", "use crate::util::helper;\npub fn raw() {}\n")
    repo.write("core/src/util.rs", "pub fn helper() {}\n")
    repo.write("core/src/bin/tool.rs", "use crate::util::helper;\nfn main() {}\n")  # a binary: a crate of its own
    repo.write("tiny/Cargo.toml", '[package]\nname = "tiny"\n\n[lib]\npath = "lib.rs"\n')
    repo.write("tiny/lib.rs", "pub mod net;\nuse crate::net::Conn;\n")
    repo.write("tiny/net.rs", "pub struct Conn;\n")
    repo.write("tiny/tests/it.rs", "use crate::net::Conn;\n")  # a crate of its own, as in a package's `src/`
    repo.write(
        "app/Cargo.toml",
        '[package]\nname = "app"\n\n[dependencies]\ncore-x = { path = "../core" }\ntiny = { path = "../tiny" }\n',
    )
    repo.write("app/src/main.rs", "use core_x::db::raw;\nuse tiny::net::Conn;\nfn main() {}\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    assert {(e.importer, e.imported, e.names) for e in g.import_edges() if e.internal} == {
        ("core/src/mylib", "core/src/util", ("core/src/util.helper", "core_x.util.helper")),
        ("core/src/db", "core/src/util", ("core/src/util.helper", "core_x.util.helper")),
        ("tiny/lib", "tiny/net", ("tiny/net.Conn", "tiny.net.Conn")),
        ("app/src/main", "core/src/db", ("core/src/db.raw", "core_x.db.raw")),
        ("app/src/main", "tiny/net", ("tiny/net.Conn", "tiny.net.Conn")),
    }
    assert [e.imported for e in g.import_edges() if e.path == "tiny/tests/it.rs"] == ["crate.net.Conn"]
    assert [e.imported for e in g.import_edges() if e.path == "core/src/bin/tool.rs"] == ["crate.util.helper"]


def test_rust_crate_paths_in_a_binary_s_modules_name_main_rs(tmp_path: Path) -> None:
    """A package with a library and a binary compiles `src/` twice: in a module only main.rs declares,
    `crate::` is the binary's crate root, main.rs, which no other crate can `use` by a name. Such
    `use`s resolved to lib.rs, named by the library's crate."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "tool"\n')
    repo.write("src/lib.rs", "pub mod db;\npub struct Config;\n")
    repo.write("src/db.rs", "use crate::Config;\n")
    repo.write("src/main.rs", "// mod db;\nmod cli;\nmod run {\n    pub fn go() {}\n}\npub struct Config;\n")
    repo.write("src/cli/mod.rs", "pub(crate) mod args;\nuse crate::Config;\nuse super::run::go;\n")
    repo.write("src/cli/args.rs", "use tool::Config;\nfn f() { crate::run::go(); }\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.importer, e.imported, e.names) for e in g.import_edges() if e.internal}
    assert edges == {
        ("src/db", "src/lib", ("src/lib.Config", "tool.Config")),
        ("src/cli/mod", "src/main", ("src/main.Config",)),
        ("src/cli/mod", "src/main", ("src/main.run.go",)),
        ("src/cli/args", "src/lib", ("src/lib.Config", "tool.Config")),  # the library, by its name
    }
    calls = {(c.caller, c.callee, c.resolved) for c in g.call_edges() if c.path == "src/cli/args.rs"}
    assert calls == {("src/cli/args.f", "src/main.run.go", True)}


def test_rust_uses_of_re_exported_names_are_edges_to_their_defining_modules(tmp_path: Path) -> None:
    """`use crate::a::Thing` where `a` has `pub use crate::b::inner::Thing;` depends on b::inner: the
    edge is to the module that defines it, named both as written and as defined. A `#[path]` module
    (`#[path = "unix/mod.rs"] mod imp;`) is its file. Both edges stopped at the file as written."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod a;\npub mod b;\npub mod sys;\npub mod web;\n")
    repo.write("src/a.rs", "pub use crate::b::inner::Thing;\npub use crate::b::Other as Renamed;\n")
    repo.write("src/b/mod.rs", "pub mod inner;\npub struct Other;\n")
    repo.write("src/b/inner.rs", "pub struct Thing;\n")
    repo.write("src/sys/mod.rs", '#[path = "unix/mod.rs"]\n#[cfg(unix)]\nmod imp;\npub use self::imp::fd::Fd;\n')
    repo.write("src/sys/unix/mod.rs", "pub mod fd;\n")
    repo.write("src/sys/unix/fd.rs", "pub struct Fd;\n")
    repo.write("src/web.rs", "use crate::a::{self, Thing, Renamed};\nuse crate::sys::Fd;\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.imported, e.names) for e in g.import_edges() if e.importer == "src/web"}
    assert edges == {
        ("src/a", ("rt.a",)),
        ("src/b/inner", ("src/a.Thing", "rt.a.Thing", "src/b/inner.Thing", "rt.b.inner.Thing")),
        ("src/b/mod", ("src/a.Renamed", "rt.a.Renamed", "src/b/mod.Other", "rt.b.Other")),
        ("src/sys/unix/fd", ("src/sys/mod.Fd", "rt.sys.Fd", "src/sys/unix/fd.Fd", "rt.sys.imp.fd.Fd")),
    }
    # the `#[path]` module's file, and its child's beside it
    assert {(e.importer, e.imported) for e in g.import_edges() if e.path == "src/sys/mod.rs"} == {
        ("src/sys/mod", "src/sys/unix/fd")
    }


def test_rust_glob_re_exports_are_followed_to_the_defining_module(tmp_path: Path) -> None:
    """`pub use crate::b::*;` in `a` brings b's names, and b's own `pub use self::inner::*;` inner's:
    `use crate::a::Thing` is an edge to b/inner, named both ways; a name `a` defines itself stays
    `a`'s even beside a glob. Glob re-exports were not followed: every edge stopped at `a`."""
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "rt"\n')
    repo.write("src/lib.rs", "pub mod a;\npub mod b;\npub mod web;\n")
    repo.write("src/a.rs", "pub use crate::b::*;\nuse std::io::*;\npub struct Own;\n")
    repo.write(
        "src/b/mod.rs",
        "pub mod inner;\npub use self::inner::*;\npub use crate::b::inner::Thing as Alias;\npub struct Other;\n",
    )
    repo.write("src/b/inner.rs", "pub struct Thing;\n")
    repo.write("src/web.rs", "use crate::a::{Thing, Other, Own, Alias};\n")
    repo.commit("rust")
    g = graph_of(repo, tmp_path)
    edges = {(e.imported, e.names) for e in g.import_edges() if e.importer == "src/web"}
    assert edges == {
        ("src/a", ("src/a.Own", "rt.a.Own")),
        ("src/b/inner", ("src/a.Thing", "rt.a.Thing", "src/b/inner.Thing", "rt.b.inner.Thing")),
        ("src/b/inner", ("src/a.Alias", "rt.a.Alias", "src/b/inner.Thing", "rt.b.inner.Thing")),
        ("src/b/mod", ("src/a.Other", "rt.a.Other", "src/b/mod.Other", "rt.b.Other")),
    }


def test_c_and_cpp_includes_resolve_to_their_files(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/net/sock.h", "int sock_open(void);\n")
    repo.write("src/net/sock.c", '#include "sock.h"\nint sock_open(void) { return 0; }\n')
    repo.write("src/db/conn.h", "void conn_close(void);\n")
    repo.write("vendor/db/conn.h", "void vendored(void);\n")
    repo.write("src/db/conn.c", '#include "conn.h"\nvoid conn_close(void) {}\n')
    repo.write("vendor/lib/test/math.h", "double fake(double);\n")  # never the system's <math.h>
    repo.write(
        "src/net/server.cpp",
        '#include <math.h>\n#include "net/sock.h"\n#include <db/conn.h>\nvoid serve() { sock_open(); }\n',
    )
    repo.commit("c")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/net/sock.c") == g.module_of("src/net/sock.h") == "src/net/sock"
    # beside the file; by the end of its path; the nearest of two files that end alike
    assert g.edges() == {
        ("src/net/sock", "src/net/sock"),
        ("src/db/conn", "src/db/conn"),
        ("src/net/server", "src/net/sock"),
        ("src/net/server", "src/db/conn"),
    }
    assert "math.h" in g.imports_of("src/net/server")
    assert g.path("src/net/server", "src/db/conn") == ["src/net/server", "src/db/conn"]


def test_ruby_requires_and_php_uses(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("lib/rack/utils.rb", "module Rack\n  module Utils\n  end\nend\n")
    repo.write("lib/mylib/x.rb", "")  # below the last lib/ folder, not one whose name ends in lib
    repo.write("lib/rack/auth/basic.rb", 'require "rack/utils"\nrequire_relative "../utils"\nrequire "json"\n')
    repo.write("lib/rack.rb", 'module Rack\n  autoload :Utils, "rack/utils"\nend\n')
    repo.write("composer.json", '{"autoload": {"psr-4": {"App\\\\": "app/"}}}\n')
    repo.write("app/Db/Connection.php", "<?php\nnamespace App\\Db;\nclass Connection { static function open() {} }\n")
    repo.write(
        "app/Http/Kernel.php",
        "<?php\nnamespace App\\Http;\nuse App\\Db\\Connection as C;\nuse Psr\\Log\\Logger;\n"
        "class Kernel { function boot() { C::open(); Router::start(); } }\n",
    )
    repo.write("app/Http/Router.php", "<?php\nnamespace App\\Http;\nclass Router { static function start() {} }\n")
    repo.commit("ruby and php")
    g = graph_of(repo, tmp_path)
    assert g.module_of("lib/rack/auth/basic.rb") == "rack/auth/basic"
    assert g.module_of("lib/mylib/x.rb") == "mylib/x"
    assert g.module_of("app/Http/Kernel.php") == "App.Http.Kernel"
    assert g.edges() == {
        ("rack/auth/basic", "rack/utils"),
        ("rack", "rack/utils"),
        ("App.Http.Kernel", "App.Db.Connection"),
    }
    assert {"json", "Psr.Log.Logger"} <= g.imports_of("rack/auth/basic") | g.imports_of("App.Http.Kernel")
    resolved = {(c.caller, c.callee) for c in g.call_edges() if c.resolved}
    assert ("App.Http.Kernel.Kernel.boot", "App.Db.Connection.open") in resolved
    assert ("App.Http.Kernel.Kernel.boot", "App.Http.Router.start") in resolved  # its namespace's, no `use`


def test_kotlin_and_java_import_each_others_classes(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("lib/src/main/kotlin/acme/db/Db.kt", "package acme.db\n\nobject Db {\n    fun open() {}\n}\n")
    repo.write("lib/src/main/java/acme/db/Legacy.java", "package acme.db;\n\nclass Legacy { static void run() {} }\n")
    repo.write(
        "app/src/main/kotlin/acme/web/Page.kt",
        "package acme.web\n\nimport acme.db.Db\nimport acme.db.Legacy as Old\nimport kotlinx.coroutines.*\n\n"
        "class Page {\n    fun render() {\n        Db.open()\n        Old.run()\n    }\n}\n",
    )
    repo.commit("kotlin")
    g = graph_of(repo, tmp_path)
    assert g.module_of("app/src/main/kotlin/acme/web/Page.kt") == "acme.web.Page"
    assert g.edges() == {("acme.web.Page", "acme.db.Db"), ("acme.web.Page", "acme.db.Legacy")}
    assert "kotlinx.coroutines" in g.imports_of("acme.web.Page")
    resolved = {c.callee for c in g.call_edges() if c.resolved and c.caller == "acme.web.Page.Page.render"}
    assert resolved == {"acme.db.Db.open", "acme.db.Legacy.run"}  # through an import and its alias


def test_kotlin_imports_of_members_and_top_level_functions_are_internal(tmp_path: Path) -> None:
    """`import a.b.C.Inner` and `import a.b.C.Companion.f` import the module a.b.C; `import a.b.f` of
    a top-level function imports the file of package a.b that defines it, and a call through it
    resolves there. A name no file of the package defines stays external."""
    repo = GitRepo(tmp_path)
    repo.write("src/main/kotlin/acme/db/-Util.kt", "package acme.db\n\nfun closeQuietly(x: Any) {}\n")
    repo.write(
        "src/main/kotlin/acme/db/Pool.kt",
        "package acme.db\n\nclass Pool {\n    class Lease\n    companion object {\n        fun make(): Pool = Pool()\n"
        "    }\n}\n",
    )
    repo.write(
        "src/main/kotlin/acme/web/Page.kt",
        "package acme.web\n\nimport acme.db.closeQuietly\nimport acme.db.Pool.Lease\n"
        "import acme.db.Pool.Companion.make\nimport acme.db.NOT_DEFINED\n\n"
        "fun render() {\n    closeQuietly(make())\n}\n",
    )
    repo.commit("kotlin members")
    g = graph_of(repo, tmp_path)
    assert g.edges() == {("acme.web.Page", "acme.db.-Util"), ("acme.web.Page", "acme.db.Pool")}
    assert "acme.db.NOT_DEFINED" in g.imports_of("acme.web.Page") - {m for _, m in g.edges()}
    resolved = {c.callee for c in g.call_edges() if c.resolved and c.caller == "acme.web.Page.render"}
    assert "acme.db.-Util.closeQuietly" in resolved


def test_csharp_namespaces_are_modules_and_usings_their_edges(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/Data/Db.cs", "namespace Acme.Data\n{\n    public class Db { public static void Open() {} }\n}\n")
    repo.write("src/Data/Pool.cs", "namespace Acme.Data;\npublic static class Pool { public static void Take() {} }\n")
    repo.write("src/Core.cs", "namespace Acme { public static class Log { public static void Write() {} } }\n")
    repo.write(
        "src/Web/Page.cs",
        "using System.Text;\nusing Acme.Data;\nusing static Acme.Data.Pool;\nusing L = Acme.Log;\n"
        "// namespace Not.This\nnamespace Acme.Web {\n    class Page {\n"
        "        void Render() { Db.Open(); L.Write(); Log.Write(); Form.Show(); new StringBuilder(); }\n"
        "    }\n}\n",
    )
    repo.write("src/Web/Form.cs", "namespace Acme . Web { class Form { public static void Show() {} } }\n")
    repo.write("Program.cs", "using Acme.Web;\nclass Program { static void Main() {} }\n")
    repo.commit("csharp")
    g = graph_of(repo, tmp_path)
    assert g.module_of("src/Data/Pool.cs") == g.module_of("src/Data/Db.cs") == "Acme.Data"  # one module, as Go's
    assert g.module_of("src/Web/Form.cs") == "Acme.Web"
    assert g.module_of("Program.cs") == "Program"  # no namespace: its path
    assert g.edges() == {("Acme.Web", "Acme.Data"), ("Acme.Web", "Acme"), ("Program", "Acme.Web")}
    assert "System.Text" in g.imports_of("Acme.Web")
    resolved = {c.callee for c in g.call_edges() if c.resolved and c.caller == "Acme.Web.Page.Render"}
    # through a using, an alias, the enclosing namespace and the file's own
    assert resolved == {"Acme.Data.Db.Open", "Acme.Log.Write", "Acme.Web.Form.Show"}


def test_files_crafted_for_the_module_patterns_are_read_in_one_pass(tmp_path: Path) -> None:
    # `^\s*namespace` and `^\s*module` ran from every line start over all the blank lines below it
    blank = "\n" * 1_000_000
    repo = GitRepo(tmp_path)
    repo.write("go.mod", blank + "module example.com/shop\n")
    repo.write("internal/db/db.go", "package db\n\nfunc Open() int { return 1 }\n")
    repo.write("src/Data/Db.cs", blank + "namespace Acme.Data { public class Db { } }\n")
    repo.write("src/Blank.cs", blank + "class B { }\n")
    repo.commit("blank lines")
    g = graph_of(repo, tmp_path)
    assert g.module_of("internal/db/db.go") == "example.com/shop/internal/db"
    assert g.module_of("src/Data/Db.cs") == "Acme.Data"
    assert g.module_of("src/Blank.cs") != "Acme.Data"


def test_csharp_namespaces_are_read_as_the_compiler_reads_them(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("src/Data/Db.cs", "namespace Acme.Data\r\n{\r\n    public class Db<T> { }\r\n}\r\n")  # CRLF
    repo.write("src/Bom.cs", "\ufeffnamespace Acme.Bom // after a byte-order mark\nclass B { }\n")
    repo.write("src/Prose.cs", "/*\n namespace handling is described in the docs\n*/\nclass P { }\n")
    repo.write("src/Relative.cs", "namespace Acme\n{\n    using Data;\n    class R { }\n}\n")  # Acme.Data
    repo.write("src/Alias.cs", "using Rows = Acme.Data.Db<int>;\nnamespace Acme.Bom { class A { } }\n")
    repo.commit("csharp")
    g = graph_of(repo, tmp_path)
    assert [g.module_of(p) for p in ("src/Data/Db.cs", "src/Bom.cs", "src/Prose.cs")] == [
        "Acme.Data",
        "Acme.Bom",
        "src/Prose",
    ]
    assert g.edges() == {("Acme", "Acme.Data"), ("Acme.Bom", "Acme.Data")}


def test_why_reads_its_neighbours_again_when_the_graph_does() -> None:
    import comind.graph
    import comind.why

    assert comind.why.GRAPH_VERSION == comind.graph.GRAPH_VERSION


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@given(
    st.one_of(
        _JSON,
        st.fixed_dictionaries(
            {"autoload": st.one_of(_JSON, st.fixed_dictionaries({"psr-4": _JSON}))},
            optional={"autoload-dev": _JSON},
        ),
    )
)
@settings(max_examples=300, deadline=None)
def test_psr4_prefixes_read_any_composer_json(manifest: object) -> None:
    pairs = psr4_prefixes(manifest)
    assert all(isinstance(f, str) and isinstance(n, str) for f, n in pairs)
    assert [len(f) for f, _ in pairs] == sorted((len(f) for f, _ in pairs), reverse=True)


def test_a_composer_json_nested_beyond_the_parser_names_nothing(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    repo.write("composer.json", "[" * 1500 + "]" * 1500)  # json.loads raises RecursionError
    repo.write("app/Http.php", "<?php\nnamespace App;\nuse App\\{Db, Log,};\nclass Http {}\n")
    repo.commit("deep")
    g = graph_of(repo, tmp_path)
    assert g.module_of("app/Http.php") == "app/Http"
    assert g.imports_of("app/Http") == {"App.Db", "App.Log"}  # (the trailing comma's empty clause: nothing)


def test_psr4_prefixes_of_a_real_layout() -> None:
    manifest = {
        "autoload": {
            "psr-4": {"Illuminate\\": "src/Illuminate/", "Illuminate\\Support\\": ["src/Illuminate/Macroable/"]}
        },
        "autoload-dev": {"psr-4": {"Tests\\": "./tests"}},
    }
    assert psr4_prefixes(manifest) == [
        ("src/Illuminate/Macroable", "Illuminate.Support"),
        ("src/Illuminate", "Illuminate"),
        ("tests", "Tests"),
    ]


# --- differential test against grimp -----------------------------------------------------------


@st.composite
def package_specs(draw: st.DrawFn) -> dict[str, str]:
    """A Python package as {relative module name: source}; "" is the top-level package."""
    packages = [""]
    for i in range(draw(st.integers(0, 4))):
        parent = draw(st.sampled_from([p for p in packages if p.count(".") < 2]))
        packages.append(f"{parent}.sub{i}" if parent else f"sub{i}")
    modules = list(packages)
    for p in packages:
        for j in range(draw(st.integers(0, 3))):
            modules.append(f"{p}.m{j}" if p else f"m{j}")
    children: dict[str, list[str]] = {m: [] for m in modules}
    for m in modules:
        if m:
            children[m.rpartition(".")[0] if "." in m else ""].append(m.rpartition(".")[2])
    sources: dict[str, str] = {}
    for importer in modules:
        lines = []
        for k in range(draw(st.integers(0, 5))):
            target = draw(st.sampled_from(modules))
            if draw(st.booleans()) and draw(st.booleans()):
                target = f"{target}.nomod" if target else "nomod"
            form = draw(st.sampled_from(["import", "import_as", "from", "from_rel", "from_rel", "star"]))
            names = [*children.get(target, []), "thing"]
            name = draw(st.sampled_from(names))
            full = f"ROOT.{target}" if target else "ROOT"
            if form == "import":
                stmt = f"import {full}"
            elif form == "import_as":
                stmt = f"import {full} as alias{k}"
            elif form == "from":
                stmt = f"from {full} import {name}"
            elif form == "star":
                stmt = f"from {full} import *"
            else:
                stmt = f"from {_relative(importer, target, importer in packages)} import {name}"
            place = draw(st.sampled_from(["top", "function", "type_checking", "try"]))
            if place == "function":
                stmt = f"def f{k}():\n    {stmt}\n    return {k}"
            elif place == "type_checking":
                stmt = f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {stmt}"
            elif place == "try":
                stmt = f"try:\n    {stmt}\nexcept ImportError:\n    pass"
            lines.append(stmt)
        sources[importer] = "\n".join(lines) + "\n"
    sources["__packages__"] = "\n".join(packages)
    return sources


def _relative(importer: str, target: str, importer_is_package: bool) -> str:
    """``from <this> import …`` naming ``target`` relative to ``importer`` (names relative to ROOT)."""
    pkg = ["ROOT", *importer.split(".")] if importer else ["ROOT"]
    if not importer_is_package:
        pkg = pkg[:-1]
    tgt = ["ROOT", *target.split(".")] if target else ["ROOT"]
    common = 0
    while common < min(len(pkg), len(tgt)) and pkg[common] == tgt[common]:
        common += 1
    level = len(pkg) - common + 1
    return "." * level + ".".join(tgt[common:])


def _write_package(repo: GitRepo, root: str, name: str, spec: dict[str, str]) -> None:
    packages = set(spec["__packages__"].split("\n"))
    for module, source in spec.items():
        if module == "__packages__":
            continue
        parts = module.split(".") if module else []
        rel = "/".join([name, *parts])
        path = f"{rel}/__init__.py" if module in packages else f"{rel}.py"
        repo.write(f"{root}{path}", source.replace("ROOT", name))


def _grimp_edges(search_path: Path, name: str) -> set[tuple[str, str]]:
    sys.path.insert(0, str(search_path))
    importlib.invalidate_caches()
    try:
        g = grimp.build_graph(name, cache_dir=None)
        return {(m, i) for m in g.modules for i in g.find_modules_directly_imported_by(m)}
    finally:
        sys.path.remove(str(search_path))
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]
        sys.path_importer_cache.pop(str(search_path), None)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=package_specs(), src_layout=st.booleans())
def test_python_import_edges_match_grimp(spec: dict[str, str], src_layout: bool) -> None:
    name = f"gpkg_{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitRepo(Path(tmp))
        root = "src/" if src_layout else ""
        _write_package(repo, root, name, spec)
        repo.write("tools/other.py", f"import {name}\n")  # outside the package: not compared
        repo.commit("package")
        ours = {
            (a, b)
            for a, b in ImportGraph(CodeIndex(repo.path, Path(tmp) / "ix.sqlite").snapshot("HEAD")).edges()
            if a == name or a.startswith(name + ".")
        }
        theirs = _grimp_edges(repo.path / root if root else repo.path, name)
        assert ours == theirs


def test_grimp_differential_on_a_hand_written_package(tmp_path: Path) -> None:
    """The shapes named in the design, once, readably."""
    repo = GitRepo(tmp_path)
    name = f"hand_{uuid.uuid4().hex[:8]}"
    files = {
        "__init__.py": "from . import x\nfrom .a import thing\n",
        "x.py": "import NAME.a.b.c as cc\nfrom NAME.a import b\nfrom NAME.missing import zz\n"
        "import NAME.nomod2\nfrom NAME import *\ndef f():\n    import NAME.a\n",
        "a/__init__.py": "from . import thing2\nfrom .. import x\nfrom ..x import y\nthing = 1\n",
        "a/b/__init__.py": "from ... import x\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from NAME.a.b import c\n",
        "a/b/c.py": "from . import *\n",
    }
    for rel, text in files.items():
        repo.write(f"{name}/{rel}", text.replace("NAME", name))
    repo.commit("hand")
    ours = graph_of(repo, tmp_path).edges()
    assert ours == _grimp_edges(repo.path, name)
    assert (f"{name}.a", f"{name}.a") in ours  # `from . import thing2` in a/__init__: a self-import


@pytest.mark.parametrize("bad", ["from .... import x\n", "from . import\n"])
def test_bad_relative_imports_are_ignored(tmp_path: Path, bad: str) -> None:
    repo = GitRepo(tmp_path)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/m.py", bad)
    repo.commit("bad")
    g = graph_of(repo, tmp_path)
    assert g.edges() == set()
