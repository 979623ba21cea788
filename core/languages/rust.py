"""Rust: functions, structs, unions, enums, traits, type aliases and impl blocks.

An impl block is a definition named ``impl Type`` or ``impl Trait for Type``; the functions in it
are ``Type.method`` either way. ``mod m { … }`` prefixes qualnames with ``m``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, strip_generics, text, type_name

if TYPE_CHECKING:
    from tree_sitter import Node

FUNCTION = DefSpec("function")


class Rust(Language):
    name = "rust"
    grammar = ("tree_sitter_rust", "language")
    ast_grep_name = "rust"
    extensions: ClassVar[tuple[str, ...]] = (".rs",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_item": FUNCTION,
        "function_signature_item": DefSpec("function", body=None),
        "struct_item": DefSpec("struct", sig=("type_parameters",)),
        "union_item": DefSpec("struct", sig=("type_parameters",)),
        "enum_item": DefSpec("enum", sig=("type_parameters",)),
        "trait_item": DefSpec("trait", sig=("type_parameters", "bounds")),
        "impl_item": DefSpec("impl", sig=("type_parameters", "trait", "type")),
        "type_item": DefSpec("type", sig=("type_parameters",), body="type"),
        "mod_item": DefSpec(""),
    }
    comment_kinds = frozenset({"line_comment", "block_comment"})
    atomic_kinds = frozenset({"string_literal", "raw_string_literal", "char_literal"})
    call_kinds = frozenset({"call_expression"})
    import_kinds = frozenset({"use_declaration", "extern_crate_declaration"})
    string_calls = False  # no interpolation in its string literals

    def name_of(self, node: Node) -> str | None:
        if node.type != "impl_item":
            return super().name_of(node)
        t, tr = node.child_by_field_name("type"), node.child_by_field_name("trait")
        if t is None:
            return None
        if tr is not None:
            return f"impl {type_name(text(tr))} for {type_name(text(t))}"
        return f"impl {type_name(text(t))}"

    def framed(self, qualname: str) -> str | None:
        """`m.impl Trait for Foo` and `m.impl Foo` stand for `m.Foo` (type names hold no dot)."""
        prefix, _, block = qualname.rpartition(".")
        if not block.startswith("impl "):
            return None
        name = block.rpartition(" for ")[2] if " for " in block else block.removeprefix("impl ")
        return f"{prefix}.{name}" if prefix else name

    def frame_of(self, node: Node, qualname: str, prefix: str) -> str:
        if node.type == "impl_item" and (t := node.child_by_field_name("type")) is not None:
            name = type_name(text(t))
            return f"{prefix}.{name}" if prefix else name
        return qualname

    def callee(self, node: Node) -> str | None:
        f = node.child_by_field_name("function")
        name = dotted(strip_generics(text(f))) if f is not None else None
        return _from_the_file(name, node) if name and name.startswith(_RELATIVE) else name

    def imports(self, node: Node) -> list[Import]:
        line = node.start_point[0] + 1
        if node.type == "extern_crate_declaration":
            crate, renamed = node.child_by_field_name("name"), node.child_by_field_name("alias")
            return [Import(text(crate), (), text(renamed) if renamed else None, line)] if crate else []
        arg = node.child_by_field_name("argument")
        if arg is None:
            return []
        out = []
        for written, alias in _use_paths(arg, ""):
            path = _from_the_file(written, node) if written.startswith(_RELATIVE) else written
            module, _, last = path.rpartition("::")
            if last == "*":
                out.append(Import(module, ("*",), None, line))
            elif last == "self":  # use a::b::{self}
                out.append(Import(module, (), alias, line))
            elif module:
                out.append(Import(module, (last,), alias, line))
            else:
                out.append(Import(last, (), alias, line))
        return out


_RELATIVE = ("self::", "super::")


def _from_the_file(path: str, node: Node) -> str:
    """A `self::` or `super::` path as the file's own module reads it: inside `mod tests { … }`,
    `super::x` is the file's `self::x` and `self::x` its `self::tests::x` (an inline module is no
    file of its own, and the graph resolves paths from the file's)."""
    mods = []  # the inline modules around the node, innermost first
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item" and (name := parent.child_by_field_name("name")) is not None:
            mods.append(text(name))
        parent = parent.parent
    if not mods:
        return path
    mods.reverse()
    parts = path.split("::")
    if parts[0] == "self":
        return "::".join(["self", *mods, *parts[1:]])
    up = next((i for i, part in enumerate(parts) if part != "super"), len(parts))
    if up <= len(mods):
        return "::".join(["self", *mods[: len(mods) - up], *parts[up:]])
    return "::".join(["super"] * (up - len(mods)) + parts[up:])


def _join(prefix: str, path: str) -> str:
    path = "".join(path.split())
    return f"{prefix}::{path}" if prefix and path else prefix or path


def _code(node: Node) -> str:
    """A node's text without the comments in it (`a::/* why */b`)."""
    if b"/" not in (node.text or b""):  # (no comment: the common case)
        return text(node)
    parts, todo = [], [node]
    while todo:
        n = todo.pop()
        if n.type in LANGUAGE.comment_kinds:
            continue
        if n.child_count:
            todo.extend(reversed(n.children))
        else:
            parts.append(text(n))
    return " ".join(parts)


def _use_paths(node: Node, prefix: str) -> list[tuple[str, str | None]]:
    kind = node.type
    if kind == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        return [(_join(prefix, _code(path) if path else ""), text(alias) if alias else None)]
    if kind == "use_wildcard":
        inner = next((c for c in node.named_children if c.type not in LANGUAGE.comment_kinds), None)
        return [(_join(_join(prefix, _code(inner) if inner else ""), "*"), None)]
    if kind == "scoped_use_list":
        path, lst = node.child_by_field_name("path"), node.child_by_field_name("list")
        base = _join(prefix, _code(path) if path else "")
        return _use_paths(lst, base) if lst is not None else []
    if kind == "use_list":  # (a comment in the list is none of its names)
        return [p for c in node.named_children if c.type not in LANGUAGE.comment_kinds for p in _use_paths(c, prefix)]
    return [(_join(prefix, _code(node)), None)]


LANGUAGE = Rust()
