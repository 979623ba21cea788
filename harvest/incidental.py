"""How telling a file a change touched is as an anchor: where someone would look a reason up.

A change lands beside its code what records it (a changelog, a lockfile, AUTHORS), what a tool keeps
(a vendoring manifest, vendored code), what running the code writes (generated files, expected test
output) and what describes it (a README, the docs). Each is an anchor only when the change touched
nothing more telling: `rank` orders them, and an attempt is anchored to the files of its highest rank.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from comind.harvest.approach import credits, release_notes

RECORDS, MACHINE_MADE, DOCUMENTS, CODE = range(4)

# Kept by a tool from the dependencies' own sources: Go's vendoring manifests and what they vendor.
_VENDORED = re.compile(r"^vendor/|(?:^|/)(?:Gopkg\.lock|glide\.lock|Godeps\.json|vendor\.conf)$")
# What a test compares output with: written by running the code (jest, insta, Go's testdata/*.golden).
_EXPECTED = re.compile(r"(?:^|/)_?expected/|(?:^|/)__snapshots__/|\.(?:snap|golden|expected)$|\.approved\.[^/]+$", re.I)
_MINIFIED = re.compile(r"[.-]min\.(?:js|mjs|css)$|\.(?:js|mjs|css)\.map$", re.I)
# A README (README.md, README.ja.md, readme.rdoc), a prose document, anything under a docs folder.
_DOCUMENT = re.compile(r"(?:^|/)readme(?:\.[^/]*)?$|\.(?:md|markdown|rst|adoc|asciidoc|rdoc)$|^docs?/", re.I)
# Said in a file's first lines: Go's `Code generated … DO NOT EDIT.`, `@generated`, "auto-generated".
_GENERATED = re.compile(
    rb"DO NOT EDIT|@generated\b|\bauto-?generated\b|\bautomatically generated\b"
    rb"|\b(?:file|code) (?:is |was )?generated\b|^\W*generated (?:by|from|with)\b",
    re.I | re.M,
)
_HEAD = 1024  # the first lines' bytes; a first line longer than this is minified or machine-written
_HEAD_LINES = 5
# linguist's attributes in .gitattributes, the project's own say: the rank each sets.
_LINGUIST = {"linguist-vendored": RECORDS, "linguist-generated": MACHINE_MADE, "linguist-documentation": DOCUMENTS}


def rank(path: str, linguist: dict[str, bool], head: Callable[[], bytes | None]) -> int:
    """The rank of `path` as an anchor (RECORDS lowest, CODE highest), by its name, its `linguist`
    attributes (`attributes`) and the start of its text (`head()`; None: unread)."""
    if release_notes(path) or credits(path) or _VENDORED.search(path):
        return RECORDS
    if said := [_LINGUIST[name] for name, value in linguist.items() if value]:
        return min(said)
    unset = {_LINGUIST[name] for name in linguist}  # `-linguist-generated`: the project says it is not
    if MACHINE_MADE not in unset and (_EXPECTED.search(path) or _MINIFIED.search(path) or generated(head())):
        return MACHINE_MADE
    if DOCUMENTS not in unset and _DOCUMENT.search(path):
        return DOCUMENTS
    return CODE


def generated(head: bytes | None) -> bool:
    """Whether a file's first lines say it is generated, or its first line runs on past `_HEAD` bytes."""
    if not head:
        return False
    start = head[:_HEAD]
    if len(head) > _HEAD and b"\n" not in start:
        return True
    return _GENERATED.search(b"\n".join(start.split(b"\n")[:_HEAD_LINES])) is not None


def attributes(texts: list[tuple[str, str]], path: str) -> dict[str, bool]:
    """The linguist attributes `path` has by the .gitattributes `texts` (folder, text), root first:
    the last line matching it sets each, as git reads them (a pattern without `/` names a file
    anywhere below its folder)."""
    found: dict[str, bool] = {}
    for folder, text in texts:
        rel = path[len(folder) + 1 :] if folder else path
        for line in text.splitlines():
            pattern, *settings = line.split() or ["#"]
            if pattern.startswith("#") or not _matches(pattern, rel):
                continue
            for setting in settings:
                name, _, value = setting.lstrip("-!").partition("=")
                if name not in _LINGUIST:
                    continue
                if setting.startswith("!"):  # unspecified again
                    found.pop(name, None)
                else:
                    found[name] = not setting.startswith("-") and value.lower() not in ("false", "0")
    return found


def _matches(pattern: str, rel: str) -> bool:
    if "/" not in pattern.rstrip("/"):
        rel = rel.rsplit("/", 1)[-1]
    return _glob(pattern.lstrip("/")).fullmatch(rel) is not None


def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    for part in re.split(r"(\*\*/|/\*\*|\*|\?)", pattern):
        out.append({"**/": "(?:.*/)?", "/**": "/.*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part)))
    return re.compile("".join(out))
