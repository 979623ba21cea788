"""Budgets against flooding: at most so many records from one commit, one merge request and one
forge author in one harvest run; what is over is counted (and reported by the caller), not written.

A commit message with ten thousand ``Rejected:`` lines, or an outsider's pull request with two
thousand Lore lines, would otherwise fill the ledger and bury everything else. The caps are
settings (``records_per_commit``, ``records_per_merge_request``, ``records_per_author``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from comind.records import Record

# What each cap is called in a summary, by setting.
SCOPES = {
    "records_per_commit": "commit",
    "records_per_merge_request": "merge request",
    "records_per_author": "author",
}


@dataclass
class Budget:
    per_commit: int = 100
    per_merge_request: int = 200
    per_author: int = 1000
    over: Counter[str] = field(default_factory=Counter)  # setting -> records not written
    _authors: Counter[str] = field(default_factory=Counter)

    @classmethod
    def from_config(cls, config: Any) -> Budget:
        return cls(
            per_commit=int(config.records_per_commit),
            per_merge_request=int(config.records_per_merge_request),
            per_author=int(config.records_per_author),
        )

    def commit(self, records: Iterable[Record]) -> list[Record]:
        """The first `per_commit` records one commit made; the rest counted."""
        kept = list(records)
        if len(kept) > self.per_commit:
            self.over["records_per_commit"] += len(kept) - self.per_commit
            kept = kept[: self.per_commit]
        return kept

    def merge_request(self, records: Iterable[Record]) -> Iterator[Record]:
        """The records of one merge request within `per_merge_request`, and of each author (the
        actor who wrote the text) within `per_author` across the run; the rest counted."""
        taken = 0
        for record in records:
            actor = str(record.provenance.get("actor", ""))
            if taken >= self.per_merge_request:
                self.over["records_per_merge_request"] += 1
            elif self._authors[actor] >= self.per_author:
                self.over["records_per_author"] += 1
            else:
                taken += 1
                self._authors[actor] += 1
                yield record

    def summary(self) -> str:
        """``2003 over the budget, not written: 1803 of one merge request (records_per_merge_request
        200), …``, or "" when nothing was over."""
        if not self.over:
            return ""
        limits = {
            "records_per_commit": self.per_commit,
            "records_per_merge_request": self.per_merge_request,
            "records_per_author": self.per_author,
        }
        parts = [f"{n} of one {SCOPES[key]} ({key} {limits[key]})" for key, n in sorted(self.over.items()) if n]
        return f"{sum(self.over.values())} over the budget, not written: " + ", ".join(parts)
