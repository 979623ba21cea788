"""comind completion bash|zsh|fish: a shell completion script, made from the parser itself.

bash and zsh come from shtab (the argparse completion generator); fish, which shtab does not
write, from the same walk of the parser below.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator
from typing import Any

SHELLS = ("bash", "zsh", "fish")

INSTALL = {
    "bash": "comind completion bash > ~/.local/share/bash-completion/completions/comind",
    "zsh": 'comind completion zsh > "${fpath[1]}/_comind"   # then: compinit',
    "fish": "comind completion fish > ~/.config/fish/completions/comind.fish",
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "completion",
        parents=[common],
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for commands, options and their choices.",
        epilog="examples:\n" + "\n".join(f"  {line}" for line in INSTALL.values()),
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in: bash, zsh or fish")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    sys.stdout.write(script(args.shell))
    return 0


def script(shell: str) -> str:
    """The completion script for `shell`, from the whole parser (every command, global options listed)."""
    from comind.cli import build_parser

    parser = build_parser((), show_globals=True)
    if shell == "fish":
        return fish(parser)
    import shtab

    return str(shtab.complete(parser, shell=shell)) + "\n"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """A parser's commands: name -> (parser, one line of help)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return {name: (p, str(helps.get(name, ""))) for name, p in action.choices.items()}
    return {}


def _walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for name, (child, _) in _subparsers(parser).items():
        yield from _walk(child, (*path, name))


def _quote(text: str) -> str:
    return shlex.quote(" ".join(text.split()))


def fish(parser: argparse.ArgumentParser) -> str:
    """fish's `complete` lines: each command's words and options, offered where that command is typed."""
    paths = [" ".join(path) for path, _ in _walk(parser) if path]
    lines = [
        "# comind completion for fish: comind completion fish > ~/.config/fish/completions/comind.fish",
        "set -g __comind_paths " + " ".join(_quote(p) for p in paths),
        "function __comind_path --description 'the comind command typed so far'",
        "    set -l path ''",
        "    for word in (commandline -opc)[2..-1]",
        '        set -l next (string trim -- "$path $word")',
        "        contains -- $next $__comind_paths; and set path $next",
        "    end",
        "    echo $path",
        "end",
        "function __comind_at --description 'whether the command typed so far is argv'",
        "    set -l path (__comind_path)",
        '    test "$path" = "$argv"',
        "end",
        "complete -c comind -f",
    ]
    for path, node in _walk(parser):
        where = f"-n {_quote('__comind_at ' + ' '.join(path))}" if path else "-n '__comind_at \"\"'"
        for name, (_, help_text) in _subparsers(node).items():
            lines.append(f"complete -c comind {where} -a {_quote(name)} -d {_quote(help_text)}")
        for action in node._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            parts = [f"complete -c comind {where}"]
            for option in action.option_strings:
                parts.append(f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}")
            if action.nargs != 0:  # a value: its choices, a file name, or free text (-x: no files)
                if action.choices:
                    parts.append("-x -a " + _quote(" ".join(str(c) for c in action.choices)))
                elif action.dest == "directory" or str(action.metavar or "").endswith(("FILE", "PATH", ".yml")):
                    parts.append("-r -F")
                else:
                    parts.append("-x")
            parts.append(f"-d {_quote(action.help or '')}")
            lines.append(" ".join(parts))
        for action in node._actions:
            if not action.option_strings and action.choices and not isinstance(action, argparse._SubParsersAction):
                values = " ".join(str(c) for c in action.choices)
                lines.append(f"complete -c comind {where} -a {_quote(values)} -d {_quote(action.help or '')}")
    return "\n".join(lines) + "\n"
