"""`definitions_at` walks only down to the lines asked for and to where the definitions' names are
written: the same definitions, qualnames (`#n`) and fingerprints as the whole file's walk."""

from __future__ import annotations

import pytest

from comind.anchoring import innermost
from comind.languages import Definition, language_for_path, parse_file
from comind.languages import _base as base


def expected(
    path: str, data: bytes, lines: list[int], definitions: tuple[Definition, ...] = ()
) -> tuple[Definition, ...]:
    definitions = definitions or parse_file(path, data).definitions
    picked = {id(d) for n in lines if (d := innermost(definitions, n)) is not None}
    return tuple(d for d in definitions if id(d) in picked)


def line_of(src: str, text: str) -> int:
    return src[: src.index(text)].count("\n") + 1


FILLER = {
    ".py": "def f{i}(a):\n    return a * {i}\n\n\n",
    ".rs": "fn f{i}(a: u32) -> u32 {{\n    a * {i}\n}}\n\n",
    ".go": "func f{i}(a int) int {{\n\treturn a * {i}\n}}\n\n",
    ".java": "    int f{i}(int a) {{\n        return a * {i};\n    }}\n\n",
    ".js": "function f{i}(a) {{\n  return a * {i};\n}}\n\n",
    ".ts": "function f{i}(a: number): number {{\n  return a * {i};\n}}\n\n",
    ".kt": "    fun f{i}(a: Int): Int {{\n        return a * {i}\n    }}\n\n",
}

TRICKY = {
    "m.py": '''import os


def helper(x):
    return x + 1


@decorator(
    option=1,
)
def decorated():
    return 2


TEMPLATE = """
def fake():
    return 'not code'
class Fake:
    pass
"""
OTHER = \'\'\'
def also_fake(): pass
\'\'\'


def dup():
    return 1


if os.name == "nt":
    def platform():
        return "nt"
else:
    def platform():
        return "posix"

total = 1 + \\
helper(2)


class K:
    def m(self):
        return 1

    @property
    def p(self):
        return 2
{filler}
def dup():
    return 2


class K:
    def m(self):
        return 3
''',
    "m.rs": """use std::fmt;

const RAW: &str = r#"
fn fake() {
}
"#;

fn braces() -> char {
    let _ = '{';
    let _s = "}";
    '}'
}

struct Holder<'a> {
    s: &'a str,
}

impl<'a> Holder<'a> {
    fn dup(&self) -> u8 {
        1
    }
}

impl fmt::Display for Holder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.s)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn inner() {}
}
{filler}
impl<'a> Holder<'a> {
    fn dup(&self) -> u8 {
        2
    }
}

/* a /* nested */ comment
fn commented() {}
*/
fn after_nested() {}
""",
    "m.js": """const re = /["'`{]/g;
const t = `line
${ { a: "}" }.a }
function fake() {
}
`;

class Widget {
  render() {
    return 1;
  }
}

function dup() {
  return 1;
}

if (re) {
  dup();
}
else {
  dup();
}

const arrow = (x) => {
  return x / 2 / 1;
};
{filler}
function dup() {
  return 2;
}
""",
    "m.ts": """namespace Space {
  export function inner(): void {}
}

function over(a: string): string;
function over(a: number): number;
function over(a: any): any {
  return a;
}

@sealed
class Decorated {
  method(): string {
    return `${"}"}`;
  }
}

interface Shape {
  area(): number;
}
{filler}
function over(a: boolean): boolean {
  return a;
}
""",
    "m.go": """package main

import "fmt"

var raw = `
func fake() {
}
`

func dup() int {
	return 1
}

type T struct{}

func (t T) dup() int {
	fmt.Println('}')
	return 2
}
{filler}
func (t T) dup() int {
	return 3
}
""",
    "M.java": '''package m;

class M {
    String block = """
        class Fake {
        }
        """;

    int dup() {
        return 1;
    }
{filler}
    int dup(int a) {
        return a;
    }
}
''',
    "M.kt": '''package m

class M(val size: Int) {
    val block = """
        class Fake {
        }
        """

    constructor(s: String) : this(s.length)

    fun dup(): Int {
        return 1
    }
{filler}
    fun dup(a: Int): Int = a

    companion object {
        fun make() = M(1)
    }
}

object Registry {
    fun all() {}
}

fun String.ext(): Int {
    return length
}
''',
}


