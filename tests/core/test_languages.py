"""Definitions, qualnames, fingerprints, imports and calls for each supported language."""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import subprocess
import sys
import textwrap

import pytest
from ast_grep_py import SgRoot
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.languages import (
    LANGUAGES,
    Call,
    Definition,
    Import,
    body_tokens,
    keeping_trees,
    language_for_path,
    parse_file,
    token_similarity,
)
from comind.languages._base import _TREES


def parse(path: str, source: str) -> dict[str, Definition]:
    fs = parse_file(path, textwrap.dedent(source).encode())
    assert fs.error is None, fs.error
    return {d.qualname: d for d in fs.definitions}


def kinds(path: str, source: str) -> dict[str, str]:
    return {q: d.kind for q, d in parse(path, source).items()}


PYTHON = '''\
"""Permissions."""
import functools
from .db import raw_query as rq


@functools.cache
def check(user: str, action: str = "read") -> bool:
    """Decide."""
    def allowed(a):
        return a in ("read",)
    return allowed(action) and rq(user)


class PermissionChecker(Base):
    @property
    def name(self) -> str:
        return "p"

    class Meta:
        def inner(self):
            pass

    async def check(self, *args, **kw):
        return self.name
'''


def test_python_definitions_spans_and_kinds() -> None:
    defs = parse("app/perm.py", PYTHON)
    assert {q: d.kind for q, d in defs.items()} == {
        "check": "function",
        "check.allowed": "function",
        "PermissionChecker": "class",
        "PermissionChecker.name": "method",
        "PermissionChecker.Meta": "class",
        "PermissionChecker.Meta.inner": "method",
        "PermissionChecker.check": "method",
    }
    # Decorators are part of the span; lines are 1-based and inclusive.
    assert (defs["check"].start_line, defs["check"].end_line) == (6, 11)
    assert (defs["PermissionChecker.name"].start_line, defs["PermissionChecker.name"].end_line) == (15, 17)
    assert defs["check.allowed"].name == "allowed"


def test_python_imports_and_calls() -> None:
    fs = parse_file("app/perm.py", PYTHON.encode())
    assert fs.language == "python"
    assert fs.imports == (Import("functools", (), None, 2, 0), Import("db", ("raw_query",), "rq", 3, 1))
    assert Call("check", "allowed", 11) in fs.calls
    assert Call("check", "rq", 11) in fs.calls
    assert Call("PermissionChecker.check", "self.name", 24) not in fs.calls  # an attribute, not a call
    assert Call("", "functools.cache", 6) not in fs.calls  # a decorator without parentheses


def test_python_import_forms() -> None:
    src = textwrap.dedent("""\
        import os.path as osp, sys
        from __future__ import annotations
        from .. import sibling
        from ..a.b import (c as d, e)
        from pkg import *
        def f():
            import json
    """)
    fs = parse_file("m.py", src.encode())
    assert fs.imports == (
        Import("os.path", (), "osp", 1, 0),
        Import("sys", (), None, 1, 0),
        Import("__future__", ("annotations",), None, 2, 0),
        Import("", ("sibling",), None, 3, 2),
        Import("a.b", ("c",), "d", 4, 2),
        Import("a.b", ("e",), None, 4, 2),
        Import("pkg", ("*",), None, 5, 0),
        Import("json", (), None, 7, 0),
    )


def test_javascript_definitions() -> None:
    src = """\
        const path = require("path");
        import { readFile as rf } from "./fs.js";
        export function load(name) { return rf(path.join(name)); }
        export const save = async (name, data) => { await write(name, data); };
        const plain = function () { return 1; };
        exports.legacy = function (x) { return x; };
        class Store extends Base {
          items = [];
          add = (x) => this.items.push(x);
          get size() { return this.items.length; }
          static create() { return new Store(); }
        }
        const api = { ping() { return "pong"; }, pong: () => "ping" };
        setTimeout(() => load("x"), 10);
    """
    assert kinds("src/store.js", src) == {
        "load": "function",
        "save": "function",
        "plain": "function",
        "legacy": "function",
        "Store": "class",
        "Store.add": "method",
        "Store.size": "method",
        "Store.create": "method",
        "ping": "function",
        "pong": "function",
    }
    fs = parse_file("src/store.js", textwrap.dedent(src).encode())
    assert Import("path", (), "path", 1, 0) in fs.imports
    assert Import("./fs.js", ("readFile",), "rf", 2, 0) in fs.imports
    assert Call("load", "path.join", 3) in fs.calls
    assert Call("Store.create", "Store", 11) in fs.calls  # new Store()
    assert Call("", "load", 14) in fs.calls  # an anonymous callback belongs to its enclosing scope


def test_typescript_interfaces_types_overloads() -> None:
    src = """\
        import type { Row } from "../db";
        export interface Repo<T> { get(id: string): Promise<T>; readonly name: string }
        export type Id = string | number;
        export enum Mode { Read, Write }
        export abstract class BaseRepo<T> implements Repo<T> {
          abstract get(id: string): Promise<T>;
          protected log(msg: string): void { console.log(msg); }
        }
        export function parse(x: string): number;
        export function parse(x: number): number;
        export function parse(x: any): number { return Number(x); }
        namespace Util { export const twice = (n: number): number => n * 2; }
    """
    defs = parse("src/repo.ts", src)
    assert {q: d.kind for q, d in defs.items()} == {
        "Repo": "interface",
        "Repo.get": "method",
        "Id": "type",
        "Mode": "enum",
        "BaseRepo": "class",
        "BaseRepo.get": "method",
        "BaseRepo.log": "method",
        "parse#1": "function",
        "parse#2": "function",
        "parse": "function",
        "Util.twice": "function",
    }
    # The implementation, last in the file, keeps the plain name.
    assert defs["parse"].start_line == 11 and defs["parse#1"].start_line == 9


