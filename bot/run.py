"""``comind bot run`` and ``comind bot serve``: the bot's steps on one merge request.

A run (in CI, or for one webhook event):

1. answer the ``/comind`` commands not answered yet — only for people with write access (anyone
   else gets one short reply and nothing is written), never the bot's own comments, each comment
   once across runs and again when an edit changed its commands (the marker in the bot's reply,
   not local state: CI runners are fresh);
2. harvest the merge request (Lore in resolved threads, commands, revert, dead end), and sweep
   the project's merge requests updated since the last sweep for reverts and dead ends;
3. run ``comind check`` on it, or read the report ``--report FILE`` that an earlier step wrote;
4. post the report (``comind.bot.report``).

Records go to the harvest cache (``ws.harvest_store``: re-derivable from the forge, DESIGN §8),
or to the shared store with ``publish``. A token that cannot write (a pull request from a fork
gets a read-only ``GITHUB_TOKEN``: the first write answers 403) turns the run into annotations
and the job summary, said in one log line, exit 0. Any other failure of a step is reported in
one line naming the request and the run goes on with the next step; the exit code is then 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.ledger import Ledger

import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from comind.bot import FORGES, merge_request_number_from_env
from comind.bot.commands import (
    READER_REPLY,
    CommandAnswer,
    CommandError,
    Origin,
    Resolver,
    answer_marker,
    answer_text,
    answers,
    command_lines,
    error_answer,
    execute,
    is_answered,
    parse_commands,
    revision,
)
from comind.bot.forge import Forge, ForgeError, NoToken, RetryPolicy
from comind.bot.report import load_report, post_report
from comind.bot.server import make_server, merge_request_number
from comind.checks.findings import Report
from comind.checks.formats import FormatContext, github, text
from comind.checks.run import run_check as check_change
from comind.errors import ComindError
from comind.harvest.mr import MergeRequestHarvester, project_of
from comind.mergerequests import MergeRequest, Note
from comind.query import open_ledger
from comind.workspace import Workspace

log = logging.getLogger(__name__)

COMMENT_EVENTS = ("issue_comment", "pull_request_review_comment", "pull_request_review")
READ_ONLY = (
    "comind: bot: the token cannot write to this merge request (HTTP 403: a pull request from a fork "
    "gets a read-only token); findings go to annotations and the job summary instead"
)


def say(message: str) -> None:
    print(f"comind: bot: {message}", file=sys.stderr, flush=True)


class ReadOnly(Exception):
    """The forge refused a write with 403: the token cannot write here."""


def refused_write(exc: ForgeError) -> bool:
    """A write the token may not make (403 on POST/PATCH/PUT/DELETE), as opposed to a read that
    failed with 403 (e.g. GET /user, which says nothing about writing)."""
    verb = exc.request.split(" ", 1)[0]
    return exc.status == 403 and verb in ("POST", "PATCH", "PUT", "DELETE") and "reviewThreads" not in exc.request


def _reply(forge: Forge, number: int, note: Note, body: str) -> Note:
    try:
        return forge.reply(number, note, body)
    except ForgeError as exc:
        if refused_write(exc):
            raise ReadOnly(str(exc)) from None
        raise


# --- dry run ---------------------------------------------------------------------------------


class DryRun:
    """A forge that reads through ``inner`` and prints every write instead of making it
    (``comind bot run --dry-run``): the summary comment, inline comments, resolutions, replies."""

    def __init__(self, inner: Forge, out: Any = None) -> None:
        self.inner = inner
        self.out = out or sys.stdout
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # every read: merge request, files, notes, permissions

    def _show(self, what: str, body: str = "") -> None:
        self.writes += 1
        self.out.write(f"--- would {what}\n" + (body if body.endswith("\n") or not body else body + "\n"))
        self.out.flush()

    def _note(self, body: str, path: str | None = None, line: int | None = None) -> Note:
        from datetime import UTC, datetime

        now = datetime.now(UTC)
        return Note(f"dry-run-{self.writes}", "", body, now, now, "", None, path, line, path is not None, None, None)

    def upsert_summary(self, number: int, marker: str, body: str) -> str:
        self._show(f"post or edit the summary comment on #{number}", body)
        return f"dry-run-{self.writes}"

    def delete_summary(self, number: int, marker: str) -> None:
        self._show(f"delete the summary comment on #{number}")

    def post_inline(self, number: int, path: str, line: int, body: str, commit_sha: str) -> Note:
        self._show(f"comment on {path}:{line} of #{number}", body)
        return self._note(body, path, line)

    def reply(self, number: int, note: Note, body: str) -> Note:
        self._show(f"reply to {note.url or note.id} on #{number}", body)
        return self._note(body)

    def resolve_thread(self, number: int, thread_id: str) -> None:
        self._show(f"resolve thread {thread_id} on #{number}")

    def add_reaction(self, number: int, note: Note, reaction: str) -> None:
        self._show(f"react {reaction} to {note.url or note.id} on #{number}")


# --- step 1: commands ----------------------------------------------------------------------------


@dataclass
class Answered:
    notes: int = 0  # comments answered now
    commands: int = 0
    refused: int = 0  # comments from people without write access
    failed: int = 0  # commands answered with an error
    written: int = 0  # records written


def answer_commands(
    ws: Workspace,
    forge: Forge,
    number: int,
    *,
    publish: bool = False,
    mr: MergeRequest | None = None,
    notes: list[Note] | None = None,
    project: str | None = None,
) -> Answered:
    """CommandAnswer every comment on merge request ``number`` whose commands were not answered yet."""

    mr = mr or forge.merge_request(number)
    notes = forge.notes(number) if notes is None else notes
    me = forge.bot_login()
    done = answers(notes, me)
    project = project or project_of(forge, ws.repo_name)
    store = ws.store if publish else ws.harvest_store
    result = Answered()
    writers: dict[str, bool] = {}
    ledger: Ledger | None = None
    resolver: Resolver | None = None
    for note in notes:
        if note.author == me or is_answered(note, done):
            continue
        parsed = parse_commands(note.body)
        if not parsed:
            continue
        if note.author not in writers:
            writers[note.author] = forge.can_write(note.author)
        if not writers[note.author]:
            _reply(forge, number, note, f"{answer_marker(note)}\n{READER_REPLY}")
            result.refused += 1
            continue
        if ledger is None:
            ledger = open_ledger(ws)
            resolver = Resolver(ledger)
        assert resolver is not None
        said: list[CommandAnswer] = []
        for index, command in enumerate(parsed):
            if isinstance(command, CommandError):
                said.append(error_answer(command))
                continue
            origin = Origin(
                forge.name,
                project,
                number,
                mr.web_url,
                note,
                index,
                repo=ws.repo_name,
                salt=ws.actor_salt(),
                revision=revision(note, done),
            )
            said.append(execute(ws, ledger, command, origin, resolver, store))
        body = f"{answer_marker(note)}\n{answer_text(said)}"
        _reply(forge, number, note, body)
        result.notes += 1
        result.commands += len(said)
        result.failed += sum(1 for a in said if not a.ok)
        result.written += sum(a.written for a in said)
    if ledger is not None:
        ledger.close()
    return result


# --- the whole run ---------------------------------------------------------------------------


@dataclass
class RunResult:
    answered: Answered | None = None
    harvested: int = 0
    posted: Any = None
    degraded: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 2 if self.errors else 0


def run_check(ws: Workspace, mr: MergeRequest) -> Report | None:
    """``comind check`` on the merge request."""
    return check_change(ws, base=mr.base_sha, head=mr.head_sha)


def fallback(report: Report | None, context: FormatContext, forge_name: str) -> None:
    """Where the report goes when the bot cannot comment: annotations and the job summary."""
    if report is None:
        return

    if forge_name == "github":
        sys.stdout.write(github.render(report, context))
        problem = github.write_summary(report, context)
        if problem is not None:
            say(f"warning: {problem}")
    else:
        sys.stdout.write(text.render(report, context))
    sys.stdout.flush()


def run(
    ws: Workspace,
    forge: Forge,
    number: int,
    *,
    report: Report | None = None,
    check: bool = True,
    harvest: bool = True,
    publish: bool = False,
    env: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> RunResult:
    """The bot's steps on one merge request (see the module docstring). With ``dry_run`` the
    writes to the forge are printed instead (``forge`` should then be a :class:`DryRun`)."""

    env = os.environ if env is None else env
    result = RunResult()
    notes: list[Note] | None = None
    reported = report is not None  # the check step that wrote it printed it: never twice in one job
    try:
        mr = forge.merge_request(number)
    except ComindError as exc:
        say(f"cannot read merge request {number}: {exc}")
        result.errors.append(str(exc))
        return result

    def step(name: str, call: Callable[[], Any]) -> Any:
        if result.degraded and name in ("commands", "report"):
            return None
        try:
            return call()
        except ReadOnly:
            result.degraded = True
            print(READ_ONLY, file=sys.stderr, flush=True)
        except ComindError as exc:
            say(f"{name}: {exc}")
            result.errors.append(f"{name}: {exc}")
        return None

    def commands() -> Answered:
        nonlocal notes
        notes = forge.notes(number)
        return answer_commands(ws, forge, number, publish=publish, mr=mr, notes=notes)

    if dry_run:  # answering executes commands, which write records: not in a dry run
        say("dry run: /comind commands are not answered; nothing is written to the forge")
    else:
        result.answered = step("commands", commands)
    if result.answered and (result.answered.notes or result.answered.refused):
        a = result.answered
        say(
            f"answered {a.commands} command(s) in {a.notes} comment(s), {a.written} record(s) written"
            + (f", {a.failed} with an error" if a.failed else "")
            + (f"; refused {a.refused} comment(s) from people without write access" if a.refused else "")
        )
    if harvest:

        def harvesting() -> int:
            harvester = MergeRequestHarvester(ws, forge, publish=publish)
            here = harvester.harvest_merge_request(mr, notes)
            # reverts and dead ends across the project feed the check: a cheap incremental sweep
            there = harvester.harvest(comments=False)
            if there.over_budget:
                say(f"harvest: {there.over_budget}")
            return here.written + there.written

        written = step("harvest", harvesting)
        if written:
            result.harvested = written
            say(f"harvested {written} new record(s) (this merge request; reverts and dead ends across the project)")
    if report is None and check:
        report = step("check", lambda: run_check(ws, mr))
    if report is None:
        return result
    context = FormatContext.from_env(env, repo_root=ws.root, head_sha=mr.head_sha)
    if not result.degraded:
        result.posted = step("report", lambda: _post(forge, number, report, context, mr, notes))
        if result.posted is not None:
            p = result.posted
            say(
                ("dry run: would post " if dry_run else "report posted: ")
                + f"{p.inline} new inline comment(s), {p.kept} kept, {p.resolved} resolved, "
                f"{p.folded} in the summary only"
            )
    if result.degraded and not reported:
        fallback(report, context, forge.name)
    return result


def _post(
    forge: Forge, number: int, report: Report, context: FormatContext, mr: MergeRequest, notes: list[Note] | None
) -> Any:

    try:
        return post_report(forge, number, report, context=context, mr=mr, notes=notes)
    except ForgeError as exc:
        if refused_write(exc):
            raise ReadOnly(str(exc)) from None
        raise


# --- from the CI environment -------------------------------------------------------------------


def forge_name_from_env(env: Mapping[str, str], name: str | None) -> str:
    if name:
        return name
    if env.get("GITHUB_ACTIONS") == "true":
        return "github"
    if env.get("GITLAB_CI") == "true":
        return "gitlab"
    raise ComindError(
        "cannot tell the forge from the environment (neither GITHUB_ACTIONS nor GITLAB_CI "
        "is set); name it with --forge github|gitlab"
    )


def forge_config(name: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Adapter settings from the environment: COMIND_RETRY_BACKOFF (seconds, default 1) and,
    for GitHub, COMIND_FORGE_THROTTLE=0 to drop the pause between requests."""
    try:
        backoff = float(env.get("COMIND_RETRY_BACKOFF") or 1.0)
    except ValueError:
        raise ComindError(f"COMIND_RETRY_BACKOFF: not a number of seconds: {env['COMIND_RETRY_BACKOFF']!r}") from None
    config: dict[str, Any] = {"retry": RetryPolicy(backoff=max(0.0, backoff))}
    if name == "github":
        config["throttle"] = env.get("COMIND_FORGE_THROTTLE", "1") != "0"
    return config


