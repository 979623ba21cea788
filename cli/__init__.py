"""The `comind` command line: one module per command group, registered in COMMANDS.

Heavy imports (pygit2, obstore, ast-grep) happen inside the handlers, so that read-only commands
start fast. Exit codes: 0 ok, 1 findings, 2 usage, validation or internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gettext
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from comind import __version__
from comind.config import SETTINGS
from comind.errors import ComindError

# command -> the module that registers it (register(subparsers, common)), in `--help` order.
COMMANDS = {
    "init": "init",
    "remember": "remember",
    "review": "review",
    "harvest": "harvest",
    "check": "check",
    "preflight": "preflight",
    "mcp": "mcp",
    "hook": "hook",
    "init-hooks": "hook",
    "log": "read",
    "show": "read",
    "search": "read",
    "why": "code",
    "status": "code",
    "index": "code",
    "eval": "eval",
    "ledger": "ledger",
    "bot": "bot",
    "completion": "completion",
}

# Set from -q/-v and --color by main(), read through quiet(), verbosity() and colour().
_UI: dict[str, Any] = {"verbosity": 0, "color": "auto"}
COLOR_CHOICES = ("auto", "always", "never")

Handler = Callable[[argparse.Namespace], int]


class ArgumentParser(argparse.ArgumentParser):
    def format_help(self) -> str:
        # the epilog (examples) is printed as written; a command's help names the global options once
        epilog, self.epilog = self.epilog, None
        try:
            text = super().format_help()
        finally:
            self.epilog = epilog
        if self.prog != "comind":
            text += "\n" + GLOBAL_NOTE + "\n"
        return text + ("\n" + epilog.strip("\n") + "\n" if epilog else "")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        # argparse says "unrecognized arguments" as the top parser; name the command they were given to
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            where = f"{command}: " if command and self.prog == "comind" else ""
            self.error(f"{where}unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> Any:  # one line and exit 2, like every other user error
        command = self.prog.removeprefix("comind").strip()  # "comind: " is said once, by the handler
        raise ComindError(f"{command}: {message}" if command else message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every add_argument; each one imports shutil and asks the
        # terminal its size (~15 ms of a 90 ms `comind why`): ask once, with os alone
        return argparse.HelpFormatter(prog=self.prog, width=_terminal_width())


@functools.cache
def _terminal_width() -> int:
    """What shutil.get_terminal_size gives (COLUMNS, else the terminal, else 80), less 2 as argparse does."""
    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 80
    return max(columns, 1) - 2


def _gettext(message: str) -> str:
    """gettext.gettext(message), without its search when it cannot find a translation.

    argparse translates each of its own strings as it builds a parser (about 15 per command):
    every call imports `locale` the first time, then normalises the language variables and looks
    for .mo files (~2.5 ms of a `comind why`). When the domain is the default one, bound nowhere,
    and the default locale folder does not exist, no file can be found and gettext returns the
    message itself; otherwise gettext is asked.
    """
    if (
        getattr(gettext, "_current_domain", None) == "messages"
        and not getattr(gettext, "_localedirs", True)
        and _plain_languages()
        and _no_locale_folder(getattr(gettext, "_default_localedir", ""))
    ):
        return message
    return gettext.gettext(message)


def _plain_languages() -> bool:
    """Whether the language gettext would use names no path outside its locale folder."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        if value := os.environ.get(name):
            return "/" not in value and os.sep not in value and ".." not in value
    return True


@functools.cache
def _no_locale_folder(folder: str) -> bool:
    return bool(folder) and not os.path.isdir(folder)


argparse._ = _gettext  # type: ignore[attr-defined]


GLOBAL_NOTE = (
    "global options: -C PATH, -q, -v, --color WHEN and the settings (--store, --fail-level, …)\n"
    "are accepted here too; `comind --help` lists them."
)


