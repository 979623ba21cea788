"""Configuration: `.comind.yml`, environment variables and flags, in that order of precedence.

Every setting is one row of SETTINGS: its key in the file, its environment variable, its flag,
its type, its default and a line of help. `comind init` writes the file from the same table.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from comind.errors import ComindError

CONFIG_FILE = ".comind.yml"


class ConfigError(ComindError):
    pass


def _rule_options(value: object) -> dict[str, float]:
    # The rulebook is imported on use: it costs 20 ms, which `comind --version` and `why` would pay.
    from comind.rulebook import parse_overrides

    return parse_overrides(value)


# Each parser names the value it refuses: a setting that holds several (dead_ends) names the bad one.


def _got(value: Any) -> str:
    return f"(got {value!r})"


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):  # (True is 1 to int())
        raise ValueError(f"must be a whole number of at least 1 {_got(value)}")
    try:
        number = int(value)
    except (TypeError, ValueError):  # int()'s own words ("invalid literal for int() with base 10") say less
        raise ValueError(f"must be a whole number of at least 1 {_got(value)}") from None
    if number < 1:
        raise ValueError(f"must be at least 1 {_got(value)}")
    return number


def _fraction(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"must be a number between 0 and 1 {_got(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"must be a number between 0 and 1 {_got(value)}") from None
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"must be between 0 and 1 {_got(value)}")
    return number


def _text(value: Any) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError(f"must be text {_got(value)}")
    if not str(value).strip():  # a blank name is a slip: left out, the setting takes its default
        raise ValueError(f"must not be empty {_got(value)}")
    return str(value)


def _store(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a path or a URL, as text {_got(value)}")
    text = value.strip()
    if not text:
        raise ValueError(f"must name a path inside the repository or an object store URL, not nothing {_got(value)}")
    return text


# Schemes a store URL in `.comind.yml` may name: object stores. A local path there must stay
# inside the repository; a file:// URL or a path elsewhere only from the environment or a flag,
# which the person running comind chose (the file comes with the repository, and with a change).
REMOTE_SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "adl", "memory")


def check_store_location(store: str, root: Path, where: str = f"{CONFIG_FILE}: store") -> None:
    """ConfigError unless a store the repository chose (in `.comind.yml`, or the default path, whose
    folders may be links it holds) stays inside the repository."""
    scheme = store.split("://", 1)[0].lower() if "://" in store else ""
    if scheme in REMOTE_SCHEMES:
        return
    if scheme:
        raise ConfigError(
            f"{where}: {scheme}:// is not a store a repository may choose; use a path inside"
            f" the repository or s3://, gs://, az:// (or set COMIND_STORE or --store) (got {store!r})"
        )
    base = root.resolve()
    target = (base / store).resolve()
    if any(path != base and base not in path.parents for path in (target, *_store_folders(base / store))):
        raise ConfigError(
            f"{where}: {store!r} is outside the repository; use a path inside it, an object"
            " store URL, or set COMIND_STORE or --store for a path elsewhere"
        )
    if target == base:
        raise ConfigError(f"{where}: {store!r} is the repository root; name a folder inside it")


def _store_folders(store: Path) -> list[Path]:
    """Where a local store writes, links resolved: its `_ledger` and the folders in it (inbox, erased, …)."""
    ledger = store / "_ledger"
    try:
        inside = [path.resolve() for path in ledger.iterdir()]
    except OSError:  # none yet (or not a folder: the store says so when it is used)
        inside = []
    return [ledger.resolve(), *inside]


def _choice(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)} {_got(value)}")
        return str(value)

    parse.choices = choices  # type: ignore[attr-defined]  # shown in --help and the JSON Schema
    return parse


class Setting(NamedTuple):
    key: str
    parse: Callable[[Any], Any]
    default: Any
    help: str

    @property
    def env(self) -> str:
        return "COMIND_" + self.key.upper()

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    @property
    def choices(self) -> tuple[str, ...] | None:
        return getattr(self.parse, "choices", None)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "store",
        _store,
        ".comind/ledger",
        "where records live: a path inside the repository (committed and reviewed like code)"
        " or an object store URL: s3://bucket/prefix, gs://bucket/prefix, az://container/prefix",
    ),
    Setting(
        "repo_name",
        _text,
        None,
        "repository name written into records (default: from the origin remote, else the folder name)",
    ),
    Setting(
        "default_branch",
        _text,
        None,
        "branch whose history counts as evidence (default: origin/HEAD, else main or master)",
    ),
    Setting(
        "dormant_days",
        _positive_int,
        60,
        "a record not confirmed for this many days is dormant: searchable, not surfaced unprompted",
    ),
    Setting(
        "drift_threshold",
        _fraction,
        0.6,
        "a subject symbol whose body keeps less than this token similarity to the anchored one is stale",
    ),
    Setting(
        "dead_end_threshold",
        _fraction,
        0.6,
        "share of a reverted change's non-trivial lines a change must re-add to re-propose the dead end",
    ),
    Setting(
        "dead_end_min_lines",
        _positive_int,
        3,
        "an attempt with fewer non-trivial lines than this is matched only on the whole of them",
    ),
    Setting(
        "dead_ends",
        _rule_options,
        {},
        "options of the dead-end, revert and reland rules (comind check --list-rules): D5.lines=50,D1.share=0.5 "
        "as the flag or in the environment, {D5.lines: 50} in .comind.yml",
    ),
    Setting(
        "fail_level",
        _choice("none", "note", "warning", "error"),
        "error",
        "comind check exits 1 when a finding is at or above this level",
    ),
    Setting(
        "records_per_commit",
        _positive_int,
        100,
        "at most this many records from one commit per harvest; the rest are counted and reported, not written",
    ),
    Setting(
        "records_per_merge_request",
        _positive_int,
        200,
        "at most this many records from one merge request's description and comments per harvest",
    ),
    Setting(
        "records_per_author",
        _positive_int,
        1000,
        "at most this many records from one forge author's descriptions and comments per harvest",
    ),
    Setting(
        "dead_end_label",
        _text,
        "dead-end",
        "closed, unmerged merge requests with this label are harvested as abandoned attempts",
    ),
)
BY_KEY = {s.key: s for s in SETTINGS}


class Config:
    """Resolved settings, read as attributes (`config.store`), with where each came from."""

    def __init__(self, values: Mapping[str, Any], sources: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.sources = dict(sources)  # key -> "default" | "file" | "env" | "flag"

    def __getattr__(self, key: str) -> Any:
        try:
            return self.__dict__["values"][key]
        except KeyError:
            raise AttributeError(key) from None

    def origin(self, key: str) -> str:
        """Where a setting was read, as its errors name it (`--default-branch`, `COMIND_DEFAULT_BRANCH`,
        `.comind.yml: default_branch`)."""
        setting = next(s for s in SETTINGS if s.key == key)
        return {"flag": setting.flag, "env": setting.env}.get(self.sources.get(key, ""), f"{CONFIG_FILE}: {key}")


def _parse(setting: Setting, value: Any, origin: str) -> Any:
    """The setting's value; ConfigError naming where it came from (which names the setting) and why."""
    try:
        return setting.parse(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def read_file(path: Path, memo: Path | None = None) -> dict[str, Any]:
    """The settings in `.comind.yml`; `memo` (in .git/comind) remembers the last parse.

    Importing and running PyYAML costs ~50 ms, half of a warm `comind show`; the file rarely
    changes, so its parse is kept beside its exact text and reused while the text is the same.
    """
    try:
        text = read_text(path)
    except FileNotFoundError:
        return {}
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None
    data = _remembered(memo, text)
    if data is None:
        try:
            data = parse_yaml(text)
        except ConfigError as exc:
            raise ConfigError(f"{path.name}: {exc}") from None
        if data is None:  # empty, or comments only: no settings
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path.name}: must be a mapping of settings (key: value lines), not {_kind(data)}")
        _check_keys(path.name, data)  # before anything else (the memo's JSON) touches the data
        _remember(memo, text, data)
    else:
        _check_keys(path.name, data)
    return data