def test_tsx_components() -> None:
    src = """\
        import React, { useState } from "react";
        export function Counter({ start }: { start: number }): JSX.Element {
          const [n, setN] = useState(start);
          const inc = () => setN(n + 1);
          return <button onClick={inc}>{n}</button>;
        }
        export const Label: React.FC<{ text: string }> = ({ text }) => <span>{text}</span>;
    """
    assert language_for_path("ui/Counter.tsx") is LANGUAGES["tsx"]
    assert kinds("ui/Counter.tsx", src) == {"Counter": "function", "Counter.inc": "function", "Label": "function"}
    fs = parse_file("ui/Counter.tsx", textwrap.dedent(src).encode())
    assert Import("react", ("default",), "React", 1, 0) in fs.imports
    assert Call("Counter", "useState", 3) in fs.calls


def test_go_methods_with_pointer_receivers() -> None:
    src = """\
        package store

        import (
        \t"fmt"
        \tdb "example.com/app/internal/db"
        )

        type Store struct{ rows map[string]string }

        type Getter interface {
        \tGet(key string) (string, error)
        }

        type Pair[K comparable, V any] struct{ k K; v V }

        func New() *Store { return &Store{rows: db.Open()} }

        func (s *Store) Get(key string) (string, error) {
        \treturn fmt.Sprint(s.rows[key]), nil
        }

        func (p Pair[K, V]) Key() K { return p.k }
    """
    defs = parse("store/store.go", src)
    assert {q: d.kind for q, d in defs.items()} == {
        "Store": "struct",
        "Getter": "interface",
        "Getter.Get": "method",
        "Pair": "struct",
        "New": "function",
        "Store.Get": "method",
        "Pair.Key": "method",
    }
    assert (defs["Store.Get"].start_line, defs["Store.Get"].end_line) == (18, 20)
    fs = parse_file("store/store.go", textwrap.dedent(src).encode())
    assert fs.imports == (Import("fmt", (), None, 4, 0), Import("example.com/app/internal/db", (), "db", 5, 0))
    assert Call("New", "db.Open", 16) in fs.calls
    assert Call("Store.Get", "fmt.Sprint", 19) in fs.calls


def test_rust_impl_trait_for_type() -> None:
    src = """\
        use std::collections::{HashMap, hash_map::Entry};
        use crate::db::{self, Pool as P};

        /// A cache.
        pub struct Cache<K> { map: HashMap<K, u32> }

        pub trait Store { fn get(&self, k: &str) -> Option<u32>; fn name(&self) -> &str { "s" } }

        impl<K> Cache<K> {
            pub fn new() -> Self { Cache { map: HashMap::new() } }
        }

        impl<K: Eq> Store for Cache<K> {
            fn get(&self, k: &str) -> Option<u32> { db::lookup(k) }
        }

        enum Mode { Read, Write }

        mod tests {
            #[test]
            fn works() { assert!(true); }
        }
    """
    assert kinds("src/cache.rs", src) == {
        "Cache": "struct",
        "Store": "trait",
        "Store.get": "method",
        "Store.name": "method",
        "impl Cache": "impl",
        "Cache.new": "method",
        "impl Store for Cache": "impl",
        "Cache.get": "method",
        "Mode": "enum",
        "tests.works": "function",
    }
    fs = parse_file("src/cache.rs", textwrap.dedent(src).encode())
    assert Import("std::collections", ("HashMap",), None, 1, 0) in fs.imports
    assert Import("std::collections::hash_map", ("Entry",), None, 1, 0) in fs.imports
    assert Import("crate::db", (), None, 2, 0) in fs.imports
    assert Import("crate::db", ("Pool",), "P", 2, 0) in fs.imports
    assert Call("Cache.new", "HashMap::new", 10) in fs.calls
    assert Call("Cache.get", "db::lookup", 14) in fs.calls


def test_rust_comments_in_a_use_are_no_names() -> None:
    """`use a::{b, /* c */ d};` imports b and d: the comment was a third name, `/*c*/`."""
    src = (
        "use a::{b, /* c */ d};\nuse e::{\n    f, // why\n    g::{h /* i */},\n};\n"
        "use j::/* k */l;\nuse m::{/* n */ *};\n"
    )
    assert parse_file("src/x.rs", src.encode()).imports == (
        Import("a", ("b",), None, 1, 0),
        Import("a", ("d",), None, 1, 0),
        Import("e", ("f",), None, 2, 0),
        Import("e::g", ("h",), None, 2, 0),
        Import("j", ("l",), None, 6, 0),
        Import("m", ("*",), None, 7, 0),
    )


def test_java_nested_classes_and_overloads() -> None:
    src = """\
        package com.acme.auth;

        import java.util.List;
        import static java.util.Objects.requireNonNull;

        public class Checker {
            private final Db db;
            public Checker(Db db) { this.db = requireNonNull(db); }
            public boolean check(String user) { return db.query(user).isEmpty(); }
            public boolean check(String user, String action) { return check(user); }
            static class Rules {
                interface Rule { boolean test(String s); }
                List<Rule> all() { return List.of(); }
            }
            enum Level { LOW, HIGH }
        }
    """
    assert kinds("src/main/java/com/acme/auth/Checker.java", src) == {
        "Checker": "class",
        "Checker.Checker": "method",
        "Checker.check#1": "method",
        "Checker.check": "method",
        "Checker.Rules": "class",
        "Checker.Rules.Rule": "interface",
        "Checker.Rules.Rule.test": "method",
        "Checker.Rules.all": "method",
        "Checker.Level": "enum",
    }
    fs = parse_file("Checker.java", textwrap.dedent(src).encode())
    assert fs.imports == (
        Import("java.util", ("List",), None, 3, 0),
        Import("java.util.Objects", ("requireNonNull",), None, 4, 0),
    )
    assert Call("Checker.check#1", "db.query", 9) in fs.calls
    assert Call("Checker.check", "check", 10) in fs.calls


