"""Configuration: `.comind.yml`, environment variables and flags, in that order of precedence.

Every setting is one row of SETTINGS: its key in the file, its environment variable, its flag,
its type, its default and a line of help. `comind init` writes the file from the same table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from comind.errors import ComindError
from comind.rulebook import parse_overrides

CONFIG_FILE = ".comind.yml"


class ConfigError(ComindError):
    pass


def _positive_int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):  # int()'s own words ("invalid literal for int() with base 10") say less
        raise ValueError("must be a whole number of at least 1") from None
    if number < 1:
        raise ValueError("must be at least 1")
    return number


def _fraction(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError("must be a number between 0 and 1") from None
    if not 0.0 <= number <= 1.0:
        raise ValueError("must be between 0 and 1")
    return number


def _text(value: Any) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError("must be text")
    return str(value)


def _choice(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return str(value)

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


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "store",
        _text,
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
        parse_overrides,
        {},
        "options of the dead-end, revert and reland rules, e.g. {D5.lines: 50} (comind check --list-rules)",
    ),
    Setting(
        "fail_level",
        _choice("none", "note", "warning", "error"),
        "error",
        "comind check exits 1 when a finding is at or above this level",
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


def _parse(setting: Setting, value: Any, origin: str) -> Any:
    try:
        return setting.parse(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {setting.key}: {exc} (got {value!r})") from None


def read_file(path: Path, memo: Path | None = None) -> dict[str, Any]:
    """The settings in `.comind.yml`; `memo` (in .git/comind) remembers the last parse.

    Importing and running PyYAML costs ~50 ms, half of a warm `comind show`; the file rarely
    changes, so its parse is kept beside its exact text and reused while the text is the same.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path.name}: cannot read ({exc})") from None
    data = _remembered(memo, text)
    if data is None:
        data = _parse_yaml(path.name, text)
        _remember(memo, text, data)
    for key in data:
        if key not in BY_KEY:
            known = ", ".join(BY_KEY)
            raise ConfigError(f"{path.name}: unknown key {key!r} (known keys: {known})")
    return data


def _parse_yaml(name: str, text: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{name}: not valid YAML ({first})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: must be a mapping of settings, not {type(data).__name__}")
    return dict(data)


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
            values[setting.key] = _parse(setting, file_values[setting.key], CONFIG_FILE)
            sources[setting.key] = "file"
        else:
            values[setting.key], sources[setting.key] = setting.default, "default"
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
