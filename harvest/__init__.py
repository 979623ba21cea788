"""comind.harvest: deterministic harvesters turning history and review threads into records.

Git sources are modules with one small interface (:mod:`comind.harvest.interface`), registered
in :mod:`comind.harvest.sources`. Merge-request threads are harvested by :mod:`comind.harvest.mr`
from a forge. This module holds only what every harvester and the cache share, so it stays cheap
to import.
"""

from __future__ import annotations

# Bump when what is harvested changes: the next harvest re-reads all. 2: "add back" relands; 3: back-outs,
# "…, reverts #N", merges of a branch's revert, people left out of revert reasons; 4: Go's prefixed
# 'pkg: revert "x"' and "This CL reverts commit <sha>", relands said in the body only (a revert of a
# revert, "Reland of #N"), markers in a squash body real only when their target is on the default branch;
# 14: `dep:` anchors for toolchain versions; 15: tree paths kept whole in anchors and fingerprints,
# releases read from a root VERSION file and POMs, a reverted forge merge titled by its request;
# 16: the actions a workflow uses as `dep:` anchors, no attempt for a named commit a revert leaves
# untouched (R4); 17: symbol anchors in C, C++, C#, Ruby and PHP files; 18: a file a change only
# inserted lines into anchors to the definitions around the insertions; 19: revert reasons without
# git's wrapped "changes made to" line, GitHub's squash rule and echoed revert items, an unresolved
# revert's attempt without a made-up reason; a Directive's dated [until:] read wherever it is written;
# 20: an unresolved revert quoting no subject titles its attempt "What '<its subject>' took out";
# code in a Rust impl anchored to the type it implements when the file defines it; an SSH remote
# (git@host:path) kept in revert reasons, no longer read as an address; 21: a squash's other
# one-line commits (`* Changeset`) no part of its revert's reason; 22: no anchor on a changelog,
# a changelog fragment or a lockfile beside the code a change touched; 23: no second attempt from a
# body quoting a revert another commit made already; 24: secrets assigned to a longer name
# (`DB_PASSWORD=…`, `"password": "…"`) or after `=` redacted: a cache an older one wrote holds them;
# 25: a list right under a line of a squash's commit body is that body's, not its items (`See:` kept
# its links); 26: no anchor on a fragment of `changelog/`, `CHANGES/` or `changelog_unreleased/<area>/`
# either; 27: a quoted revert is made anew when the commit also reverts the revert made before;
# 28: no anchor on a list of contributors (AUTHORS, .mailmap) beside the code a change touched;
# 29: reverts read in more forms (`[area] Revert <sha>`, `by reverting <sha>`, `This partially reverts
# <sha>`), a quoted request title found in its merge's body, a revert of a revert branch's merge a reland;
# 30: `This reverts #N` read; only a merge landing nothing but reverts is a revert whatever its title;
# 31: releases read from version placeholders, release dates, `const` keys and man page headers (R2),
# the documents of a `release-notes/` folder as a changelog; 32: undoing a merge titled as a reland
# relands nothing unless its branch holds only reverts; 33: "caused by reverting <sha>" is no revert;
# 34: no attempt from a revert of release notes alone (R5); 35: no anchor on a vendoring manifest,
# vendored code, a generated file, a test's expected output, a README or the docs beside code; a fix
# of several commits titles each gotcha by the commit it fixes; a trailer value repeated, one record;
# 36: code in a C++ class declared with an export macro (`class LIB_API Box`) anchored to its members;
# 37: a bors-ng merge (`Merge #N`) titled by the request it landed; 38: a `Fixes:` gotcha's symptom
# is what its body says first, not its subject again, and its body names no one (person trailers);
# 39: a revert's subject or title quoted in a title or body as “x”, not as Python's repr ('x', "x's");
# 40: a created file's lines copied from the file beside it named most like it are trivial (rule L4);
# 41: a revert made again on another line of history (cherry-picked: the same change undone) is no second attempt;
# 42: a generated file's lines are trivial (rule L5); 43: a revert's copy that lands after the change
# came back on the default branch is a second attempt, not folded into the first; 44: only a generated
# mark in a comment counts (not a generator's string); 45: the file beside a created one is found by
# its numbers too (`4.10.xml` copies `4.9.xml`, not `4.1.xml`); 46: a rollback tool's rollbacks and
# roll forwards are reverts and relands; 47: `undo CL N` / `Undo #N`, and a review link alone on a line
# names the change; 48: `Back out "x"`, and Phabricator's `Revert D123` found by `Differential Revision:`;
# 49: a body line that only repeats a revert's subject, unbulleted as a one-commit squash writes it,
# is no reason; 50: a partial revert said in the body's marker line (`This partially reverts commit x`)
# is an attempt of what its own diff undid; 51: a `Fixes:` gotcha's body is the fix's prose, not its
# trailer block; 52: an unresolved revert whose quote is a word of its subject (`Revert "parallel"
# builds in …`) titles its attempt by what its subject took out, not by the word; 53: 50 undone (dropped
# by the replay protocol: a partial revert said only in the body is an attempt of the whole change again),
# and the review of 46-52: a subject with "oll" in it reads its body's markers, `Revert D3 upgrade` names
# no revision, `Revert "Undo #N"` relands; 54: a link to a person's forge profile is `<profile>`.
HARVESTER_VERSION = "54"