def global_options(shown: bool = False) -> argparse.ArgumentParser:
    """Options every command accepts: -C, -q/-v, --color and the settings of .comind.yml.

    Listed once, in `comind --help` (shown=True); each command accepts them without listing them.
    """
    parent = ArgumentParser(add_help=False)

    def described(text: str) -> str:
        return text if shown else argparse.SUPPRESS

    general = parent.add_argument_group("global options") if shown else parent
    general.add_argument(
        "-C",
        dest="directory",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=described("run as if started in PATH, e.g. -C ../shop"),
    )
    general.add_argument(
        "-q",
        "--quiet",
        dest="quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help=described("print results and errors only: no progress, notes or confirmations"),
    )
    general.add_argument(
        "-v",
        "--verbose",
        dest="verbose",
        action="count",
        default=argparse.SUPPRESS,
        help=described("say more: -v what the bot and the forge do, -vv debugging detail"),
    )
    general.add_argument(
        "--color",
        dest="color",
        choices=COLOR_CHOICES,
        default=argparse.SUPPRESS,
        help=described(
            "colour the output: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR forces it), "
            "always or never (default auto)"
        ),
    )
    group = parent.add_argument_group("settings (flag > environment > .comind.yml > default)") if shown else parent
    for setting in SETTINGS:
        choices = setting.choices
        group.add_argument(
            setting.flag,
            dest=f"setting_{setting.key}",
            metavar="{" + ",".join(choices) + "}" if choices else setting.key.upper(),
            choices=choices,
            default=argparse.SUPPRESS,
            help=described(f"{setting.help} [{setting.env}]"),
        )
    return parent


def at_least_1(text: str) -> int:
    """A count's type (--limit, --number): a whole number of at least 1 (argparse names the flag)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1 (got {text!r})") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {text!r})")
    return number


def quiet() -> bool:
    """-q: print results and errors only."""
    return bool(_UI["verbosity"] < 0)


def verbosity() -> int:
    """-1 for -q, 0 by default, 1 for -v, 2 for -vv."""
    return int(_UI["verbosity"])


def colour(stream: Any = None) -> bool:
    """Whether to colour `stream` (standard output by default): --color, then NO_COLOR and
    FORCE_COLOR (no-color.org, force-color.org: set and not empty), then whether it is a terminal."""
    if _UI["color"] != "auto":
        return bool(_UI["color"] == "always")
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def note(message: str) -> None:
    """A line for the person at the terminal (a confirmation, a hint): standard error, not with -q."""
    if not quiet():
        from comind.sanitize import printed

        print(printed(message, multiline=True), file=sys.stderr)


def _configure(args: argparse.Namespace) -> None:
    verbose = int(getattr(args, "verbose", 0) or 0)
    _UI["verbosity"] = -1 if getattr(args, "quiet", False) else verbose
    _UI["color"] = getattr(args, "color", "auto")
    if verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO, format="comind: %(message)s")


def build_parser(argv: Sequence[str] = (), show_globals: bool = False) -> ArgumentParser:
    """The parser; only the invoked command's module is loaded, so a command starts fast.

    show_globals lists the global options in every command's help too (for completion scripts).
    """
    common = global_options(shown=show_globals)
    parser = ArgumentParser(
        prog="comind",
        parents=[global_options(shown=True)],
        description="Git-native memory for teams and their coding agents.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--version", action="version", version=f"comind {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    invoked = _command_of(argv)
    commands: Any = sub
    if invoked is not None and invoked in COMMANDS:
        modules, commands = [COMMANDS[invoked]], _Only(sub, invoked)
    elif "--version" in argv and not {"-h", "--help"} & set(argv):
        modules = []  # the version needs no command
    else:
        modules = list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(f"comind.cli.{name}").register(commands, common)
    return parser


EXAMPLES = """examples:
  comind init --ci github          set up a repository: .comind.yml, the store, a workflow
  comind check                     check this branch against its merge base
  comind why src/cart.py::Cart     the records behind a symbol
  comind completion bash > ~/.local/share/bash-completion/completions/comind
