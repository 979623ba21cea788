"""Object keys and names of the store's layout (see the package doc), and the types they name."""

from __future__ import annotations

import _thread
import re
import time
import zlib
from typing import NamedTuple

from comind.errors import ComindError

INBOX = "_ledger/inbox/"
JOURNAL = "_ledger/journal/"
SEGMENTS = "_ledger/segments/"
SNAPSHOTS = "_ledger/snapshots/"
ERASED = "_ledger/erased/"
ACTOR_SALT = "_ledger/actor-salt"  # the key of actor pseudonyms (`Store.actor_salt`)
KEEP_SNAPSHOTS = 3  # older snapshots are deleted; a reader racing a deletion lists again
MAX_SEGMENTS = 12  # past this, the newest two are merged whatever their sizes
GZIP_LEVEL = 1  # 3x faster than 6 for ~30 % more bytes: compaction time matters more
RECORDS = ".records.gz"  # a journal entry's records object: <entry>.records.gz


class StoreError(ComindError):
    pass


class CorruptObjectWarning(UserWarning):
    pass


class Manifest(NamedTuple):
    """A snapshot's manifest: which segments hold the compacted records; `journal` entries up to it are all included
    (None on a local store, which has no journal)."""

    name: str  # under SNAPSHOTS
    journal: str | None
    segments: list[str]
    sizes: list[int]
    pruned: str | None = None  # journal records objects up to this entry were deleted (None: not said)
    erased: str | None = None  # _erased_digest of the tombstones its compaction applied (None: not said)

    @property
    def legacy(self) -> bool:
        """A snapshot of the first layout: one gzip JSONL file, no journal position."""
        return self.name.endswith(".jsonl.gz")


class BrokenSnapshot(Exception):
    """A snapshot names a segment that is gone (a racing compaction or erasure deleted it)."""


class CorruptObject(BrokenSnapshot):
    """A manifest, segment or journal object that cannot be parsed or has the wrong shape: skipped,
    named to the reader, and read around (the inbox holds every record)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


# What a parse of stored bytes can raise: gzip, JSON, UTF-8, shape (a missing key, a wrong type), depth.
PARSE_ERRORS = (OSError, EOFError, zlib.error, ValueError, TypeError, KeyError, AttributeError, RecursionError)
_SEGMENT_NAME = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def is_segment_name(value: object) -> bool:
    return isinstance(value, str) and _SEGMENT_NAME.fullmatch(value) is not None


_ulid_lock = _thread.allocate_lock()
_last_ulid = 0


def _ulid() -> str:
    """A ULID: 48-bit millisecond time then 80 random bits, Crockford base32, sorts by time.

    Monotonic within the process: one made in the same millisecond as the last (two compactions in a
    row on a fast store) is the last plus one, so the newer snapshot always sorts last."""
    import secrets

    global _last_ulid
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    with _ulid_lock:
        value = max((int(time.time() * 1000) << 80) | secrets.randbits(80), _last_ulid + 1)
        _last_ulid = value
    return "".join(alphabet[(value >> shift) & 31] for shift in range(125, -1, -5))


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def _gunzip(data: bytes) -> bytes:
    import gzip

    return gzip.decompress(data)


def journal_key(entry: str) -> str:
    """The object of a journal entry; for "" (before the first) the prefix, which sorts before all."""
    return f"{JOURNAL}{entry}.keys" if entry else JOURNAL


def _entry(key: str) -> str:
    return key.removeprefix(JOURNAL).removesuffix(".keys")


def records_key(entry: str) -> str:
    """The records object of a journal entry (see the module doc)."""
    return f"{JOURNAL}{entry}{RECORDS}"


def _next_entry(last: str) -> str:
    """A journal entry one past `last`; the 64-bit nonce keeps two writers from ever sharing a name (and so
    an entry from ever being paired with another write's records object)."""
    import secrets

    return f"{int(last[:12] or 0) + 1:012d}-{secrets.token_hex(8)}"


def _parse_records(raw: bytes) -> tuple[list[str], dict[str, bytes]]:
    """A records object's keys, in order, and bytes by key; ValueError when it is not one."""
    import zlib

    keys: list[str] = []
    lines: dict[str, bytes] = {}
    try:
        for line in _gunzip(raw).split(b"\n"):
            if line:
                key, data = line.split(b" ", 1)
                keys.append(key.decode())
                lines[keys[-1]] = data
    except (OSError, EOFError, zlib.error, ValueError) as exc:  # ValueError: no space; UnicodeDecodeError
        raise ValueError(f"not a records object ({exc})") from None
    return keys, lines


def _erased_digest(ids: set[str]) -> str:
    """Names a set of tombstones without naming any: how many, and a hash of them."""
    import hashlib

    return f"{len(ids)}:{hashlib.sha256(chr(10).join(sorted(ids)).encode()).hexdigest()}"


def snapshot_journal(name: str) -> str | None:
    """The journal entry a snapshot covers, from its name (<ulid>-j<entry>.json.gz); None without one
    ("" when it covers an empty journal)."""
    stem = name.removesuffix(".json.gz")
    return stem.split("-j", 1)[1] if "-j" in stem else None