def tricky(name: str) -> tuple[str, bytes]:
    ext = name[name.rindex(".") :]
    filler = "".join(FILLER[ext].format(i=i) for i in range(500))
    src = TRICKY[name].replace("{filler}", "\n" + filler)
    return src, src.encode()


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_line_is_anchored_as_the_whole_file_anchors_it(name: str) -> None:
    src, data = tricky(name)
    lang = language_for_path(name)
    assert lang is not None
    full = parse_file(name, data).definitions
    count = data.count(b"\n") + 1
    filler = range(line_of(src, "f0("), line_of(src, "f499(") + 4)
    for line in (n for n in range(1, count + 1) if n not in filler or n % 11 == 0):
        assert lang.definitions_at(data, [line]) == expected(name, data, [line], full), line
    spread = list(range(1, count + 1, 97))
    assert lang.definitions_at(data, spread) == expected(name, data, spread, full)
    # a span is held by what holds every line of it: around an insertion point, across siblings
    for lo in (n for n in range(1, count + 1) if n not in filler or n % 13 == 0):
        for hi in (lo + 1, lo + 4):
            picked = innermost(full, lo, hi)
            assert lang.definitions_at(data, [], [(lo, hi)]) == ((picked,) if picked else ()), (lo, hi)


def test_a_few_lines_of_a_large_file_open_a_few_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the definitions around the lines and those of the same name are opened, not the file's."""
    src, data = tricky("m.py")
    lang = language_for_path("m.py")
    assert lang is not None
    opened: list[str] = []
    real = base.Language._open

    def spy(self: base.Language, node: object, frames: list[base._Open], out: list[base._Open]) -> base._Open | None:
        rec = real(self, node, frames, out)  # type: ignore[arg-type]
        opened.append(rec.qualname if rec else "")
        return rec

    monkeypatch.setattr(base.Language, "_open", spy)
    line = line_of(src, "def f200(a):") + 1
    assert [d.qualname for d in lang.definitions_at(data, [line])] == ["f200"]
    assert opened == ["f200"] * 3  # around the line, where `f200` is written, its fingerprints
    opened.clear()
    found = lang.definitions_at(data, [line_of(src, "        return 3")])  # the second `K.m`, named against the first
    assert [d.qualname for d in found] == ["K.m"]
    assert sorted(set(opened)) == ["K", "K.m"]
    opened.clear()
    found = lang.definitions_at(data, [line_of(src, "        return 1\n\n    @property")])
    assert [d.qualname for d in found] == ["K.m#1"]


def test_a_function_named_by_its_holder_is_numbered_among_its_namesakes() -> None:
    """`const f = () => …` is named where its parent writes the name."""
    src = "const f = () => 1;\n" + "".join(f"function g{i}() {{ return {i}; }}\n" for i in range(50))
    src += "const f = () => 2;\n"
    data = src.encode()
    lang = language_for_path("m.js")
    assert lang is not None
    first = lang.definitions_at(data, [1])
    assert [d.qualname for d in first] == ["f#1"] and first == expected("m.js", data, [1])
    assert [d.qualname for d in lang.definitions_at(data, [52])] == ["f"]


def test_a_longer_name_written_first_hides_no_shorter_one() -> None:
    """`format` inside `formatValue` is no place `format` is written; `format` alone is."""
    src = "def formatValue():\n    return format\n\n\ndef format():\n    return 1\n\n\ndef format():\n    return 2\n"
    data = src.encode()
    lang = language_for_path("m.py")
    assert lang is not None
    assert lang.definitions_at(data, [2, 6]) == expected("m.py", data, [2, 6])
    assert [d.qualname for d in lang.definitions_at(data, [2, 6])] == ["formatValue", "format#1"]


