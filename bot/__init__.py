"""comind.bot: the merge-request bot. One module per forge, registered in ``FORGES``.

Adding a forge is one module with a class that implements :class:`comind.bot.forge.Forge` and a
``from_env`` classmethod, and one line here. The forge modules import their HTTP libraries only
when a forge is built, so importing ``comind.bot`` stays cheap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from comind.bot.forge import Forge, ForgeError
from comind.bot.github import GitHubForge
from comind.bot.gitlab import GitLabForge

FORGES: dict[str, type[GitHubForge] | type[GitLabForge]] = {
    "github": GitHubForge,
    "gitlab": GitLabForge,
}


def get_forge(name: str, **config: Any) -> Forge:
    """The forge ``name`` built from keyword arguments (see each class's constructor)."""
    try:
        cls = FORGES[name]
    except KeyError:
        raise ForgeError(f"unknown forge {name!r}; known: {', '.join(sorted(FORGES))}") from None
    forge: Forge = cls(**config)
    return forge


def forge_from_env(env: Mapping[str, str], name: str | None = None) -> Forge:
    """The forge of the CI job described by ``env`` (GitHub Actions or GitLab CI)."""
    if name is None:
        if env.get("GITHUB_ACTIONS") == "true":
            name = "github"
        elif env.get("GITLAB_CI") == "true":
            name = "gitlab"
        else:
            raise ForgeError(
                "cannot tell the forge from the environment (neither GITHUB_ACTIONS nor "
                "GITLAB_CI is set); name it with --forge github|gitlab"
            )
    if name not in FORGES:
        raise ForgeError(f"unknown forge {name!r}; known: {', '.join(sorted(FORGES))}")
    forge: Forge = FORGES[name].from_env(env)
    return forge


def merge_request_number_from_env(env: Mapping[str, str]) -> int | None:
    """The pull/merge request a CI job runs for, or None (a branch or tag pipeline).

    GitHub: the event file's ``pull_request.number`` (or an ``issue_comment`` on a pull request),
    else ``GITHUB_REF=refs/pull/N/merge``. GitLab: ``CI_MERGE_REQUEST_IID``.
    """
    if env.get("CI_MERGE_REQUEST_IID", "").isdigit():
        return int(env["CI_MERGE_REQUEST_IID"])
    if path := env.get("GITHUB_EVENT_PATH"):
        # Actions always writes it: one it cannot read must fail the job, not skip the check as
        # "not a merge request pipeline".
        try:
            with open(path, encoding="utf-8") as handle:
                event = json.load(handle)
        except OSError as exc:
            raise ForgeError(f"GITHUB_EVENT_PATH {path}: cannot read it: {exc.strerror}") from None
        except ValueError as exc:
            raise ForgeError(f"GITHUB_EVENT_PATH {path}: not a JSON event ({exc})") from None
        if not isinstance(event, dict):
            raise ForgeError(f"GITHUB_EVENT_PATH {path}: not a JSON event (a {type(event).__name__})")
        if isinstance(event.get("pull_request"), dict):
            return int(event["pull_request"]["number"])
        issue = event.get("issue")
        if isinstance(issue, dict) and issue.get("pull_request"):
            return int(issue["number"])
    found = re.fullmatch(r"refs/pull/(\d+)/(?:merge|head)", env.get("GITHUB_REF", ""))
    return int(found.group(1)) if found else None


__all__ = ["FORGES", "Forge", "ForgeError", "forge_from_env", "get_forge", "merge_request_number_from_env"]