def test_c_functions_through_their_declarators() -> None:
    src = """\
        #include <stdio.h>
        static int *first(void) { return lookup(table, 0); }
        struct point { int x, y; };
        struct point origin;
        typedef struct { int w; } size_t2;
        typedef int (*callback)(int);
        enum color { RED, GREEN };
        #define MAX(a, b) ((a) > (b) ? (a) : (b))
    """
    assert kinds("src/util.c", src) == {
        "first": "function",
        "point": "struct",
        "size_t2": "type",
        "callback": "type",
        "color": "enum",
        "MAX": "function",
    }
    assert language_for_path("include/util.h") is LANGUAGES["cpp"]  # a header: C++ reads C's as well
    assert Call("first", "lookup", 2) in parse_file("util.c", textwrap.dedent(src).encode()).calls


def test_cpp_methods_in_and_out_of_their_class() -> None:
    src = """\
        namespace net {
        template <typename T> class Pool : public Base {
         public:
          T* take() { return items_.back(); }
          bool operator==(const Pool& o) const { return true; }
          ~Pool() {}
        };
        void Pool::drain() { sockets::close(fd_); conn->reset(); }
        template <typename T> int Pool<T>::size() const { return 0; }
        namespace detail::io { int read_all() { return 0; } }
        }
        namespace { void hidden() {} }
        void* operator new(size_t n) { return nullptr; }
        using Handle = int;
    """
    assert kinds("src/pool.cpp", src) == {
        "net.Pool": "class",
        "net.Pool.take": "method",
        "net.Pool.operator==": "method",
        "net.Pool.~Pool": "method",
        "net.Pool.drain": "method",
        "net.Pool.size": "method",
        "net.detail.io.read_all": "function",
        "hidden": "function",
        "operator new": "function",
        "Handle": "type",
    }
    calls = parse_file("pool.cpp", textwrap.dedent(src).encode()).calls
    assert Call("net.Pool.drain", "sockets::close", 8) in calls and Call("net.Pool.drain", "conn.reset", 8) in calls


def test_cpp_macros_read_as_functions_define_nothing() -> None:
    # tree-sitter reads a macro's call before a body or a declaration as a function definition:
    # named TEST (every test would be TEST#n), `namespace`, or a made-up `cache_t::` owner.
    src = """\
        int (wrapped)(int a) { return a; }
        TEST(fmt, x) { EXPECT_EQ(1, 1); }
        TEST(fmt, y) { EXPECT_EQ(2, 2); }
        struct Box {
          bool operator ==(const Box&) const { return true; }
          explicit operator bool() const noexcept { return true; }
          int SIZE() const { return 1; }
        };
        JEMALLOC_ALWAYS_INLINE cache_t *
        cache_get(bool init) { return 0; }
        FMT_FUNC void fmt::print_colored(int c) { return; }
        FMT_FUNC std::string fmt::internal::name() { return ""; }
        FMT_BEGIN_NAMESPACE
        namespace detail { int helper() { return 1; } }
        FMT_END_NAMESPACE
    """
    fs = parse_file("include/box.h", textwrap.dedent(src).encode())
    assert (fs.error or "").startswith("syntax error")  # recovered from
    assert {d.qualname: d.kind for d in fs.definitions} == {
        "helper": "function",
        "wrapped": "function",
        "Box": "struct",
        "Box.operator==": "method",  # however it is spaced
        "Box.operator bool": "method",  # a conversion operator: its type, not its qualifiers
        "Box.SIZE": "method",  # capitals are a macro's only outside a class
        "cache_get": "function",
        # a macro before the return type: tree-sitter reads `void` (`std::string`) as the scope and
        # the scope as an ERROR, once `void.print_colored`
        "fmt.print_colored": "method",
        "fmt.internal.name": "method",
    }


def test_cpp_classes_with_an_export_macro_define_what_plain_ones_do() -> None:
    # tree-sitter reads `class LIB_API Box {…}` as a function `Box` of type `class LIB_API`, with a
    # base class as an ERROR and a declarator, with two bases as a declaration; and `LIB_API struct
    # Pod {…}` as a function `struct`: each is read again without its macro.
    src = """\
        namespace lib {
        class LIB_API Box {
         public:
          Box() = default;
          int f() const { return 1; }
        };
        class LIB_API Derived final : public ::lib::Box {
          explicit Derived(int x) : Box() {}
          void g() override {}
        };
        template <class T> struct LIB_API Two : A, B<T> { void h() {} };
        LIB_API struct Pod { int x; void f() {} };
        LIB_API class Cls : public Base { void f() {} };
        class Outer { class LIB_API Inner { void i() {} }; };
        struct STAT st = {0};
        struct STAT stat_of(int fd) { return st; }
        }
    """
    plain = re.sub(r"\bLIB_API\b", " " * len("LIB_API"), src)  # (the same lines and columns)
    with_macro, without = parse("include/box.h", src), parse("include/box.h", plain)
    assert with_macro == without
    assert {q: d.kind for q, d in with_macro.items()} == {
        "lib.Box": "class",
        "lib.Box.Box": "method",
        "lib.Box.f": "method",
        "lib.Derived": "class",
        "lib.Derived.Derived": "method",
        "lib.Derived.g": "method",
        "lib.Two": "struct",
        "lib.Two.h": "method",
        "lib.Pod": "struct",
        "lib.Pod.f": "method",
        "lib.Cls": "class",
        "lib.Cls.f": "method",
        "lib.Outer": "class",
        "lib.Outer.Inner": "class",
        "lib.Outer.Inner.i": "method",
        "lib.stat_of": "function",  # a C function returning `struct STAT`: no class
    }
    lang, data = language_for_path("include/box.h"), textwrap.dedent(src).encode()
    assert lang is not None
    full = tuple(with_macro.values())
    for line in range(1, data.count(b"\n") + 2):
        assert lang.definitions_at(data, [line]) == _innermost_each(full, [line]), line
    for d in full:
        assert lang.span_of(data, d.qualname) == (d.start_line, d.end_line)
    assert lang.body_tokens_of(data, "lib.Pod.f") == ["{", "}"]


