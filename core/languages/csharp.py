"""C#: classes, records, structs, interfaces, enums, methods, constructors, destructors
(``Foo.~Foo``), properties, indexers (``Foo.this``), events with accessors, operators
(``Foo.operator+``, a conversion ``Foo.operator bool``) and local functions; nested types give
``Outer.Inner.Method``. A namespace does not prefix qualnames (as a Java package does not): an
anchor names its file already. Overloads are numbered (see _base).

Imports are ``using`` directives: ``using System.Text;`` is ``Import("System.Text", ("*",))`` (a
namespace's names, as Java's ``.*``), ``using J = Newtonsoft.Json;`` an alias."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, strip_generics, text, type_name

if TYPE_CHECKING:
    from tree_sitter import Node

METHOD = DefSpec("method", sig=("type_parameters", "parameters", "returns"))
MEMBER = DefSpec("method", sig=("type",), body=("accessors", "value"))  # `{ get; set; }` or `=> x`


class CSharp(Language):
    name = "csharp"
    grammar = ("tree_sitter_c_sharp", "language")
    ast_grep_name = "csharp"
    extensions: ClassVar[tuple[str, ...]] = (".cs",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "class_declaration": DefSpec("class", sig=()),
        "record_declaration": DefSpec("class", sig=("parameters",)),
        "struct_declaration": DefSpec("struct", sig=()),
        "interface_declaration": DefSpec("interface", sig=()),
        "enum_declaration": DefSpec("enum", sig=()),
        "method_declaration": METHOD,
        "constructor_declaration": DefSpec("method", sig=("parameters",)),
        "property_declaration": MEMBER,
        "indexer_declaration": DefSpec("method", sig=("type", "parameters"), body=("accessors", "value")),
        "event_declaration": MEMBER,
        "operator_declaration": DefSpec("method", sig=("type", "parameters")),
        "conversion_operator_declaration": DefSpec("method", sig=("type", "parameters")),
        "destructor_declaration": DefSpec("method", sig=("parameters",)),
        "local_function_statement": DefSpec("function", sig=("type_parameters", "parameters", "type")),
    }
    atomic_kinds = frozenset({"string_literal", "verbatim_string_literal", "raw_string_literal", "character_literal"})
    call_kinds = frozenset({"invocation_expression", "object_creation_expression"})
    import_kinds = frozenset({"using_directive"})

    def name_of(self, node: Node) -> str | None:
        kind = node.type
        if kind == "indexer_declaration":
            return "this"
        if kind == "destructor_declaration":
            name = node.child_by_field_name("name")
            return f"~{text(name)}" if name is not None else None
        if kind == "operator_declaration":
            op = node.child_by_field_name("operator")
            return f"operator{text(op)}" if op is not None else None
        if kind == "conversion_operator_declaration":
            t = node.child_by_field_name("type")
            return f"operator {''.join(text(t).split())}" if t is not None else None
        return super().name_of(node)

    def written_word(self, name: str) -> str:
        return "operator" if name.startswith("operator") else super().written_word(name)

    def callee(self, node: Node) -> str | None:
        if node.type == "object_creation_expression":
            t = node.child_by_field_name("type")
            return dotted(type_name(text(t))) if t is not None else None
        f = node.child_by_field_name("function")  # `JsonConvert.DeserializeObject<T>(s)` calls the method
        return dotted(strip_generics(text(f))) if f is not None else None

    def imports(self, node: Node) -> list[Import]:
        alias = node.child_by_field_name("name")
        named = next(
            (c for c in node.named_children if c.type in ("qualified_name", "identifier") and c != alias), None
        )
        if named is None:
            return []
        written = "".join(text(named).split())
        line = node.start_point[0] + 1
        if alias is not None:
            return [Import(written, (), text(alias), line)]
        return [Import(written, ("*",), None, line)]


LANGUAGE = CSharp()
