"""Distribution and set-up: the schema, completion, init --ci, CLI ergonomics, the built wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from comind import config
from comind.checks.formats import FormatContext
from comind.cli import build_parser
from comind.cli.completion import script

ROOT = Path(__file__).resolve().parents[2]


def test_schema_file_is_the_generated_one() -> None:
    saved = json.loads((ROOT / "schemas" / "comind.schema.json").read_text())
    assert saved == config.json_schema()
    jsonschema.Draft202012Validator.check_schema(saved)
    assert set(saved["properties"]) == set(config.BY_KEY)


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 200), st.floats(-1, 2), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*config.BY_KEY, "unknown_key"]), VALUES, max_size=4))
def test_what_the_schema_accepts_comind_accepts(data: dict[str, object]) -> None:
    validator = jsonschema.Draft202012Validator(config.json_schema())
    if validator.is_valid(data):
        for key, value in data.items():
            if value is not None:
                config.BY_KEY[key].parse(value)  # raises if comind is stricter than the schema


def test_every_flag_has_help_and_settings_are_listed_once() -> None:
    parser = build_parser(())
    top = parser.format_help()
    assert "--fail-level {none,note,warning,error}" in top and top.count("--dormant-days") == 2
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, command in sub.choices.items():  # type: ignore[union-attr]
        text = command.format_help()
        assert "--dormant-days" not in text and "comind --help" in text, name
        for action in command._actions:
            assert action.help or not action.option_strings, (
                f"{name} {action.option_strings or action.dest} has no help"
            )


def test_completion_scripts(tmp_path: Path) -> None:
    bash = tmp_path / "c.bash"
    bash.write_text(script("bash"))
    probe = f'source {bash}; COMP_WORDS=(comind check --fail-level ""); COMP_CWORD=3; _shtab_comind; '
    probe += 'echo "${COMPREPLY[@]}"'
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["none", "note", "warning", "error"]
    fish = script("fish")
    assert "complete -c comind -n '__comind_at check' -l fail-level -x -a 'none note warning error'" in fish
    if shutil.which("fish"):
        (tmp_path / "c.fish").write_text(fish)
        probe = f'source {tmp_path / "c.fish"}; complete -C "comind review "'
        out = subprocess.run(["fish", "-c", probe], capture_output=True, text=True, check=True).stdout
        assert {line.split("\t")[0] for line in out.splitlines()} == {"confirm", "retract", "dispute", "supersede"}
    assert "#compdef comind" in script("zsh")


def test_init_ci_github_and_gitlab(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(repo, "init", "--ci", "github")
    assert result.code == 0 and "wrote .github/workflows/comind.yml" in result.out
    assert "git add .comind.yml .comind/ .github/workflows/comind.yml" in result.err
    workflow = yaml.safe_load((repo / ".github/workflows/comind.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    steps = workflow["jobs"]["comind"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0 and steps[1]["uses"].endswith("/comind@v0")
    assert workflow[True]["push"] == {"branches": ["main"]}  # (YAML 1.1 reads the key `on` as true)
    assert "issue.pull_request" in workflow["jobs"]["comind"]["if"] and workflow["concurrency"]["group"]
    assert (repo / ".comind.yml").read_text().startswith("# yaml-language-server: $schema=")
    gitlab = cli(repo, "init", "--ci", "gitlab")
    included = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())
    assert gitlab.code == 0 and included["include"][0]["remote"].endswith("/v0.1.0/templates/gitlab-ci.yml")
    assert cli(repo, "-q", "init", "--ci", "gitlab").err == ""  # kept, and quiet


def test_the_workflow_runs_on_pushes_to_the_repository_s_own_default_branch(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A default branch other than main or master (`13.x`, as origin/HEAD names it) is the one pushed to."""
    for argv in (
        ["branch", "-m", "main", "13.x"],
        ["update-ref", "refs/remotes/origin/13.x", "HEAD"],
        ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/13.x"],
    ):
        subprocess.run(["git", *argv], cwd=repo, check=True)
    assert cli(repo, "init", "--ci", "github").code == 0
    workflow = yaml.safe_load((repo / ".github/workflows/comind.yml").read_text())
    assert workflow[True]["push"] == {"branches": ["13.x"]}
    subprocess.run(["git", "remote", "add", "upstream", "https://example.com/x.git"], cwd=repo, check=True)
    assert cli(repo, "--default-branch", "upstream/dev", "init", "--ci", "github", "--force").code == 0
    workflow = yaml.safe_load((repo / ".github/workflows/comind.yml").read_text())
    assert workflow[True]["push"] == {"branches": ["dev"]}  # the branch, not the remote's name for it