def test_csharp_types_members_and_usings() -> None:
    src = """\
        using System.Text;
        using J = Newtonsoft.Json;
        namespace Acme.Auth {
          public class Checker<T> : Base {
            public Checker(int x) { }
            public int Level { get; set; }
            public bool Check(string user) => Db.Query(user);
            public bool Check(string user, string action) { return Check(user); }
            struct Rule { }
            interface IRule { bool Test(string s); }
            enum Mode { Low }
            record Entry(int Id);
            void Run() { int Inner() => 1; Console.WriteLine(new StringBuilder()); Parse<Entry>(); }
            public int this[int i] => i;
            public static Checker<T> operator +(Checker<T> a, Checker<T> b) => a;
            public static explicit operator bool(Checker<T> c) => true;
            ~Checker() { }
          }
        }
    """
    assert kinds("src/Acme/Checker.cs", src) == {
        "Checker": "class",
        "Checker.Checker": "method",
        "Checker.Level": "method",
        "Checker.Check#1": "method",
        "Checker.Check": "method",
        "Checker.Rule": "struct",
        "Checker.IRule": "interface",
        "Checker.IRule.Test": "method",
        "Checker.Mode": "enum",
        "Checker.Entry": "class",
        "Checker.Run": "method",
        "Checker.Run.Inner": "function",
        "Checker.this": "method",
        "Checker.operator+": "method",
        "Checker.operator bool": "method",
        "Checker.~Checker": "method",
    }
    fs = parse_file("Checker.cs", textwrap.dedent(src).encode())
    assert fs.imports == (Import("System.Text", ("*",), None, 1, 0), Import("Newtonsoft.Json", (), "J", 2, 0))
    calls = {(c.caller, c.callee) for c in fs.calls}
    assert {("Checker.Check#1", "Db.Query"), ("Checker.Run", "StringBuilder"), ("Checker.Run", "Parse")} <= calls
    one, two = (parse_file("A.cs", f"class A {{ int X => {n}; }}".encode()).definitions[1] for n in (1, 2))
    assert one.body_hash != two.body_hash  # an expression-bodied property has a body


def test_ruby_classes_modules_and_singleton_methods() -> None:
    src = """\
        module Rack::Auth
          class Basic < AbstractHandler
            def call(env) = valid?(env) ? app.call(env) : unauthorized
            def self.realm; end
            class << self
              def build; end
            end
          end
        end
    """
    assert kinds("lib/rack/auth/basic.rb", src) == {
        "Rack.Auth": "class",
        "Rack.Auth.Basic": "class",
        "Rack.Auth.Basic.call": "method",
        "Rack.Auth.Basic.realm": "method",
        "Rack.Auth.Basic.build": "method",
    }
    assert Call("Rack.Auth.Basic.call", "app.call", 3) in parse_file("basic.rb", textwrap.dedent(src).encode()).calls


def test_php_classes_traits_and_calls() -> None:
    src = """\
        <?php
        namespace App\\Http;
        function helper($a) { return format($a); }
        abstract class Kernel extends Base implements Contract {
            public function handle(int $x): int { return $this->send($x) + static::boot() + new \\Lib\\Pipe(); }
        }
        interface Contract { public function handle(int $x): int; }
        trait Loggable { function log() {} }
        enum Mode: string { case On = 'on'; }
    """
    assert kinds("src/Http/Kernel.php", src) == {
        "helper": "function",
        "Kernel": "class",
        "Kernel.handle": "method",
        "Contract": "interface",
        "Contract.handle": "method",
        "Loggable": "trait",
        "Loggable.log": "method",
        "Mode": "enum",
    }
    calls = {(c.caller, c.callee) for c in parse_file("Kernel.php", textwrap.dedent(src).encode()).calls}
    assert {("helper", "format"), ("Kernel.handle", "this.send"), ("Kernel.handle", "static.boot")} <= calls
    assert ("Kernel.handle", "Lib.Pipe") in calls


