"""C++: what C defines, and classes, namespaces and methods. A method is ``Class.method`` whether
written in its class or outside it (``void Foo::bar()``, nested in the namespaces around it);
``namespace a::b { … }`` prefixes qualnames with ``a.b``; destructors and operators keep their
names, whitespace aside (``Foo.~Foo``, ``Foo.operator==``, ``Foo.operator new``), a conversion
operator its type (``Foo.operator bool``). Templates are read through: ``Foo<T>`` is ``Foo``.

A ``.h`` header is C++ here (ast-grep reads it as C): the C++ grammar reads a C header as well as C's
does and a C++ one far better (ERROR nodes: C's 6, 3 and 2,494 against C++'s 7, 3 and 177 on a C
server's, a C library's and a C++ library's main header; that last one parsed 3x faster). It reads
``MACRO T *\\nf(void)`` as ``T::*f(void)`` with a made-up (MISSING) ``::``: such a name is ``f``; and
``MACRO void ns::f()`` with ``void`` as the scope and ``ns`` an ERROR: such a name is ``ns.f``.

An export macro (``class LIB_API Box : Base {…};``, ``LIB_API struct Pod {…};``) makes it read a
function named ``Box`` (or ``struct``) with a statement block for a body, or a declaration full of
errors. Such a statement is read again without the macro (that statement alone: the same parser over
its source's ranges), and defines what ``class Box : Base {…};`` does; the macro is then no token of
what holds the class."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, strip_generics, text
from .c import CAPITALS, WRAPPERS, C, declared, spaced

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "destructor_name",
        "operator_name",
        "operator_cast",
        "template_function",
        "template_method",
    }
)
_OPERATOR = re.compile(r"operator(?![\w$])")
SPECIFIERS = frozenset({"class_specifier", "struct_specifier", "union_specifier"})


class Cpp(C):
    name = "cpp"
    grammar = ("tree_sitter_cpp", "language")
    ast_grep_name = "cpp"
    extensions: ClassVar[tuple[str, ...]] = (".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ipp")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        **C.definition_kinds,
        "class_specifier": DefSpec("class", sig=()),
        "alias_declaration": DefSpec("type", sig=(), body="type"),
        "namespace_definition": DefSpec("", sig=()),
    }
    atomic_kinds = C.atomic_kinds | {"raw_string_literal"}
    owner_nests = True  # `namespace ns { void Foo::bar() }` is ns.Foo.bar
    misread_kinds = frozenset({"function_definition", "declaration"})

    def name_of(self, node: Node) -> str | None:
        kind = node.type
        if kind == "namespace_definition":
            name = node.child_by_field_name("name")  # none: an anonymous namespace prefixes nothing
            return ".".join(text(name).replace("::", " ").split()) if name is not None else None
        if kind == "function_definition":
            declarator = _declared(node)
            d = _last(declarator)
            function = _function_name(d) if d is not None and d.type in NAMES and not d.has_error else None
            if function is not None and d is not None and (d.type != "identifier" or _scoped(declarator)):
                return function  # (a method, an operator: `not_a_function`'s capitals are for free functions)
            return None if self.not_a_function(node, function) else function
        return super().name_of(node)

    def kind_of(self, node: Node, spec: DefSpec, parent_kind: str | None) -> str:
        if node.type == "function_definition" and _scoped(_declared(node)):
            return "method"  # (a namespace's function defined as `ns::f` reads as one too: rarer)
        return super().kind_of(node, spec, parent_kind)

    def owner_of(self, node: Node) -> str | None:
        d = _declared(node) if node.type == "function_definition" else None
        scopes: list[str] = []
        while _scoped(d):
            assert d is not None
            scope = d.child_by_field_name("scope")
            error = next((c for c in d.children if c.type == "ERROR"), None)
            if error is not None:  # `MACRO void ns::f()`: the return type read as the scope, `ns` an ERROR
                scopes, scope = [], error
            if scope is not None:
                scopes.append(strip_generics(text(scope)).strip())
            d = d.child_by_field_name("name")
        return ".".join(s for s in scopes if s) or None

    def reread(self, node: Node, source: bytes) -> Node | None:
        macro = _export_macro(node)
        if macro is None:
            return None
        from tree_sitter import Parser, Range

        parser = _rereaders.get(self.name)
        if parser is None:  # one per language, its ranges set per statement: a Parser is not free
            parser = _rereaders[self.name] = Parser(self.load_grammar())
        parser.included_ranges = [
            Range(node.start_point, macro.start_point, node.start_byte, macro.start_byte),
            Range(macro.end_point, node.end_point, macro.end_byte, node.end_byte),
        ]
        root = parser.parse(source).root_node
        first = root.children[0] if root.child_count else None
        if first is None or first.type not in SPECIFIERS or first.child_by_field_name("body") is None:
            return None  # (not a class after all)
        return root

    def written_word(self, name: str) -> str:
        return "operator" if _OPERATOR.match(name) else super().written_word(name)


_rereaders: dict[str, Parser] = {}


def _export_macro(node: Node) -> Node | None:
    """The macro in capitals that made tree-sitter misread a class or struct definition:
    `class MACRO Box {…}` as a function `Box` of type `class MACRO` (`class MACRO Box : A, B {…}` as
    a declaration with errors), `MACRO struct Pod {…}` as a function `struct` of type `MACRO`."""
    kind = node.child_by_field_name("type")
    if kind is None:
        return None
    d = node.child_by_field_name("declarator")
    if kind.type in SPECIFIERS and kind.child_by_field_name("body") is None:
        macro = kind.child_by_field_name("name")
        # A function's declarator has parameters; the misread one is a name (`Box`, `Base`, `ns::Base`).
        function = node.type == "function_definition"
        misread = d is not None and "declarator" not in d.type if function else node.has_error
    elif kind.type == "type_identifier" and node.type == "function_definition":
        macro, misread = kind, d is not None and d.type == "identifier" and text(d) in ("class", "struct", "union")
    else:
        return None
    if not misread or macro is None or macro.type != "type_identifier" or not CAPITALS.fullmatch(text(macro)):
        return None
    return macro


def _scoped(d: Node | None) -> bool:
    """A qualified name as written, not one around a `::` tree-sitter made up (MISSING)."""
    return d is not None and d.type == "qualified_identifier" and not any(c.is_missing for c in d.children)


def _declared(node: Node) -> Node | None:
    """`declared`, through a made-up `::` (`MACRO T *\nf()` read as `T::*f()`, `std::string f()` as
    `std::string::f()`): what is before it is the return type."""
    d = q = declared(node)
    while q is not None and q.type == "qualified_identifier":
        if _scoped(q):
            q = q.child_by_field_name("name")
            continue
        d = q.child_by_field_name("name")
        while d is not None and d.type in WRAPPERS | {"pointer_type_declarator", "reference_type_declarator"}:
            d = d.child_by_field_name("declarator")
        if d is not None and d.type == "function_declarator":
            d = d.child_by_field_name("declarator")
        q = d
    return d


def _last(d: Node | None) -> Node | None:
    """The name at the end of `a::B<T>::f`."""
    while _scoped(d):
        assert d is not None
        d = d.child_by_field_name("name")
    return d


def _function_name(d: Node) -> str:
    """`operator ==` is `operator==`, `operator new []` is `operator new[]`, `operator bool() const`
    is `operator bool`: the name without its whitespace, parameters and qualifiers."""
    if d.type == "operator_name":
        rest = "".join(text(d).split())[len("operator") :]
        return f"operator {rest}" if rest[:1].isalpha() else f"operator{rest}"
    if d.type == "operator_cast":
        inner = d.child_by_field_name("declarator")
        while inner is not None and inner.type != "abstract_function_declarator":
            inner = inner.child_by_field_name("declarator")
        end = inner.start_byte if inner is not None else d.end_byte
        return " ".join((d.text or b"")[: end - d.start_byte].decode("utf-8", "surrogatepass").split())
    return spaced(d)


LANGUAGE = Cpp()
