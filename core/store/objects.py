"""Opening an object store, and the requests made to it: GET, PUT, LIST and DELETE, counted by area."""

from __future__ import annotations

import _thread
import contextlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from comind.store.layout import ERASED, INBOX, SNAPSHOTS, StoreError

# Where each kind of store takes its credentials from (obstore reads these variables itself).
_CREDENTIALS = {
    "s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a server other than AWS)",
    "gs": "GOOGLE_APPLICATION_CREDENTIALS (or GOOGLE_SERVICE_ACCOUNT) to a service account key file",
    "az": "AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_SAS_TOKEN)",
}


_AZURE = ("az", "abfs", "abfss", "azure", "adl")


def _credentials_for(url: str) -> str:
    """The credentials a store URL's scheme takes from the environment, as advice (every cloud's
    for a scheme that is none of theirs: `http://KEY:SECRET@host/…` names no cloud)."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    family = "s3" if scheme in ("s3", "s3a") else "gs" if scheme == "gs" else "az" if scheme in _AZURE else None
    if family is None:
        return "; ".join(_CREDENTIALS.values())
    return _CREDENTIALS[family]


def _one_line(exc: BaseException, url: str) -> str:
    """What went wrong with a request to the store at ``url``, in one line."""
    import re

    text = str(exc)
    if code := re.search(r"<Code>([^<]*)</Code>", text):  # S3's XML error body
        said = re.search(r"<Message>([^<]*)</Message>", text)
        return f"{code.group(1)}: {said.group(1)}" if said else code.group(1)
    first = text.split("\n", 1)[0].strip()
    # no keys in the environment, so the cloud's instance metadata endpoint was asked (AWS, GCP and
    # Azure all serve it at this address)
    if "169.254.169.254" in first:
        return f"no credentials found: set {_credentials_for(url)}"
    return first if len(first) <= 300 else first[:299] + "…"


def open_object_store(url: str, base: Path | None = None) -> Any:
    """An obstore store for a local path, file://, memory://, s3://, gs:// or az:// URL.

    Cloud URLs take the standard environment (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL,
    AWS_ALLOW_HTTP, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_NAME, …).
    """
    from obstore.store import LocalStore, from_url

    scheme = url.split("://", 1)[0] if "://" in url else ""
    user, at, _ = url.split("://", 1)[-1].partition("@")
    # s3://KEY:SECRET@bucket/… (or a signed URL's ?…&sig=…, which no store here reads) would be echoed in
    # every message naming the store: refuse it unprinted.
    signed = scheme != "file" and ("?" in url or "#" in url)
    if scheme and ((at and (":" in user or "/" not in user)) or signed):
        raise StoreError(
            f"store {scheme}://…: a store URL must not carry credentials (a user, a password, a query); set them"
            f" in the environment ({_credentials_for(url)})"
        )
    if path := _local_root(url, base):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {url!r}: cannot create {path}: {exc.strerror}") from None
        return LocalStore(path)
    if scheme == "memory":
        return _memory_store(url)
    if scheme not in ("s3", "s3a", "gs", *_AZURE):
        raise StoreError(f"store {url!r}: unsupported scheme {scheme!r} (use a path, s3://, gs://, az:// or memory://)")
    options: dict[str, Any] = {}
    if scheme.startswith("s3"):
        # obstore reads AWS_* itself; AWS_ALLOW_HTTP must reach the client options for http:// endpoints.
        if os.environ.get("AWS_ALLOW_HTTP", "").lower() in ("1", "true", "yes"):
            options["client_options"] = {"allow_http": True}
        elif (endpoint := os.environ.get("AWS_ENDPOINT_URL", "")).lower().startswith("http://"):
            # (obstore's own words for it are "builder error")
            raise StoreError(f"store {url!r}: the endpoint {endpoint} is plain HTTP; set AWS_ALLOW_HTTP=true to use it")
        if os.environ.get("AWS_ENDPOINT_URL") and "AWS_VIRTUAL_HOSTED_STYLE_REQUEST" not in os.environ:
            options["virtual_hosted_style_request"] = False
    try:
        return from_url(url, **options)
    except Exception as exc:  # obstore raises its own error types for bad URLs and config
        raise StoreError(f"store {url!r}: {_one_line(exc, url)}") from None


def _local_root(url: str, base: Path | None) -> Path | None:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in ("", "file"):
        return None
    path = Path(url[len("file://") :] if scheme else url)
    return path if path.is_absolute() else (base or Path.cwd()) / path


_MEMORY: dict[str, Any] = {}


def _memory_store(url: str) -> Any:
    """memory://NAME stores live for the process, so tests can open the same one twice."""
    from obstore.store import MemoryStore

    return _MEMORY.setdefault(url, MemoryStore())