def test_language_registry() -> None:
    first = {"python", "javascript", "typescript", "tsx", "go", "rust", "java"}
    assert set(LANGUAGES) == first | {"c", "cpp", "ruby", "php", "csharp", "kotlin"}
    for path, name in [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("a.jsx", "javascript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("A.TS", "typescript"),
        ("a.go", "go"),
        ("a.rs", "rust"),
        ("A.java", "java"),
        ("a.c", "c"),
        ("a.h", "cpp"),
        ("a.cc", "cpp"),
        ("a.HPP", "cpp"),
        ("a.rb", "ruby"),
        ("a.gemspec", "ruby"),
        ("a.php", "php"),
        ("A.cs", "csharp"),
        ("A.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
    ]:
        lang = language_for_path(path)
        assert lang is not None and lang.name == name, path
    assert language_for_path("README.md") is None
    assert language_for_path("Makefile") is None


# --- fingerprints ----------------------------------------------------------------------------

BASE = """\
def total(items, tax):
    # sum it up
    result = 0
    for item in items:
        result += item.price * (1 + tax)
    return result
"""


def one(source: str, path: str = "m.py") -> Definition:
    defs = parse_file(path, source.encode()).definitions
    assert len(defs) == 1
    return defs[0]


def test_rename_keeps_shape_not_body() -> None:
    a = one(BASE)
    b = one(BASE.replace("total", "grand_total").replace("result", "acc").replace("item", "it"))
    assert b.shape_hash == a.shape_hash
    assert b.body_hash != a.body_hash
    assert b.sig_hash != a.sig_hash  # the name is part of the signature


def test_comments_and_whitespace_keep_body_hash() -> None:
    a = one(BASE)
    edited = BASE.replace("# sum it up", "# add everything, tax included").replace(
        "result += item.price * (1 + tax)", "result  +=  item.price*(1+tax)   # per item"
    )
    b = one(edited)
    assert (b.body_hash, b.shape_hash, b.sig_hash) == (a.body_hash, a.shape_hash, a.sig_hash)
    # A docstring is documentation too.
    c = one(BASE.replace("    # sum it up\n", '    """Sum the prices."""\n'))
    assert c.body_hash == a.body_hash


def test_parameter_change_changes_signature_only() -> None:
    a = one(BASE)
    b = one(BASE.replace("def total(items, tax):", "def total(items, tax: float = 0.2) -> float:"))
    assert b.sig_hash != a.sig_hash
    assert (b.body_hash, b.shape_hash) == (a.body_hash, a.shape_hash)


def test_body_change_changes_body_and_shape() -> None:
    a = one(BASE)
    b = one(BASE.replace("(1 + tax)", "(1 - tax)"))
    assert b.body_hash != a.body_hash and b.shape_hash != a.shape_hash and b.sig_hash == a.sig_hash


def test_moving_a_function_keeps_all_hashes() -> None:
    a = one(BASE)
    moved = parse_file("other.py", ("import os\n\n\n" + BASE).encode()).definitions[0]
    assert (moved.sig_hash, moved.body_hash, moved.shape_hash) == (a.sig_hash, a.body_hash, a.shape_hash)
    assert moved.start_line == 4


@pytest.mark.parametrize(
    ("path", "src", "renamed"),
    [
        (
            "a.go",
            "package a\nfunc Sum(xs []int) int {\n\tt := 0 // total\n\tfor _, x := range xs { t += x }\n"
            "\treturn t\n}\n",
            ("t", "acc"),
        ),
        (
            "a.rs",
            "fn sum(xs: &[i32]) -> i32 {\n    let mut t = 0; // total\n    for x in xs { t += x; }\n    t\n}\n",
            ("t", "acc"),
        ),
        (
            "a.ts",
            "function sum(xs: number[]): number {\n  let t = 0; /* total */\n  for (const x of xs) t += x;\n"
            "  return t;\n}\n",
            ("t", "acc"),
        ),
        (
            "A.java",
            "class A {\n  int sum(int[] xs) {\n    int t = 0; // total\n    for (int x : xs) t += x;\n"
            "    return t;\n  }\n}\n",
            ("t", "acc"),
        ),
    ],
    ids=["go", "rust", "typescript", "java"],
)
def test_fingerprints_in_other_languages(path: str, src: str, renamed: tuple[str, str]) -> None:
    def fn(text: str) -> Definition:
        return next(d for d in parse_file(path, text.encode()).definitions if d.name == "sum" or d.name == "Sum")

    a = fn(src)
    b = fn(re.sub(rf"\b{renamed[0]}\b", renamed[1], src))
    assert b.shape_hash == a.shape_hash and b.body_hash != a.body_hash
    c = fn(src.replace("// total", "// running total").replace("/* total */", "/* running */"))
    assert c.body_hash == a.body_hash


def test_body_tokens_and_similarity() -> None:
    toks = body_tokens("m.py", BASE.encode(), "total")
    assert toks is not None
    assert toks[:4] == ["result", "=", "0", "for"]
    assert "# sum it up" not in toks
    assert body_tokens("m.py", BASE.encode(), "missing") is None
    changed = body_tokens("m.py", BASE.replace("(1 + tax)", "(1 + tax + 0.01)").encode(), "total")
    assert changed is not None
    assert token_similarity(toks, toks) == 1.0
    assert 0.8 < token_similarity(toks, changed) < 1.0
    assert token_similarity([], []) == 1.0 and token_similarity(toks, []) == 0.0


def test_token_similarity_on_long_bodies() -> None:
    rng = random.Random(7)
    vocab = [f"t{i}" for i in range(40)] + ["(", ")", ".", "=", ","] * 8
    a = [rng.choice(vocab) for _ in range(5000)]
    b = a[:2500] + ["x"] * 50 + a[2500:]
    sim = token_similarity(a, b)
    assert 0.98 < sim < 1.0
    assert token_similarity(a, list(reversed(a))) <= 1.0


# --- bad input ---------------------------------------------------------------------------------


def test_syntax_errors_keep_what_was_recovered() -> None:
    src = b"def good():\n    return 1\n\ndef bad(:\n    pass\n\nclass Fine:\n    x = 1\n"
    fs = parse_file("broken.py", src)
    assert fs.error is not None and "syntax error" in fs.error
    names = {d.qualname for d in fs.definitions}
    assert "good" in names and "Fine" in names


def test_invalid_utf8_is_replaced() -> None:
    fs = parse_file("latin.py", b"# caf\xe9\ndef ok():\n    return '\xff'\n")
    assert [d.qualname for d in fs.definitions] == ["ok"] and fs.error is None
    assert body_tokens("latin.py", b"# caf\xe9\ndef ok():\n    return '\xff'\n", "ok") == ["return", "'\ufffd'"]


def test_nul_bytes_mean_binary() -> None:
    fs = parse_file("blob.py", b"def f():\x00\x01\x02 pass\n")
    assert fs.definitions == () and fs.error is not None and "binary" in fs.error


def test_unsupported_language_does_not_raise() -> None:
    fs = parse_file("notes.txt", b"hello")
    assert fs.language == "" and fs.error == "unsupported language"


def test_deeply_nested_expression_does_not_recurse() -> None:
    src = "def f():\n    return " + "(" * 3000 + "1" + ")" * 3000 + "\n"
    d = one(src)
    assert d.qualname == "f"


def test_every_node_kind_and_field_named_exists_in_its_grammar() -> None:
    # The walk would silently never see a kind (or a field) its grammar lacks: a renamed one in a
    # new grammar version must fail here.
    for lang in LANGUAGES.values():
        grammar = lang.load_grammar()
        for kind in (
            *lang.definition_kinds,
            *lang.comment_kinds,
            *lang.atomic_kinds,
            *lang.text_kinds,
            *lang.call_kinds,
            *lang.import_kinds,
        ):
            assert grammar.id_for_node_kind(kind, True), (lang.name, kind)
        fields = {
            f
            for spec in lang.definition_kinds.values()
            for f in (*spec.sig, *((spec.body,) if isinstance(spec.body, str) else spec.body or ()))
        }
        # a field, else (a grammar without such fields: Kotlin's) the kind of a child node
        found = {f for f in fields if grammar.field_id_for_name(f) is not None or grammar.id_for_node_kind(f, True)}
        # JavaScript shares TypeScript's definition specs: its grammar has no type fields.
        assert fields - found <= ({"type_parameters", "return_type"} if lang.name == "javascript" else set())


def test_the_ast_grep_name_is_a_language_of_ast_grep() -> None:
    # The benchmark (and a check written for a file's language) asks ast-grep for the same language.
    for lang in LANGUAGES.values():
        SgRoot("", lang.ast_grep_name).root().find_all(kind="ERROR")


def test_importing_the_languages_loads_no_parser() -> None:
    # Reading cached symbols (a warm `comind why`) needs the data types, not a parser.
    code = (
        "import sys, comind.languages; "
        "assert not [m for m in sys.modules if m.startswith(('ast_grep_py', 'tree_sitter'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_analyse_takes_text_or_utf8_bytes() -> None:
    lang = LANGUAGES["python"]
    from_text, _ = lang.analyse(BASE)
    from_bytes, tokens = lang.analyse(BASE.encode(), keep_tokens=True)
    assert from_bytes == from_text and tokens["total"][:2] == ["result", "="]
    assert lang.parse(BASE).root_node.type == "module"


def test_shared_walk_handles_every_language() -> None:
    # Every registered language parses an empty file without an error.
    for lang in LANGUAGES.values():
        fs = parse_file("empty" + lang.extensions[0], b"")
        assert fs.language == lang.name and fs.error is None and fs.definitions == ()


# --- the output is frozen ------------------------------------------------------------------------

# Odd corners of every grammar: calls in f-strings and template literals (inside and outside
# definitions), JSX text, docstrings, doc comments, namespaces, overloads, MISSING tokens and ERROR
# nodes inside and outside definitions.
GOLDEN_SOURCES = {
    "python": (
        "m.py",
        '''\
"""Module doc."""
import os, sys as system
from .. import up
from pkg.sub import (a as b, c)
print(f"{os.getcwd()} {len(sys.argv)}")

@decorator(x=f"{helper()}")
class K(Base, metaclass=Meta):
    """Doc."""
    # comment
    def m(self, x: int = 1, *a, **k) -> "K":
        """Method doc."""
        y = f"{self.n(x)!r:>{width()}}" + 'plain {x}'
        return [z for z in y if z] \\
            or lambda q: q(y)

    def m(self):  # redefined
        def inner(): return outer.call()
        return inner

async def go(a, /, b, *, c):
    await thing.run(a)
    def broken(:
        pass
''',
    ),
    "javascript": (
        "a.jsx",
        """\
import def, { a as b, c } from "mod";
export * from "star";
const x = require("req");
const f = (a, b) => { /* c */ return g(a, `x${h(1)}y${`in${k()}`}`) + "s t"; };
obj = { m() { return this.n?.(1); }, p: function () { new Foo.Bar(1); } };
exports.e = function named() { return <div className="x">  hi {y()}  there </div>; };
class A extends B { static s = () => 1; #priv() { super.q(); } get v() { return 1 } }
function* gen() { yield tag`t${z()}`; }
function miss( { return 1
""",
    ),
    "typescript": (
        "a.ts",
        """\
import type { T } from "./t";
import x = require("y");
namespace NS { export function inner<T>(a: T): T { return id(a); } }
interface I<T> { m(a: number): void; p?: string }
type U<K> = { [P in keyof K]: K[P] } | null;
enum E { A = 1, B = f() }
abstract class C<T> implements I<T> {
  abstract am(): void;
  m(a: number): void { const q = a as unknown as T; call<T>(q!); }
}
function over(a: string): void;
function over(a: number): void;
function over(a: any) { return `${a}`; }
const z = cond ? a : b;
""",
    ),
    "tsx": (
        "c.tsx",
        """\
export const Comp = ({ a }: { a: number }) => <span>{a} text {fmt(a)}</span>;
function Other() { return <></>; }
""",
    ),
    "go": (
        "s.go",
        """\
package s

import (
    "fmt"
    alias "os/exec"
)

type S[T any] struct{ n T }
type I interface{ M(int) string }
type A = int

func (s *S[T]) Get(k string) (int, error) { fmt.Println("{}", k); return 0, nil }
func F() { defer g()(); x := func() int { return h() }; _ = x; `raw {}`
func Broken( {
""",
    ),
    "rust": (
        "l.rs",
        """\
//! crate doc
use std::{io::{self, Read}, fmt::*};
use a::b as c;
extern crate serde as s;
/// doc comment on S
struct S<T> { a: T }
impl<T: Clone> Trait for S<T> where T: Send { fn m(&self) -> i32 { println!("{}", self.a); helper::<u8>(1) } }
impl S<u8> { pub fn new() -> Self { S::<u8> { a: 0 } } }
mod inner { fn f() { let x = ; } pub(crate) trait T { fn sig(&self); } }
enum E { A(i32), B { x: u8 } }
type Alias<'a> = &'a str;
fn broken( { }
""",
    ),
    "java": (
        "J.java",
        '''\
package p;
import java.util.*;
import static java.lang.Math.max;
public class J<T> extends B implements I {
  /** doc */
  @Override public <U> int m(U u) throws E { return helper(u) + new Thing<>(1).x(); }
  J() { super(); }
  record R(int a) implements Q { R { check(a); } }
  @interface Ann { String value() default ""; }
  enum En implements X { A, B; void e() {} }
  void t() { String s = """
     text block {}
     """; obj.call(s; }
}
''',
    ),
}

# sha256 of everything the index says about each source (definitions with their hashes, imports,
# calls, the error, the body tokens), recorded before the walk was rewritten for speed. Stored
# anchors carry these hashes: a change here makes every anchor look drifted.
GOLDEN_DIGESTS = {
    "python": "0c94e76025fc8f19aacbda6793d09ac7",
    "javascript": "29b641ebe3b64faff4f526f267530ba2",
    "typescript": "a654e4d29d829fcafe1805a82a7902c8",
    "tsx": "feadeb6629292e28d6dd1102bbe3d428",
    "go": "40672720ba341099bbe96af72c4d6586",
    "rust": "9321fc5107b83ba926b570505b917802",
    "java": "46dc1ebb7f3b044abaed2ef5c54c7dab",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_SOURCES))
def test_output_is_unchanged(name: str) -> None:
    path, src = GOLDEN_SOURCES[name]
    lang = language_for_path(path)
    assert lang is not None
    fs, tokens = lang.analyse(src, keep_tokens=True)
    blob = json.dumps([repr(fs), sorted(tokens.items())], ensure_ascii=False)
    assert hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32] == GOLDEN_DIGESTS[name]


def test_calls_in_strings_know_their_caller() -> None:
    path, src = GOLDEN_SOURCES["python"]
    calls = {(c.caller, c.callee) for c in parse_file(path, src.encode()).calls}
    assert {
        ("", "os.getcwd"),
        ("", "helper"),
        ("K.m#1", "self.n"),
        ("K.m#1", "width"),
        ("K.m.inner", "outer.call"),
    } <= calls
    # Braces in a Rust or Go string are formatting, not code.
    for name in ("rust", "go"):
        path, src = GOLDEN_SOURCES[name]
        assert not any(c.callee == "{}" for c in parse_file(path, src.encode()).calls)


# Pieces of code in every registered language, cut and spliced at random: the walk must read any
# input (unbalanced brackets, stray quotes, invalid UTF-8, NUL-free binary noise) without raising.
_PIECES = [
    "def ",
    "class ",
    "function ",
    "fn ",
    "func ",
    "impl ",
    "interface ",
    "struct ",
    "enum ",
    "type ",
    "async ",
    "export ",
    "import ",
    "from ",
    "return ",
    "=> ",
    "f(",
    "g.h(",
    "x",
    "y1",
    "_z",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ":",
    ";",
    ",",
    ".",
    "=",
    "+",
    "'",
    '"',
    "`",
    "${",
    "f'{",
    "#",
    "//",
    "/*",
    "*/",
    '"""',
    "\\",
    "::",
    "->",
    "$",
    "namespace ",
    "LIB_API ",
    "template<",
    "#define ",
    "<?php ",
    "module ",
    "end\n",
    "@dec\n",
    "\n",
    "\n    ",
    "\t",
    " ",
    "é",
    "漢",
    "\U0001f600",
    "\r\n",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=60), st.binary(max_size=8), st.sampled_from(sorted(LANGUAGES)))
