"""Java: classes, records, interfaces, annotation types, enums, methods and constructors; nested
classes give ``Outer.Inner.method``. Overloads share a qualname and are numbered (see _base)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text, type_name

if TYPE_CHECKING:
    from tree_sitter import Node

METHOD = DefSpec("method", sig=("type_parameters", "parameters", "type"))


class Java(Language):
    name = "java"
    grammar = ("tree_sitter_java", "language")
    ast_grep_name = "java"
    extensions: ClassVar[tuple[str, ...]] = (".java",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "class_declaration": DefSpec("class", sig=("type_parameters", "superclass", "interfaces")),
        "record_declaration": DefSpec("class", sig=("type_parameters", "parameters", "interfaces")),
        "interface_declaration": DefSpec("interface", sig=("type_parameters",)),
        "annotation_type_declaration": DefSpec("interface", sig=()),
        "enum_declaration": DefSpec("enum", sig=("interfaces",)),
        "method_declaration": METHOD,
        "constructor_declaration": METHOD,
        "compact_constructor_declaration": METHOD,
        "annotation_type_element_declaration": DefSpec("method", sig=("type",), body=None),
    }
    comment_kinds = frozenset({"line_comment", "block_comment"})
    atomic_kinds = frozenset({"string_literal", "character_literal"})  # text blocks are string_literal
    call_kinds = frozenset({"method_invocation", "object_creation_expression"})
    import_kinds = frozenset({"import_declaration"})

    def callee(self, node: Node) -> str | None:
        if node.type == "object_creation_expression":
            t = node.child_by_field_name("type")
            return dotted(type_name(text(t))) if t is not None else None
        name, obj = node.child_by_field_name("name"), node.child_by_field_name("object")
        if name is None:
            return None
        return dotted(f"{text(obj)}.{text(name)}" if obj is not None else text(name))

    def imports(self, node: Node) -> list[Import]:
        line = node.start_point[0] + 1
        path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if path is None:
            return []
        written = "".join(text(path).split())
        if any(c.type == "asterisk" for c in node.children):
            return [Import(written, ("*",), None, line)]
        module, _, last = written.rpartition(".")
        return [Import(module, (last,), None, line)]


LANGUAGE = Java()
