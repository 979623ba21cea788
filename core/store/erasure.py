"""Erasure: a tombstone under _ledger/erased/ first, then the record's objects, then every compacted and
journaled copy; an erased record is never written again.
"""

from __future__ import annotations

from collections.abc import Iterable

from comind.records import Record
from comind.store.compaction import Compaction
from comind.store.layout import ERASED, INBOX, StoreError


class Erasure(Compaction):
    """Erasing records for good."""

    def erase(self, record_ids: Iterable[str]) -> list[str]:
        """Delete records for good: tombstone first, then the objects, then every compacted copy."""
        ids = set(record_ids)
        self._erased = None
        for record_id in sorted(ids):
            self._put(ERASED + record_id, b"", mode="overwrite")
        erased = []
        for key in self.inbox_keys():
            if key[:36] in ids:
                self._delete(INBOX + key)
                erased.append(key[:36])
        manifests, legacy = self._snapshot_names()
        if manifests or legacy:
            # Rewrites the segments that hold erased records; then nothing older may stay.
            name = self._compact(self.erased_ids()) or self.snapshot_name()
            if name:
                self._collect(name, strict=True)
        if self.journaled:  # the journal's copies too (after compacting: that could still use the others)
            self._purge_records(lambda key: key[:36] in ids)
        return sorted(set(erased))

    def _check_not_erased(self, records: list[Record]) -> None:
        if self._erased is None:
            self._erased = self.erased_ids()
        for record in records:
            if record.id in self._erased:
                raise StoreError(f"record {record.id} was erased and cannot be written again")