@settings(max_examples=300, deadline=None)
def test_the_walk_reads_any_input(pieces: list[str], noise: bytes, name: str) -> None:
    lang = LANGUAGES[name]
    data = "".join(pieces).encode() + noise.replace(b"\0", b"")
    fs = parse_file(f"x{lang.extensions[0]}", data)
    assert fs.language == name and fs == parse_file(f"x{lang.extensions[0]}", data)  # deterministic
    assert not (fs.error or "").startswith("parse failed"), fs.error  # syntax errors are reported, never a crash
    lines = data.count(b"\n") + 1
    for d in fs.definitions:
        assert 1 <= d.start_line <= d.end_line <= lines and d.qualname and len(d.body_hash) == 32
    assert all(1 <= c.line <= lines for c in fs.calls) and all(1 <= i.line <= lines for i in fs.imports)
    text = data.decode("utf-8", "replace")
    assert lang.analyse(text)[0] == fs  # text and its UTF-8 bytes read alike


# --- the definitions around a few lines ------------------------------------------------------------


def _innermost_each(definitions: tuple[Definition, ...], lines: list[int]) -> tuple[Definition, ...]:
    """What `definitions_at` promises: the innermost of all definitions for each line, in file order."""
    from comind.anchoring import innermost

    picked = {id(d) for n in lines if (d := innermost(definitions, n)) is not None}
    return tuple(d for d in definitions if id(d) in picked)