def test_fingerprints_read_no_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A definition's fingerprints are of its tokens: its calls and imports are not looked at."""
    src = "def f(a):\n    import os\n    return g(a) + f'{h(a)}'\n"
    lang = language_for_path("m.py")
    assert lang is not None
    noted: list[object] = []
    monkeypatch.setattr(base.Language, "_note", lambda self, *args: noted.append(args))
    monkeypatch.setattr(base.Language, "_calls_in_string", lambda self, *args: noted.append(args))
    found = lang.definitions_at(src.encode(), [3])
    assert not noted
    monkeypatch.undo()
    assert found == expected("m.py", src.encode(), [3])


def _sources() -> list[tuple[str, bytes]]:
    """The tricky files above, and every source file of comind itself."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    own = [(str(p.relative_to(root)), p.read_bytes()) for p in sorted(root.glob("*/**/*.py")) if "/." not in str(p)]
    return [(name, tricky(name)[1]) for name in TRICKY] + own


def test_a_file_defining_a_name_may_define_it() -> None:
    """`may_define` says no only where the whole file's walk finds no such definition."""
    from comind.languages import may_define

    checked = 0
    for path, data in _sources():
        for d in parse_file(path, data).definitions:
            assert may_define(data, d.qualname), (path, d.qualname)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize(
    ("qualname", "defined"),
    [
        ("Guard.drop", True),
        ("impl Drop for Guard", True),
        ("Guard.close", False),  # no `close` written anywhere
        ("Lock.drop", False),
        ("Guard.drop#2", True),  # namesakes are numbered, not named
        ("Guard.#drop", True),
        ("Gärd.drop", True),  # not ASCII: parsed to say
    ],
)
def test_may_define(qualname: str, defined: bool) -> None:
    from comind.languages import may_define

    data = b"struct Guard;\nimpl Drop for Guard {\n    fn drop(&mut self) {}\n}\n"
    assert may_define(data, qualname) is defined


def test_defines_agrees_with_the_whole_file_walk() -> None:
    """`defines` finds every qualname the whole walk gives (namesakes numbered), and no other,
    `span_of` the same lines, and `body_tokens` reads the same tokens as the whole walk keeps."""
    from comind.languages import all_body_tokens, body_tokens, defines, span_of

    checked = 0
    own = ("core/languages/_base.py", "harvest/reverts.py", "checks/deadends.py")  # (a parse per name: a few)
    for path, data in _sources():
        if language_for_path(path) is None or (path not in TRICKY and path not in own):
            continue
        spans = {d.qualname: (d.start_line, d.end_line) for d in parse_file(path, data).definitions}
        names = set(spans)
        bases = {q.split("#", 1)[0] for q in names}
        others = {f"{b}#{n}" for b in bases for n in (1, 2, 3)} | {f"{b}.nowhere" for b in list(bases)[:5]}
        tokens = all_body_tokens(path, data)
        for q in names | others:
            assert defines(path, data, q) is (q in names), (path, q)
            assert span_of(path, data, q) == spans.get(q), (path, q)
            assert body_tokens(path, data, q) == tokens.get(q), (path, q)
            checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    ("path", "text"),
    [
        # minified: a private member's `#` right after a keyword (yarn's release bundles)
        ("m.js", "class C{static#foo(){return 1}get#x(){return 2}set#x(v){this.y=v}static#h=()=>3;async#z(){}}\n"),
        ("m.rs", "trait Foo {}\nimpl Foo for(){}\nimpl Foo for[u8; 2]{fn f(){}}\n"),
    ],
)
def test_a_name_written_straight_after_a_word_is_found(path: str, text: str) -> None:
    from comind.languages import all_body_tokens, body_tokens, defines

    data = text.encode()
    tokens = all_body_tokens(path, data)
    assert tokens
    for qualname, body in tokens.items():
        assert defines(path, data, qualname) and body_tokens(path, data, qualname) == body, qualname


def test_a_name_written_only_inside_longer_words_is_not_parsed_for() -> None:
    """`defines` says no without parsing a file that writes the name only inside longer words (as
    versions of a file after a symbol's removal often do: `format` in `vformat`, `format_to`)."""
    from comind.languages import defines, keeping_trees
    from comind.languages._base import _TREES

    data = b"def vformat(x):\n    return format_to(x)\n"
    with keeping_trees():
        assert not defines("m.py", data, "format")
        assert _TREES.get("python", data) is None  # not parsed
        assert defines("m.py", data, "vformat") and _TREES.get("python", data) is not None
