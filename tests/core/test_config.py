"""`.comind.yml` and rule files are read safely: bounded YAML, regular files, keys checked first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from comind import config
from comind.config import ConfigError, load, parse_yaml, read_file

# The classic billion-laughs document: 342 bytes that expand to 10^9 strings.
LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)


def one_line_error(path: Path, memo: Path | None = None) -> str:
    with pytest.raises(ConfigError) as err:
        read_file(path, memo)
    message = str(err.value)
    assert "\n" not in message and message.startswith(".comind.yml: "), message
    return message


def test_billion_laughs_is_refused_before_it_expands(tmp_path: Path) -> None:
    assert len(LAUGHS.encode()) == 342
    path = tmp_path / ".comind.yml"
    path.write_text(LAUGHS)
    memo = tmp_path / "memo.json"
    assert "aliases (*name) are not allowed" in one_line_error(path, memo)
    assert not memo.exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("store: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested deeper than 32 levels"),
        ("dormant_days: .inf\n", "'.inf' is not a finite number"),
        ("drift_threshold: -.Inf\n", "is not a finite number"),
        ("drift_threshold: .nan\n", "is not a finite number"),
        ("dormant_days: " + "9" * 5000 + "\n", "a number of 5000 characters, at most 32"),
        ("drift_threshold: 1" + "0" * 400 + ".5\n", "a number of 403 characters"),
        ("dormant_days: 2024-02-30\n", "day is out of range for month"),
        ("store: [" + "1, " * 10_001 + "]\n", "more than 10000 values"),
        ("store: x\nstroe: typo\n", "unknown key 'stroe'"),
    ],
)
def test_hostile_values_are_one_line_errors(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / ".comind.yml"
    path.write_text(text)
    assert said in one_line_error(path, tmp_path / "memo.json")
    assert not (tmp_path / "memo.json").exists()  # nothing unchecked is remembered


def test_only_regular_files_of_bounded_size_are_read(tmp_path: Path) -> None:
    path = tmp_path / ".comind.yml"
    path.symlink_to("/dev/zero")
    assert one_line_error(path) == ".comind.yml: not a regular file"
    path.unlink()
    os.mkfifo(path)  # nobody writes to it: reading must not wait
    assert one_line_error(path) == ".comind.yml: not a regular file"
    path.unlink()
    path.mkdir()
    assert one_line_error(path) == ".comind.yml: not a regular file"
    path.rmdir()
    path.write_text("# " + "x" * config.MAX_FILE_BYTES + "\n")
    assert one_line_error(path) == f".comind.yml: larger than {config.MAX_FILE_BYTES} bytes"
    path.write_bytes(b"store: \xff\n")
    assert one_line_error(path) == ".comind.yml: not UTF-8 text"


def test_a_store_setting_stays_inside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    path = root / ".comind.yml"
    for store, said in [
        ("''", "store: must name a path inside the repository or an object store URL, not nothing"),
        ("'  '", "not nothing"),
        ("file:///etc", "file:// is not a store a repository may choose"),
        ("/etc", "'/etc' is outside the repository"),
        ("../elsewhere", "'../elsewhere' is outside the repository"),
        (".", "is the repository root"),
    ]:
        path.write_text(f"store: {store}\n")
        with pytest.raises(ConfigError) as err:
            load(root, env={})
        assert said in str(err.value) and "\n" not in str(err.value), (store, str(err.value))
    (root / "out").symlink_to(tmp_path)
    path.write_text("store: out/ledger\n")
    with pytest.raises(ConfigError, match="outside the repository"):
        load(root, env={})
    for store in ("inside/ledger", ".comind/ledger", "s3://bucket/prefix", "gs://b/p", "memory:///x"):
        path.write_text(f"store: {store}\n")
        assert load(root, env={}).store == store
    # The person running comind may choose any place, by the environment or a flag.
    path.write_text("store: /etc\n")
    assert load(root, env={"COMIND_STORE": str(tmp_path / "shared")}).store == str(tmp_path / "shared")
    assert load(root, {"store": "file:///tmp/x"}, env={}).sources["store"] == "flag"
    with pytest.raises(ConfigError, match=r"^--store: must name a path"):
        load(root, {"store": ""}, env={})


@pytest.mark.parametrize("text", ["", "\n", "# nothing set yet\n", "---\n"])
def test_an_empty_file_sets_nothing(tmp_path: Path, text: str) -> None:
    (tmp_path / ".comind.yml").write_text(text)
    assert read_file(tmp_path / ".comind.yml") == {}
    assert load(tmp_path, env={}).sources == {s.key: "default" for s in config.SETTINGS}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("store\n", "text"),
        ("[store, x]\n", "a list"),
        ("- a\n- b\n", "a list"),
        ("42\n", "a number"),
        ("true\n", "true or false"),
        ("2024-01-01\n", "a date"),
    ],
)
def test_a_file_that_is_not_a_mapping_says_what_it_holds(tmp_path: Path, text: str, kind: str) -> None:
    path = tmp_path / ".comind.yml"
    path.write_text(text)
    assert one_line_error(path) == f".comind.yml: must be a mapping of settings (key: value lines), not {kind}"


def test_a_bad_value_is_named_with_its_setting_not_its_neighbours(tmp_path: Path) -> None:
    for text, said in [
        ("dead_ends: {D5.lines: abc}\n", "dead_ends: D5.lines: must be a whole number of 0 or more (got 'abc')"),
        ("dead_ends: {D5: {lines: 2.5}}\n", "dead_ends: D5.lines: must be a whole number of 0 or more (got 2.5)"),
        ("dead_ends: {D5.lines: 3, D1.share: 7}\n", "dead_ends: D1.share: must be a number between 0 and 1 (got 7)"),
        (
            "dead_ends: [D5.lines]\n",
            "dead_ends: must be a mapping of RULE.OPTION: value, e.g. {D5.lines: 50} (got ['D5.lines'])",
        ),
        ("dormant_days: soon\n", "dormant_days: must be a whole number of at least 1 (got 'soon')"),
        ("dormant_days: true\n", "dormant_days: must be a whole number of at least 1 (got True)"),
        ("dormant_days: 2.5\n", "dormant_days: must be a whole number of at least 1 (got 2.5)"),
        ("drift_threshold: true\n", "drift_threshold: must be a number between 0 and 1 (got True)"),
        ("store: 5\n", "store: must be a path or a URL, as text (got 5)"),
        ("fail_level: loud\n", "fail_level: must be one of none, note, warning, error (got 'loud')"),
    ]:
        (tmp_path / ".comind.yml").write_text(text)
        with pytest.raises(ConfigError) as err:
            load(tmp_path, env={})
        assert str(err.value) == f".comind.yml: {said}"


def test_a_flag_or_variable_names_its_setting_once(tmp_path: Path) -> None:
    for flags, env, said in [
        ({"dormant_days": "abc"}, {}, "--dormant-days: must be a whole number of at least 1 (got 'abc')"),
        ({}, {"COMIND_DRIFT_THRESHOLD": "2"}, "COMIND_DRIFT_THRESHOLD: must be between 0 and 1 (got '2')"),
        ({"dead_ends": "D5.lines=x"}, {}, "--dead-ends: D5.lines: must be a whole number of 0 or more (got 'x')"),
    ]:
        with pytest.raises(ConfigError) as err:
            load(tmp_path, flags, env=env)
        assert str(err.value) == said


def test_a_yaml_error_names_the_line_it_is_on(tmp_path: Path) -> None:
    path = tmp_path / ".comind.yml"
    for text, line in [
        ("store: [unclosed", 1),  # at the end of the text: where the bracket opened
        ("store: [unclosed\n", 1),
        ('store: "unclosed\n\n\n', 1),
        ("store: x\ndead_ends: {D5.lines: 3\n", 2),
        ("store: x\ndead_ends: {D5.lines: 3\n# a comment\n\n", 2),
        ("a: b: c\n", 1),  # elsewhere: where the problem is
        ("store: x\n  y: 2\n", 2),
        ("store: x\n\tdormant_days: 1\n", 2),
        ("store: [a,\n  b\nother: 1\n", 3),
    ]:
        path.write_text(text)
        assert f"not valid YAML at line {line}: " in one_line_error(path), text


def test_ordinary_yaml_still_parses() -> None:
    text = "store: a\nlist: [1, 2.5, -3]\nnested: {a: {b: [x, y]}}\n<<: {merged: true}\n"
    assert parse_yaml(text) == {"store": "a", "list": [1, 2.5, -3], "nested": {"a": {"b": ["x", "y"]}}, "merged": True}
    assert parse_yaml("anchor: &a 1\n") == {"anchor": 1}  # an anchor nobody refers to expands nothing


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_fuzzed_config_is_data_or_one_line_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / ".comind.yml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        data = read_file(path)
    except ConfigError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(data, dict) and set(data) <= set(config.BY_KEY)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=40,
    )
)
def test_fuzzed_yaml_documents_parse_or_fail_in_one_line(value: object) -> None:
    import yaml

    text = yaml.safe_dump(value)
    try:
        parse_yaml(text)
    except ConfigError as exc:
        assert "\n" not in str(exc)
