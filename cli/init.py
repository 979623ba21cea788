"""comind init: write a commented .comind.yml, create the store, and (--ci) the CI set-up."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from comind import project

GITHUB_WORKFLOW = ".github/workflows/comind.yml"
GITLAB_CI = ".gitlab-ci.yml"
# editors that read this line (the YAML language server) validate the file and complete its keys
SCHEMA_LINE = f"# yaml-language-server: $schema={project.raw_url('schemas/comind.schema.json')}\n"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "init",
        parents=[common],
        help="write .comind.yml and create the store (and, with --ci, the CI set-up)",
        description="Write a commented .comind.yml in the repository root and create the store. "
        "With --ci, also write the GitHub workflow or the GitLab include that runs comind on merge requests.",
        epilog="examples:\n  comind init\n  comind init --ci github\n  comind init --ci gitlab --store s3://bucket/comind",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing .comind.yml (and CI file)")
    p.add_argument(
        "--ci",
        choices=("github", "gitlab"),
        help=f"also write {GITHUB_WORKFLOW} (github) or {GITLAB_CI} including the template (gitlab), e.g. --ci github",
    )
    p.set_defaults(handler=run)


def github_workflow(default_branch: str, release: str = project.RELEASE) -> str:
    """The workflow: every pull request, its comments and pushes to the default branch, with the
    least permissions the action needs (it reads the code, comments, and uploads no SARIF); one run
    per pull request at a time, and comments on plain issues skipped."""
    major = release.split(".")[0]
    docs = project.docs_url("github.md")
    return f"""# comind: checks each pull request against the team's recorded knowledge ({docs})
name: comind
on:
  pull_request:
  pull_request_review_comment:
    types: [created, edited]
  issue_comment:
    types: [created, edited]
  push:
    branches: [{json.dumps(default_branch)}]
permissions:
  contents: read        # the code and its history
  pull-requests: write  # the report comment and answers to /comind commands
concurrency:            # one run per pull request at a time: answers are never doubled
  group: comind-${{{{ github.event.pull_request.number || github.event.issue.number || github.ref }}}}
  cancel-in-progress: false
jobs:
  comind:
    if: github.event_name != 'issue_comment' || github.event.issue.pull_request
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0   # comind reads the history: reverts, trailers, the merge base
      - uses: {project.action_ref(major)}
"""


def gitlab_include(release: str = project.RELEASE) -> str:
    return f"""# comind on merge requests ({project.docs_url("gitlab.md")}); the bot needs the CI/CD
# variable COMIND_GITLAB_TOKEN (a project access token with the api scope)
include:
  - remote: {project.raw_url("templates/gitlab-ci.yml", release)}
variables:
  COMIND_VERSION: "{release}"
"""


def _write_ci(root: Path, kind: str, force: bool, default_branch: str) -> tuple[str, bool]:
    """Write the CI file; (its path, whether it was written). An existing file is kept, not merged."""
    github = kind == "github"
    name, text = (GITHUB_WORKFLOW, github_workflow(default_branch)) if github else (GITLAB_CI, gitlab_include())
    path = root / name
    if path.exists() and not force:
        if not github:
            print(f"kept the existing {name}: add these lines to it\n" + text)
        else:
            print(f"kept the existing {name} (--force rewrites it)")
        return name, False
    from comind.checks.formats import atomic_write  # (a temporary of its own: no link the clone holds)

    atomic_write(path, text)
    print(f"wrote {name}")
    return name, True


def _pushed_branch(ws: Any) -> str:
    """The default branch as a push names it: without its remote (`origin/13.x`, `upstream/dev`);
    with none known, the branch checked out, else the only local one, else main."""
    branch = str(ws.default_branch())
    remote, _, name = branch.partition("/")
    if name and ((ws.git_dir / "refs" / "remotes" / remote).is_dir() or remote in ws.git("remote").split()):
        return name
    if branch != "HEAD":
        return branch
    heads = ws.git_dir / "refs" / "heads"
    local = sorted(p.name for p in heads.iterdir() if p.is_file()) if heads.is_dir() else []
    return ws.branch() or (local[0] if len(local) == 1 else "main")


def _committed_store(ws: Any, args: argparse.Namespace) -> str | None:
    """The store chosen for this run (flag, else COMIND_STORE) when `.comind.yml` may name it, so
    teammates and CI read the same; one outside the repository stays the runner's own choice."""
    from comind import config
    from comind.cli import note

    chosen = getattr(args, "setting_store", None) or os.environ.get("COMIND_STORE") or None
    if chosen is None:
        return None
    try:
        config.check_store_location(chosen, ws.root)
    except config.ConfigError:
        note(f"comind: .comind.yml keeps the default store: {chosen} is outside the repository (set it each time)")
        return None
    return str(chosen)


def run(args: argparse.Namespace) -> int:
    from comind import config
    from comind.cli import note, workspace

    ws = workspace(args)
    path = ws.root / config.CONFIG_FILE
    if path.exists() and not args.force:
        print(f"kept the existing {path.name} (--force rewrites it)")
    else:
        from comind.checks.formats import atomic_write  # (a temporary of its own: no link the clone holds)

        atomic_write(path, SCHEMA_LINE + config.template(_committed_store(ws, args)))
        print(f"wrote {path.name}")
        ws = workspace(args)  # re-read: the new file is now the configuration
    ws.store.create()  # a local store's folder; a remote one is checked to be reachable
    ws.actor_salt(create=True)  # the key of actor pseudonyms, committed with the store (none if it holds records)
    commit = [config.CONFIG_FILE]
    if ws.store.local_root is not None:
        ignore = ws.store.local_root / ".gitignore"
        if not ignore.exists():  # the inbox is reviewed and committed; snapshots are for object stores
            ignore.write_text("_ledger/snapshots/\n", encoding="utf-8")
        # a store in the work tree is committed with it; one outside it (`../x`, links and `..`
        # resolved) or inside .git is in no commit
        where, root = Path(os.path.realpath(ws.store.local_root)), Path(os.path.realpath(ws.root))
        if where.is_relative_to(root) and where != root and where.relative_to(root).parts[0] != ".git":
            commit.append(where.relative_to(root).parts[0] + "/")
    print(f"store: {ws.config.store}")
    if args.ci:
        commit.append(_write_ci(ws.root, args.ci, args.force, _pushed_branch(ws))[0])
    # (run again with everything committed, there is nothing to commit)
    if ws.git("status", "--porcelain", "--untracked-files=all", "--", *commit).strip():
        note(f"commit: git add {' '.join(commit)} && git commit -m 'Set up comind'")
    note('next: comind remember constraint --on PATH --title "…" --rule "…" --severity must')
    return 0