def make_forge(name: str, env: Mapping[str, str]) -> Forge:

    if name not in FORGES:
        raise ComindError(f"unknown forge {name!r}; known: {', '.join(sorted(FORGES))}")
    forge: Forge = FORGES[name].from_env(env, **forge_config(name, env))
    return forge


def run_from_env(
    ws: Workspace,
    forge_name: str | None,
    env: Mapping[str, str],
    *,
    report_file: Path | None = None,
    publish: bool = False,
    number: int | None = None,
    dry_run: bool = False,
) -> int:
    """``comind bot run``: the CI job's merge request, from GitHub Actions' or GitLab CI's environment."""

    name = forge_name_from_env(env, forge_name)
    report = load_report(report_file) if report_file is not None else None
    number = number or merge_request_number_from_env(env)
    event = env.get("GITHUB_EVENT_NAME", "") if name == "github" else ""
    if number is None:
        say(f"not a merge request pipeline{f' ({event} event)' if event else ''}: nothing to do")
        return 0
    try:
        forge: Forge = make_forge(name, env)
    except NoToken as exc:  # no comments, but the findings still reach the job log (and its summary)
        say(f"{exc}; the bot posts no comments")
        if report is not None:  # the check step that wrote it has printed it
            say("the findings are in the check step's output (annotations, job summary, Code Quality report)")
            return 0
        base = _base_from_env(name, env)
        report = check_change(ws, base=base) if base else None
        if report is None:
            say("no report to show: run `comind check` in the job, or give the merge request's base")
        else:
            fallback(report, FormatContext.from_env(env, repo_root=ws.root), name)
        return 0
    if dry_run:
        forge = DryRun(forge)  # a Forge by delegation
        publish = False  # a dry run writes nothing shared either
    comment_event = event in COMMENT_EVENTS
    result = run(
        ws,
        forge,
        number,
        report=report,
        check=not comment_event,
        harvest=not comment_event,
        publish=publish,
        env=env,
        dry_run=dry_run,
    )
    return result.exit_code