def test_confirmations_quiet_and_missing_output_folder(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli(repo, "init")
    done = cli(repo, "remember", "question", "--on", "repo:", "--title", "Who owns billing?", "--question", "who?")
    rid = done.out.strip()
    assert done.code == 0 and "remembered question" in done.err and "commit it" in done.err
    review = cli(repo, "review", "confirm", rid)
    assert f"confirmed {rid[-8:]} “Who owns billing?”" in review.err
    assert cli(repo, "-q", "review", "dispute", rid).err == ""
    bad = cli(repo, "check", "--no-harvest", "--output", f"json={repo}/missing/dir/x.json")
    assert bad.code == 2 and "does not exist" in bad.err and len(bad.err.splitlines()) == 1
    assert not (repo / "missing").exists()


def test_colour_flag_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from comind import cli

    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli.colour() is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli.colour() is False
    cli._UI["color"] = "always"
    try:
        assert cli.colour() is True
    finally:
        cli._UI["color"] = "auto"


def test_sarif_category_is_the_actions_input() -> None:
    from comind.checks.findings import Report
    from comind.checks.formats import sarif

    context = FormatContext.from_env({"GITHUB_ACTIONS": "true", "COMIND_SARIF_CATEGORY": "comind/backend"})
    report = Report(base=None, head="a" * 40)  # type: ignore[call-arg]
    log = json.loads(sarif.render(report, context))
    assert log["runs"][0]["automationDetails"]["id"] == "comind/backend/" + "a" * 40
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = {s.get("name"): s for s in action["runs"]["steps"]}
    assert steps["Upload SARIF"]["with"]["category"] == "${{ inputs.category }}"
    assert steps["comind check"]["env"]["COMIND_SARIF_CATEGORY"] == "${{ inputs.category }}"


def test_gitlab_job_without_token_reports_instead_of_failing(repo: Path) -> None:
    template = yaml.safe_load((ROOT / "templates" / "gitlab-ci.yml").read_text())
    bot_step = template["comind"]["script"][1]
    env = {k: v for k, v in os.environ.items() if k != "COMIND_GITLAB_TOKEN"}
    done = subprocess.run(["bash", "-ec", bot_step], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "COMIND_GITLAB_TOKEN is not set" in done.stdout


@pytest.mark.slow
def test_built_wheel_installs_and_checks_outside_the_checkout(repo: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, ROOT], check=True)
    (wheel,) = dist.glob("comind-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([venv / "bin/pip", "install", "-q", wheel], check=True, cwd=tmp_path)
    version = subprocess.run([venv / "bin/comind", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("comind ") and "+unknown" not in version.stdout
    subprocess.run([venv / "bin/comind", "init", "--ci", "github"], cwd=repo, check=True)
    done = subprocess.run([venv / "bin/comind", "check"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_each_choice_field_s_help_example_is_one_of_its_choices() -> None:
    """`remember attempt --help` said `--outcome "stale grants after a role change"`, which is refused."""
    import re

    from comind.cli.remember import KIND_HELP
    from comind.records import KIND_FIELDS

    for fields in KIND_FIELDS.values():
        for field in (f for f in fields if f.shape == "choice" and f.name in KIND_HELP):  # (flags people type)
            example = re.search(r"e\.g\. --[\w-]+ \"?([^\"(]+?)\"?(?: \(|$)", KIND_HELP[field.name])
            assert example and example.group(1) in field.choices, (field.name, KIND_HELP[field.name])
