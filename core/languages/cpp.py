"""C++: what C defines, and classes, namespaces and methods. A method is ``Class.method`` whether
written in its class or outside it (``void Foo::bar()``, nested in the namespaces around it);
``namespace a::b { … }`` prefixes qualnames with ``a.b``; destructors and operators keep their
names (``Foo.~Foo``, ``Foo.operator==``). Templates are read through: ``Foo<T>`` is ``Foo``.

A ``.h`` header is C++ here (ast-grep reads it as C): the C++ grammar reads a C header as well as C's
does and a C++ one far better (ERROR nodes: C's 6, 3 and 2,494 against C++'s 7, 3 and 177 on a C
server's, a C library's and a C++ library's main header; that last one parsed 3x faster)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, strip_generics, text
from .c import FUNCTION, MACRO, C, declared, spaced

if TYPE_CHECKING:
    from tree_sitter import Node


class Cpp(C):
    name = "cpp"
    grammar = ("tree_sitter_cpp", "language")
    ast_grep_name = "cpp"
    extensions: ClassVar[tuple[str, ...]] = (".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ipp")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_definition": FUNCTION,
        "preproc_function_def": MACRO,
        "class_specifier": DefSpec("class", sig=()),
        "struct_specifier": DefSpec("struct", sig=()),
        "union_specifier": DefSpec("struct", sig=()),
        "enum_specifier": DefSpec("enum", sig=()),
        "type_definition": DefSpec("type", sig=(), body="type"),
        "alias_declaration": DefSpec("type", sig=(), body="type"),
        "namespace_definition": DefSpec("", sig=()),
    }
    atomic_kinds = frozenset({"string_literal", "raw_string_literal", "char_literal", "system_lib_string"})
    owner_nests = True  # `namespace ns { void Foo::bar() }` is ns.Foo.bar

    def name_of(self, node: Node) -> str | None:
        kind = node.type
        if kind == "namespace_definition":
            name = node.child_by_field_name("name")  # none: an anonymous namespace prefixes nothing
            return ".".join(text(name).replace("::", " ").split()) if name is not None else None
        if kind == "function_definition":
            d = declared(node)
            if d is not None and d.type == "qualified_identifier":
                d = _last(d)
            return spaced(d) if d is not None else None
        return super().name_of(node)

    def kind_of(self, node: Node, spec: DefSpec, parent_kind: str | None) -> str:
        if node.type == "function_definition" and _qualified(node):
            return "method"  # (a namespace's function defined as `ns::f` reads as one too: rarer)
        return super().kind_of(node, spec, parent_kind)

    def owner_of(self, node: Node) -> str | None:
        d = declared(node) if node.type == "function_definition" else None
        scopes = []
        while d is not None and d.type == "qualified_identifier":
            scope = d.child_by_field_name("scope")
            if scope is not None:
                scopes.append(strip_generics(text(scope)).strip())
            d = d.child_by_field_name("name")
        return ".".join(s for s in scopes if s) or None


def _qualified(node: Node) -> bool:
    d = declared(node)
    return d is not None and d.type == "qualified_identifier"


def _last(d: Node | None) -> Node | None:
    """The name at the end of `a::B<T>::f`."""
    while d is not None and d.type == "qualified_identifier":
        d = d.child_by_field_name("name")
    return d


LANGUAGE = Cpp()