def _base_from_env(forge_name: str, env: Mapping[str, str]) -> str | None:
    """The merge request's base as the CI job knows it without asking the forge."""
    if forge_name == "gitlab":
        return env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA") or None
    target = env.get("GITHUB_BASE_REF")
    return f"origin/{target}" if target else None


# --- comind bot serve --------------------------------------------------------------------------


def event_forge_env(forge_name: str, payload: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """The environment a forge adapter needs for the repository a webhook event is about.

    The API the token goes to is the environment's (GITHUB_API_URL, CI_API_V4_URL), never a URL the
    payload names: whoever holds the webhook secret could name their own host and be sent the token."""
    out = dict(env)
    if forge_name == "github":
        repository = (payload.get("repository") or {}).get("full_name")
        if not repository:
            raise ComindError("github event without repository.full_name")
        out["GITHUB_REPOSITORY"] = str(repository)
    else:
        project = payload.get("project") or {}
        if not project.get("id"):
            raise ComindError("gitlab event without project.id")
        out["CI_PROJECT_ID"] = str(project["id"])
    return out


def command_body(forge_name: str, event: str, payload: Mapping[str, Any]) -> str | None:
    """The comment text of a command-carrying event (a new or edited comment), else None."""
    if forge_name == "github":
        if event not in COMMENT_EVENTS or payload.get("action") not in ("created", "edited", "submitted"):
            return None
        item = payload.get("comment") if event != "pull_request_review" else payload.get("review")
        return str((item or {}).get("body") or "")
    if event != "Note Hook" or not isinstance(payload.get("merge_request"), dict):
        return None
    return str((payload.get("object_attributes") or {}).get("note") or "")


def webhook_handler(
    ws: Workspace, env: Mapping[str, str], *, publish: bool = False
) -> Callable[[str, str, dict[str, Any]], None]:
    """The server's handler: a comment with a ``/comind`` line gets the commands of its merge
    request answered, by the same code as ``comind bot run``."""

    def handle(forge_name: str, event: str, payload: dict[str, Any]) -> None:
        body = command_body(forge_name, event, payload)
        if not body or not command_lines(body):
            return
        number = merge_request_number(forge_name, payload)
        if number is None:
            return
        forge = make_forge(forge_name, event_forge_env(forge_name, payload, env))
        result = run(ws, forge, number, check=False, harvest=False, publish=publish, env=env)
        if result.errors:
            raise ComindError("; ".join(result.errors))

    return handle


def serve(
    ws: Workspace, env: Mapping[str, str], *, host: str = "127.0.0.1", port: int = 8080, publish: bool = False
) -> Any:
    """The webhook server (not started), refusing to exist without COMIND_WEBHOOK_SECRET."""

    secret = env.get("COMIND_WEBHOOK_SECRET", "")
    if not secret:
        raise ComindError(
            "bot serve: set COMIND_WEBHOOK_SECRET to the secret of the GitHub or GitLab "
            "webhook; refusing to accept unsigned events"
        )
    handler = webhook_handler(ws, env, publish=publish)
    return make_server(handler, secret, queue_dir=ws.cache_dir / "webhooks", host=host, port=port)


__all__ = [
    "Answered",
    "DryRun",
    "RunResult",
    "answer_commands",
    "command_body",
    "event_forge_env",
    "fallback",
    "forge_config",
    "make_forge",
    "run",
    "run_check",
    "run_from_env",
    "serve",
    "webhook_handler",
]
