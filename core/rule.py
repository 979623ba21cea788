"""The interface of a rule of the rulebook (`comind.rulebook` registers them).

A rule has an id (`D5`), a name (`large-piece`), a one-line summary, declared options (each with a
default and a line of help, settable in `.comind.yml` as `dead_ends: {D5.lines: 50}`) and one short
`judge` method. What it judges depends on its family (a line, a match's figures, a revert's message).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol


@dataclass(frozen=True)
class Option:
    name: str
    default: float
    help: str
    whole: bool = False  # a count (a whole number, 0 or more); else a share between 0 and 1

    def parse(self, value: object) -> float:
        """The value as this option takes it; ValueError saying what it must be."""
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(self.expected)
        try:
            number = float(value)
        except ValueError:
            raise ValueError(self.expected) from None
        if self.whole and (number != int(number) or number < 0):
            raise ValueError(self.expected)
        if not self.whole and not 0.0 <= number <= 1.0:
            raise ValueError(self.expected)
        return int(number) if self.whole else number

    @property
    def expected(self) -> str:
        return "must be a whole number of 0 or more" if self.whole else "must be a number between 0 and 1"


class Rule(Protocol):
    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    options: ClassVar[tuple[Option, ...]]

    def __init__(self, values: Mapping[str, float]) -> None: ...

    def value(self, option: str) -> float: ...


@dataclass
class Match:
    """What a change brings back of an attempt: the figures every dead-end rule judges."""

    matched: int  # the attempt's informative lines the change adds (removes) again
    total: int  # the attempt's informative lines
    where: tuple[str, int] | None  # the first re-added line in the change: (path, line at head)
    local: int = -1  # of `matched`, in a file named like one the attempt touched (-1: all of them)
    own: int = 0  # the change's own informative lines (net)
    recreated: tuple[str, ...] = ()  # the attempt only created these files, and the change creates them again
    added: int = 0  # of `matched`, the attempt's added lines the change adds again
    added_total: int = 0  # of `total`, the attempt's added lines
    edited: int = 0  # an attempt with no informative line: the lines of its edit the change makes alone
    score: float = 0.0  # the attempt's evidence the change brings back, by weight (`comind.weights`), 0-1
    weight: float = 0.0  # the weight of that evidence: as many lines or identifiers nowhere else
    evidence: str = ""  # the strongest piece of it, in one line
    names: tuple[float, ...] = ()  # the weights of the identifiers the attempt introduced, heaviest first
    kept: tuple[float, ...] = ()  # of those, the weights of the ones the change says again, in their files
    names_evidence: str = ""  # the rarest of those, in one line

    def __post_init__(self) -> None:
        if self.local < 0:
            self.local = self.matched

    @property
    def again(self) -> str:
        """What the change does again with the attempt's lines: `re-adds 6`, `re-adds 1 and re-removes 1`."""
        return again(self.matched, self.added)


def again(matched: int, added: int) -> str:
    """`re-adds 6`, `re-removes 10` or `re-adds 1 and re-removes 1`: of `matched` lines brought back,
    `added` were lines the attempt added and the rest lines it removed; "re-adds" for all of them
    would claim the change adds lines it removes."""
    removed = matched - added
    if not removed:
        return f"re-adds {matched}"
    return f"re-adds {added} and re-removes {removed}" if added else f"re-removes {removed}"