@pytest.mark.parametrize("name", sorted(GOLDEN_SOURCES))
def test_definitions_at_are_those_of_the_whole_file(name: str) -> None:
    """Qualnames made unique among all definitions (`K.m#1`), spans, kinds and fingerprints: the
    same as the full walk, for every line alone and for all of them at once."""
    path, src = GOLDEN_SOURCES[name]
    lang = language_for_path(path)
    assert lang is not None
    data = src.encode()
    full = parse_file(path, data).definitions
    count = data.count(b"\n") + 1
    for line in range(1, count + 1):
        assert lang.definitions_at(data, [line]) == _innermost_each(full, [line]), line
    everything = list(range(1, count + 1))
    assert lang.definitions_at(data, everything) == _innermost_each(full, everything)
    assert lang.definitions_at(data, []) == ()


@pytest.mark.parametrize("kept", [False, True])
@pytest.mark.parametrize("name", sorted(GOLDEN_SOURCES))
def test_fingerprints_added_later_are_those_definitions_at_gives(name: str, kept: bool) -> None:
    """Definitions chosen without fingerprints get the same ones later: from the nodes `definitions_at`
    found in a kept tree, or (no tree kept) found again by qualname and span."""
    path, src = GOLDEN_SOURCES[name]
    lang = language_for_path(path)
    assert lang is not None
    data = src.encode()
    with keeping_trees() if kept else contextlib.nullcontext():
        for line in range(1, data.count(b"\n") + 2):
            unprinted = lang.definitions_at(data, [line], fingerprints=False)
            assert all(d.sig_hash == d.body_hash == d.shape_hash == "" for d in unprinted)
            assert lang.fingerprinted(data, unprinted) == lang.definitions_at(data, [line]), line
        assert lang.fingerprinted(data, []) == ()


