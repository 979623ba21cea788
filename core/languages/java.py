"""Java: classes, records, interfaces, annotation types, enums, methods and constructors; nested
classes give ``Outer.Inner.method``. Overloads share a qualname and are numbered (see _base)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, type_name

if TYPE_CHECKING:
    from ast_grep_py import SgNode

METHOD = DefSpec("method", sig=("type_parameters", "parameters", "type"))


class Java(Language):
    name = "java"
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

    def callee(self, node: SgNode) -> str | None:
        if node.kind() == "object_creation_expression":
            t = node.field("type")
            return dotted(type_name(t.text())) if t is not None else None
        name, obj = node.field("name"), node.field("object")
        if name is None:
            return None
        return dotted(f"{obj.text()}.{name.text()}" if obj is not None else name.text())

    def imports(self, node: SgNode) -> list[Import]:
        line = node.range().start.line + 1
        path = next((c for c in node.named_children() if c.kind() in ("scoped_identifier", "identifier")),
                    None)
        if path is None:
            return []
        text = "".join(path.text().split())
        if any(c.kind() == "asterisk" for c in node.children()):
            return [Import(text, ("*",), None, line)]
        module, _, last = text.rpartition(".")
        return [Import(module, (last,), None, line)]


LANGUAGE = Java()