"""


class _Only:
    """The subparsers, through which a module registers only the invoked command's parser: the
    others it registers beside it are never used (their help and choices show in top-level help
    and errors only, which are built from every command)."""

    def __init__(self, sub: Any, command: str) -> None:
        self.sub, self.command = sub, command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self.sub.add_parser(name, **kwargs) if name == self.command else _Unused()


class _Unused:
    """A parser not built: whatever is added to it goes nowhere."""

    def __getattr__(self, name: str) -> Callable[..., _Unused]:
        return lambda *args, **kwargs: self


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word in argv (skipping global options and their values), if any."""
    with_value = {s.flag for s in SETTINGS} | {"-C", "--color"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in with_value:
            i += 2
        elif arg.startswith("-"):
            if arg in ("-h", "--help", "--version"):
                return None
            i += 1
        else:
            return arg
    return None


def workspace(args: argparse.Namespace) -> Any:
    """The Workspace for this invocation, with the settings given as flags."""
    from pathlib import Path

    from comind.workspace import Workspace

    flags = {s.key: getattr(args, f"setting_{s.key}", None) for s in SETTINGS}
    start = Path(getattr(args, "directory", None) or Path.cwd())
    return Workspace(start, flags)


def _format_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> str:
    return f"comind: warning: {message}\n"


def _program_gc() -> None:
    """Garbage collection for a run of the `comind` program: what is loaded by now (modules,
    classes, functions) lives until the exit, so it is frozen out of collections, which would
    otherwise walk it again and again, down to the interpreter's last ones at the exit (~5 ms
    of a warm `comind why`). What the command makes is collected as usual, so the connections
    and files it leaves in reference cycles are still closed at the exit.
    """
    import gc

    gc.freeze()


def existing_folder(path: str, option: str) -> str:
    """`path`, given as `option`, when it is a folder; else a one-line error saying what it is.
    A file is no place to start from, even inside a repository (git: "cannot change to")."""
    if os.path.isdir(path):
        return path
    what = "not a folder" if os.path.exists(path) else "no such file or folder"
    raise ComindError(f"{option} {path}: {what}")


def revision(ws: Any, rev: str | None, option: str) -> str | None:
    """`rev`, given as `option`, when it names a commit (None stays None); else a one-line error
    naming the option, before any work."""
    if rev is None:
        return None
    try:
        ws.index.resolve(rev)
    except ComindError:
        from comind.git import has_no_commit

        kind = "the repository has no commit yet" if has_no_commit(ws.index.repo) else "a commit, branch or tag"
        raise ComindError(f"{option} {rev!r}: unknown revision ({kind})") from None
    return rev


@contextlib.contextmanager
def _started_in(args: argparse.Namespace) -> Iterator[None]:
    """`-C PATH`: run as if started there, as git does: every relative path given, a file's too
    (`--output`, `--plan`, `ledger export -o`), is read from PATH; for every command, as git's `-C`.
    The folder is left on return."""
    directory = getattr(args, "directory", None)
    if not directory:
        yield
        return
    args.directory = os.path.abspath(existing_folder(directory, "-C"))
    try:
        before: str | None = os.getcwd()
    except FileNotFoundError:  # started in a folder deleted since: nothing to go back to
        before = None
    try:
        os.chdir(args.directory)
    except OSError as exc:  # a folder it may not enter
        raise ComindError(f"-C {directory}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(OSError):
                os.chdir(before)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.formatwarning = _format_warning
    _UI.update(verbosity=0, color="auto")
    if argv is None:  # the program itself, not a caller in Python (tests, scripts)
        _program_gc()
    args: argparse.Namespace | None = None
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        _configure(args)
        if not getattr(args, "handler", None):
            parser.print_help()
            return 2
        with _started_in(args):
            return int(args.handler(args))
    except ComindError as exc:
        from comind.sanitize import printed  # a message may quote what it refused

        print(f"comind: {printed(str(exc), multiline=True)}", file=sys.stderr)
        return getattr(args, "failure_exit", exc.exit_code)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: say so in one line, show the traceback only when asked
        if os.environ.get("COMIND_DEBUG"):
            raise
        print(
            f"comind: internal error: {type(exc).__name__}: {exc} (set COMIND_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 2