@pytest.mark.parametrize("kept", [False, True])
def test_namesakes_on_one_line_are_fingerprinted_as_the_whole_file_has_them(kept: bool) -> None:
    """Overloads on one line: a qualname and a span tell them apart only with their `#n`."""
    data = b"function f(a: string): void; function f(a: number): void { return } function f(a: any) {}\n"
    lang = language_for_path("a.ts")
    assert lang is not None
    with keeping_trees() if kept else contextlib.nullcontext():
        unprinted = lang.definitions_at(data, [], [(1, 1)], fingerprints=False)
        assert [d.qualname for d in unprinted] == ["f#1"]
        assert lang.fingerprinted(data, unprinted) == parse_file("a.ts", data).definitions[:1]


def test_definitions_at_read_only_the_definitions_asked_for() -> None:
    """A line in one method of a large file fingerprints that method, not the class around it."""
    src = "class Big:\n" + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(200))
    lang = language_for_path("big.py")
    assert lang is not None
    found = lang.definitions_at(src.encode(), [2 * 150 + 3])
    assert [d.qualname for d in found] == ["Big.m150"]
    assert found == _innermost_each(parse_file("big.py", src.encode()).definitions, [303])


@given(
    st.lists(st.sampled_from(_PIECES), max_size=60),
    st.sampled_from(sorted(LANGUAGES)),
    st.lists(st.integers(1, 40), max_size=6),
)
@settings(max_examples=300, deadline=None)
def test_definitions_at_agree_with_the_walk_on_any_input(pieces: list[str], name: str, lines: list[int]) -> None:
    from comind.languages import definitions_at, fingerprinted

    path = f"x{LANGUAGES[name].extensions[0]}"
    data = "".join(pieces).encode()
    assert definitions_at(path, data, lines) == _innermost_each(parse_file(path, data).definitions, lines)
    assert fingerprinted(path, data, definitions_at(path, data, lines, fingerprints=False)) == definitions_at(
        path, data, lines
    )


def test_trees_are_kept_only_while_asked_and_within_their_budget() -> None:
    python = language_for_path("a.py")
    assert python is not None
    source = b"def f():\n    return 1\n"
    assert python.parse(source) is not python.parse(source)  # nothing is kept by default
    with keeping_trees():
        with keeping_trees():  # (nested: the outer caller still keeps them)
            kept = python.parse(source)
        assert python.parse(source) is kept
        assert python.parse(bytearray(source).decode()) is kept  # the same text, as str
        others = [python.parse(b"x = %d\n" % n + b"#" * (_TREES.limit // 8)) for n in range(16)]
        assert python.parse(source) is not kept  # pushed out by newer ones, past the budget
        assert python.parse(others[-1].root_node.text or b"") is others[-1]
        assert _TREES.size <= _TREES.limit
    assert _TREES.size == 0 and python.parse(source) is not python.parse(source)  # let go after
