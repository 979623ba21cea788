"""C: functions, function-like macros, and structs, unions and enums that have a body, and
typedefs. A function's name is read through its declarators (``static int *f(void)`` and
``int (f)(int)`` are ``f``); ``struct S s;`` uses ``S`` and defines nothing. Headers (``.h``) are
read as C++ (see cpp).

What a macro makes tree-sitter read as a function is not one: a name in parentheses
(``TEST_IMPL(name) {…}``), one named by a keyword (``MACRO(x) if (…) {…}`` would be
``if``, ``FMT_BEGIN_NAMESPACE namespace detail {…}`` ``namespace``) or, outside a class, in capitals
(``TEST(suite, name) {…}``: every test would be ``TEST#n``, ``JSON_CATCH (…) {…}`` a function).

Imports are ``#include``s, as written: ``"net/sock.h"`` with level 1 (looked up beside the file
first), ``<stdio.h>`` with level 0."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text, type_name

if TYPE_CHECKING:
    from tree_sitter import Node

FUNCTION = DefSpec("function", sig=("type", "declarator"))
MACRO = DefSpec("function", sig=("parameters",), body="value")
# Declarators that wrap the one naming a function: `*f(void)`, `(f)(int)`, `&f()` in C++.
WRAPPERS = frozenset(
    {"pointer_declarator", "reference_declarator", "parenthesized_declarator", "attributed_declarator"}
)
# Words a function cannot be named (C's, then C++'s): a macro before them made tree-sitter read one.
_KEYWORDS = """
    auto break case char const continue default do double else enum extern float for goto if inline
    int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while
    catch class constexpr decltype delete explicit friend mutable namespace new noexcept operator
    private protected public static_assert template this throw try typename using virtual
"""
KEYWORDS = frozenset(_KEYWORDS.split())
CAPITALS = re.compile(r"[A-Z][A-Z0-9_]+")


def declared(node: Node) -> Node | None:
    """The node naming what a function definition declares, through its declarators."""
    d = node.child_by_field_name("declarator")
    while d is not None and (d.type in WRAPPERS or d.type == "function_declarator"):
        inner = d.child_by_field_name("declarator")
        if inner is None:  # `(f)` and C++'s reference_declarator hold their declarator unnamed
            inner = next((c for c in d.named_children if c.type.endswith("declarator")), None)
            if inner is None and not d.has_error:
                inner = next((c for c in d.named_children if c.type.endswith("identifier")), None)
        d = inner
    return d


def called(node: Node) -> bool:
    """Is the definition a macro's call, `TEST_IMPL(name) {…}`: a name in parentheses, no parameters?"""
    d = node.child_by_field_name("declarator")
    return d is not None and d.type == "parenthesized_declarator"


def spaced(node: Node) -> str:
    """A name as written, its whitespace collapsed (`~Foo`, `f<int>`)."""
    return " ".join(text(node).split())


class C(Language):
    name = "c"
    grammar = ("tree_sitter_c", "language")
    ast_grep_name = "c"
    extensions: ClassVar[tuple[str, ...]] = (".c",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_definition": FUNCTION,
        "preproc_function_def": MACRO,
        "struct_specifier": DefSpec("struct", sig=()),
        "union_specifier": DefSpec("struct", sig=()),
        "enum_specifier": DefSpec("enum", sig=()),
        "type_definition": DefSpec("type", sig=(), body="type"),
    }
    atomic_kinds = frozenset({"string_literal", "char_literal", "system_lib_string"})
    call_kinds = frozenset({"call_expression"})
    import_kinds = frozenset({"preproc_include"})
    string_calls = False  # no interpolation in its string literals

    def name_of(self, node: Node) -> str | None:
        kind = node.type
        if kind == "function_definition":
            d = declared(node)
            function = text(d) if d is not None and d.type == "identifier" and not d.has_error else None
            return None if self.not_a_function(node, function) else function
        if kind == "type_definition":
            d = declared(node)
            return text(d) if d is not None and d.type == "type_identifier" else None
        if kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
            name = node.child_by_field_name("name")
            if name is None or node.child_by_field_name("body") is None:
                return None  # anonymous, or a use (`struct S s;`), not a definition
            return type_name(text(name))
        return super().name_of(node)

    def not_a_function(self, node: Node, name: str | None) -> bool:
        """Is this `function_definition` a macro's call that tree-sitter read as one?"""
        if name is None or name in KEYWORDS or called(node):
            return True
        parent = node.parent
        while parent is not None and parent.type == "template_declaration":
            parent = parent.parent
        return CAPITALS.fullmatch(name) is not None and (parent is None or parent.type != "field_declaration_list")

    def callee(self, node: Node) -> str | None:
        f = node.child_by_field_name("function")
        return dotted(text(f).replace("->", ".")) if f is not None else None

    def imports(self, node: Node) -> list[Import]:
        path = node.child_by_field_name("path")
        if path is None or path.type not in ("string_literal", "system_lib_string"):
            return []  # `#include MACRO`
        written, beside = text(path).strip()[1:-1].strip().replace("\\", "/"), int(path.type == "string_literal")
        return [Import(written, (), None, node.start_point[0] + 1, beside)] if written else []


LANGUAGE = C()