def _kind(value: Any) -> str:
    """What a YAML document holds, in words (for one that is not a mapping)."""
    import datetime

    for kind, words in (
        (bool, "true or false"),
        (int | float, "a number"),
        (str, "text"),
        (list, "a list"),
        (set, "a set"),
        (bytes, "binary data"),
        (datetime.date, "a date"),
    ):
        if isinstance(value, kind):
            return words
    return "a single value"


def _check_keys(name: str, data: Mapping[Any, Any]) -> None:
    for key in data:
        if key not in BY_KEY:
            known = ", ".join(BY_KEY)
            raise ConfigError(f"{name}: unknown key {key!r} (known keys: {known})")


# Bounds on what a configuration or rule file may hold: it comes with the repository (a merge
# request can change it), so it must not be able to exhaust the machine that reads it.
MAX_FILE_BYTES = 64 * 1024
MAX_DEPTH = 32
MAX_NODES = 10_000
MAX_NUMBER_CHARS = 32


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file's UTF-8 text, at most `max_bytes`; ConfigError otherwise (FileNotFoundError
    passes through). Opened without blocking, so a FIFO or a device is refused, not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError("not a regular file")
    with os.fdopen(fd, "rb") as handle:
        try:
            raw = handle.read(max_bytes + 1)
        except OSError as exc:
            raise ConfigError(f"cannot read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise ConfigError(f"larger than {max_bytes} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text") from None


def parse_yaml(text: str) -> Any:
    """YAML as data, bounded: no aliases (a billion-laughs file expands from a few hundred bytes),
    at most MAX_DEPTH levels and MAX_NODES nodes, finite numbers of at most MAX_NUMBER_CHARS
    characters. ConfigError with one line saying what is wrong."""
    import yaml

    try:
        return yaml.load(text, Loader=_bounded_loader())  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        at = f" at line {_line_of(exc, text)}" if getattr(exc, "problem_mark", None) else ""
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"not valid YAML{at}: {problem}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # a timestamp like 2024-02-30
        raise ConfigError(f"not valid YAML: {exc}") from None


def _line_of(exc: Any, text: str) -> int:
    """The line (from 1) a YAML error is on. PyYAML's marks count from 0; one at the end of the text
    (an unclosed bracket or quote) is past the last line, so it is reported where what is left open
    began (the context mark), else on the last line holding text."""
    mark = exc.problem_mark
    if mark.index < len(text):
        return int(mark.line) + 1
    context = getattr(exc, "context_mark", None)
    if context is not None:
        return int(context.line) + 1
    return max(text.rstrip().count("\n") + 1, 1)


@cache
def _bounded_loader() -> type:
    import yaml
    from yaml.events import AliasEvent

    class Bounded(yaml.SafeLoader):
        depth = 0
        nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event: Any = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, AliasEvent):
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)  # type: ignore[arg-type]
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_NODES} values", event.start_mark)
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise yaml.composer.ComposerError(
                        None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            return super().construct_yaml_int(_short_number(node))

        def construct_yaml_float(self, node: Any) -> Any:
            value = super().construct_yaml_float(_short_number(node))
            if not math.isfinite(value):
                raise yaml.constructor.ConstructorError(
                    None, None, f"{node.value!r} is not a finite number", node.start_mark
                )
            return value

    def _short_number(node: Any) -> Any:
        if len(node.value) > MAX_NUMBER_CHARS:
            raise yaml.constructor.ConstructorError(
                None, None, f"a number of {len(node.value)} characters, at most {MAX_NUMBER_CHARS}", node.start_mark
            )
        return node

    Bounded.add_constructor("tag:yaml.org,2002:int", Bounded.construct_yaml_int)
    Bounded.add_constructor("tag:yaml.org,2002:float", Bounded.construct_yaml_float)
    return Bounded


def _remembered(memo: Path | None, text: str) -> dict[str, Any] | None:
    import json

    try:
        saved = json.loads(memo.read_text(encoding="utf-8")) if memo else None
    except (OSError, ValueError):
        return None
    if isinstance(saved, dict) and saved.get("text") == text and isinstance(saved.get("data"), dict):
        return dict(saved["data"])
    return None


def _remember(memo: Path | None, text: str, data: dict[str, Any]) -> None:
    """Best effort: a parse that JSON cannot hold as it is (dates, odd keys) is not remembered."""
    import json

    if memo is None:
        return
    try:
        encoded = json.dumps({"text": text, "data": data})
        if json.loads(encoded)["data"] != data:
            return
        memo.parent.mkdir(exist_ok=True)
        tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
        tmp.write_text(encoded, encoding="utf-8")
        os.replace(tmp, memo)
    except (OSError, TypeError, ValueError):
        return


def load(
    root: Path, flags: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None, memo: Path | None = None
) -> Config:
    """Resolve every setting: flag, then environment, then `.comind.yml`, then the default."""
    env = os.environ if env is None else env
    file_values = read_file(root / CONFIG_FILE, memo)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for setting in SETTINGS:
        flag_value = (flags or {}).get(setting.key)
        if flag_value is not None:
            values[setting.key], sources[setting.key] = _parse(setting, flag_value, setting.flag), "flag"
        elif env.get(setting.env):
            values[setting.key], sources[setting.key] = _parse(setting, env[setting.env], setting.env), "env"
        elif file_values.get(setting.key) is not None:
            values[setting.key] = _parse(setting, file_values[setting.key], f"{CONFIG_FILE}: {setting.key}")
            sources[setting.key] = "file"
            if setting.key == "store":
                check_store_location(values["store"], root)
        else:
            values[setting.key], sources[setting.key] = setting.default, "default"
            if setting.key == "store":  # (its folders come with the repository, as the file does)
                check_store_location(setting.default, root, "store (the default)")
    return Config(values, sources)


def template(store: str | None = None) -> str:
    """The commented `.comind.yml` that `comind init` writes."""
    lines = [
        "# comind configuration. Every setting also has an environment variable and a flag;",
        "# flags win over the environment, which wins over this file.",
        "",
    ]
    for setting in SETTINGS:
        lines.append(f"# {setting.help}")
        lines.append(f"# env {setting.env}, flag {setting.flag}")
        if setting.key == "store":
            lines.append(f"store: {store or setting.default}")
        else:
            default = "" if setting.default is None else f" {setting.default}"
            lines.append(f"# {setting.key}:{default}")
        lines.append("")
    return "\n".join(lines)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `.comind.yml`, made from SETTINGS (schemas/comind.schema.json is its copy)."""
    fragments: dict[Any, dict[str, Any]] = {
        _positive_int: {"type": "integer", "minimum": 1},
        _fraction: {"type": "number", "minimum": 0, "maximum": 1},
        _text: {"type": "string", "minLength": 1},
        _store: {"type": "string", "minLength": 1},
        _rule_options: {
            "type": "object",
            "additionalProperties": {"type": ["number", "string", "boolean", "object"]},
        },
    }
    properties: dict[str, Any] = {}
    for setting in SETTINGS:
        fragment: dict[str, Any] = (
            {"enum": list(setting.choices)} if setting.choices else dict(fragments[setting.parse])
        )
        fragment["description"] = f"{setting.help} (environment {setting.env}, flag {setting.flag})"
        if setting.default is not None:
            fragment["default"] = setting.default
        properties[setting.key] = fragment
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "comind configuration (.comind.yml)",
        "type": ["object", "null"],
        "additionalProperties": False,
        "properties": properties,
    }
