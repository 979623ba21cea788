"""PHP: functions, classes, interfaces, traits, enums and their methods. A file's ``namespace``
statement does not prefix qualnames (a braced ``namespace N { … }`` does not either): an anchor
names its file already. Calls are functions, methods (``$this->m``), static ones and ``new``.

Imports are ``use`` clauses, dotted: ``use App\\Http\\Kernel;`` is ``Import("App.Http", ("Kernel",))``,
a group ``use Foo\\{Bar, Baz as Q}`` one per name; ``use function``/``use const`` too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text

if TYPE_CHECKING:
    from tree_sitter import Node

METHOD = DefSpec("function", sig=("parameters", "return_type"))


class Php(Language):
    name = "php"
    grammar = ("tree_sitter_php", "language_php")
    ast_grep_name = "php"
    extensions: ClassVar[tuple[str, ...]] = (".php",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_definition": METHOD,
        "method_declaration": METHOD,
        "class_declaration": DefSpec("class", sig=()),
        "interface_declaration": DefSpec("interface", sig=()),
        "trait_declaration": DefSpec("trait", sig=()),
        "enum_declaration": DefSpec("enum", sig=()),
    }
    atomic_kinds = frozenset({"string", "encapsed_string", "heredoc", "nowdoc"})
    import_kinds = frozenset({"namespace_use_declaration"})
    call_kinds = frozenset(
        {"function_call_expression", "member_call_expression", "scoped_call_expression", "object_creation_expression"}
    )

    def callee(self, node: Node) -> str | None:
        kind = node.type
        if kind == "function_call_expression":
            f = node.child_by_field_name("function")
            return dotted(_dotted(f)) if f is not None else None
        if kind == "object_creation_expression":
            named = next((c for c in node.named_children if c.type in ("name", "qualified_name")), None)
            return dotted(_dotted(named)) if named is not None else None
        name = node.child_by_field_name("name")
        holder = node.child_by_field_name("object" if kind == "member_call_expression" else "scope")
        if name is None:
            return None
        written = _dotted(holder).lstrip("$") if holder is not None else ""  # `$this->m` is this.m
        return dotted(f"{written}.{text(name)}" if written else text(name))

    def imports(self, node: Node) -> list[Import]:
        line = node.start_point[0] + 1
        group = node.child_by_field_name("body")
        prefix = next((_dotted(c) for c in node.named_children if c.type == "namespace_name"), "") if group else ""
        out = []
        for clause in (group or node).named_children:
            if clause.type != "namespace_use_clause":
                continue
            named = next((c for c in clause.named_children if c.type in ("qualified_name", "name")), None)
            alias = clause.child_by_field_name("alias")
            if named is None or not _dotted(named):  # `use App\{B, C,};` ends with an empty clause
                continue
            full = ".".join(p for p in (prefix, _dotted(named)) if p)
            module, _, last = full.rpartition(".")
            out.append(Import(module, (last,), text(alias) if alias is not None else None, line))
        return out


def _dotted(node: Node) -> str:
    """`\\App\\Http\\Kernel` → `App.Http.Kernel`."""
    return ".".join(p for p in text(node).replace(" ", "").split("\\") if p)


LANGUAGE = Php()