class Objects:
    """A store's objects: the requests every other part of the store makes go through here."""

    def __init__(self, url: str, base: Path | None = None) -> None:
        self.url = url
        self._base = base
        self.local_root = _local_root(url, base)
        self._erased: set[str] | None = None  # tombstones, listed once per Store
        self._tail: str | None = None  # the last journal entry this Store saw or wrote
        self._inline: dict[str, bytes] = {}  # records bytes the last journal_entries carried, for read_many
        self.gets: Counter[str] = Counter()  # objects read, by area ("inbox", "journal", "segments", …)
        self.requests: Counter[str] = Counter()  # requests made, by verb and area: "LIST journal", "PUT inbox", …
        self.skipped: dict[str, str] = {}  # objects other than records that readers read around: key -> why
        self._gets_lock = _thread.allocate_lock()  # threading's Lock, without importing threading (~1 ms)

    @cached_property
    def _store(self) -> Any:
        return open_object_store(self.url, self._base)

    def create(self) -> None:
        """Make sure the store is there: a local folder created, a remote one reached."""
        self._store  # noqa: B018 -- opening a local store creates its folder
        self._list(INBOX)

    @property
    def journaled(self) -> bool:
        """Object stores keep a journal; a local folder is listed instead (see the module doc)."""
        return self.local_root is None

    def change_token(self) -> str | None:
        """A cheap token that changes whenever a local store may have changed; None if unknown.

        Directory mtimes move when entries are added or removed. Like git's racy-index rule, an
        mtime within the last two seconds is not trusted, since a second write in the same clock
        tick would not move it again.
        """
        if self.local_root is None:
            return None
        parts = []
        for sub in (INBOX, SNAPSHOTS, ERASED):
            try:
                mtime = os.stat(self.local_root / sub).st_mtime_ns
            except FileNotFoundError:
                parts.append("-")
                continue
            except NotADirectoryError:  # `--store app.py`: a file where the folder should be
                raise StoreError(
                    f"store {self.url!r}: {file_in_the_way(self.local_root, sub)} is a file, not a folder"
                ) from None
            if mtime > time.time_ns() - 2_000_000_000:
                return None
            parts.append(str(mtime))
        return f"{self.local_root}:{':'.join(parts)}"

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    def _count(self, verb: str, key: str, n: int = 1) -> None:
        with self._gets_lock:
            self.requests[f"{verb} {key.removeprefix('_ledger/').split('/', 1)[0]}"] += n

    def _put(self, key: str, data: bytes, mode: Literal["create", "overwrite"] = "create") -> None:
        """Put an object (create-only unless `mode` says otherwise); AlreadyExistsError when it exists."""
        import obstore as obs

        self._count("PUT", key)
        with self._reaching(f"write {key}"):
            obs.put(self._store, key, data, mode=mode)

    def _delete(self, key: str) -> None:
        import obstore as obs

        self._count("DELETE", key)
        with contextlib.suppress(FileNotFoundError), self._reaching(f"delete {key}"):
            obs.delete(self._store, key)

    def _delete_many(self, keys: list[str]) -> None:
        """Delete objects in bulk (S3 deletes 1,000 per request)."""
        import obstore as obs

        if not keys:
            return
        self._count("DELETE", keys[0], (len(keys) + 999) // 1000)
        try:
            with self._reaching(f"delete {len(keys)} objects"):
                obs.delete(self._store, keys)
        except FileNotFoundError:  # some stores fail the batch when one is gone already
            for key in keys:
                self._delete(key)

    def _list(self, prefix: str, offset: str | None = None) -> list[str]:
        import obstore as obs

        if self.local_root is not None and not self.local_root.is_dir():
            return []  # a folder nothing was written to yet: reading it creates nothing in the work tree
        pages = 0
        try:
            with self._reaching(f"list {prefix}"):
                if offset is None:
                    batches = obs.list(self._store, prefix=prefix.rstrip("/"), chunk_size=1000)
                else:
                    batches = obs.list(self._store, prefix=prefix.rstrip("/"), offset=offset, chunk_size=1000)
                keys: list[str] = []
                for batch in batches:
                    keys += (m["path"] for m in batch)
                    pages += 1
                return keys
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"store {self.url}: cannot list {prefix}: {exc}") from None
        finally:
            self._count("LIST", prefix, max(pages, 1))  # a request per page of up to 1,000 keys

    @contextlib.contextmanager
    def _reaching(self, what: str) -> Iterator[None]:
        """obstore's errors other than a missing or existing object (which callers handle) as one
        line naming the store: an S3 error's code and message, not its XML and a debug dump."""
        from obstore.exceptions import AlreadyExistsError, BaseError

        try:
            yield
        except AlreadyExistsError:
            raise
        except BaseError as exc:
            raise StoreError(f"store {self.url}: cannot {what}: {_one_line(exc, self.url)}") from None

    def _get(self, key: str) -> bytes:
        """An object's bytes; FileNotFoundError when it is not there (obstore raises the same)."""
        with self._gets_lock:
            self.gets[key.removeprefix("_ledger/").split("/", 1)[0]] += 1
        self._count("GET", key)
        if self.local_root is not None:
            return (self.local_root / key).read_bytes()  # 6x faster than obstore's local get per small file
        import obstore as obs

        with self._reaching(f"read {key}"):
            return bytes(obs.get(self._store, key).bytes())

    def _map(self, function: Any, items: list[Any], *, writes: bool = False, few: bool = False) -> list[Any]:
        # Threads hide network latency; reading a local folder they only add GIL contention. `few`: worth it
        # from two items (big objects).
        if len(items) < (2 if writes or few else 4) or (self.local_root is not None and not writes):
            return [function(item) for item in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=16) as pool:
            return list(pool.map(function, items))


def file_in_the_way(root: Path, key: str) -> Path:
    """The file that stands where a folder on the way to `key` under `root` should be: the store's
    root itself (`--store app.py`) or a folder in it (`_ledger`)."""
    path = root / key
    return next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), root)
