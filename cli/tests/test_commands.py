"""./hostbench keeps every command: the tree of subcommands is the one listed here (a command added or gone fails
until this list says so), and each one's --help is answered."""
import argparse
import contextlib
import io

import pytest
from app import cli as admin_cli

from hostbench_cli import __main__ as entry

COMMANDS = ("up", "test", "bench", "load", "size", "chaos", "parse", "runs", "run", "mesh", "check", "bands",
            "bands list", "bands set", "bands remove", "bands export", "bands import", "faults", "wait", "export",
            "token", "slurm", "slurm check", "slurm lab", "slurm drain", "enrol-load", "user", "user add",
            "api-token", "sign-in-link", "openapi", "routes", "lock")


def _tree(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [" ".join((*prefix, name)), *_tree(sub, (*prefix, name))]
    return out


def _sub(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


def _arguments(parser: argparse.ArgumentParser) -> list[tuple]:
    return [(a.option_strings, a.dest, a.choices, a.default, a.type, a.required, a.help) for a in parser._actions]


def test_the_admin_commands_are_app_clis():
    """./hostbench's token, user add, api-token and sign-in-link are declared by app.cli (declared once): the same
    arguments, the same help, as `python -m app.cli` parses them."""
    ours, server = entry.parser(), argparse.ArgumentParser()
    sub = server.add_subparsers()
    for command in admin_cli.ADMIN_COMMANDS:
        admin_cli.add_admin_command(sub, command)
    for path, command in ((("token",), "token"), (("user", "add"), "user-add"), (("api-token",), "api-token"),
                          (("sign-in-link",), "sign-in-link")):
        assert _arguments(_sub(ours, *path)) == _arguments(_sub(server, command)), path


def test_every_command_is_there():
    assert _tree(entry.parser()) == list(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_answers_help(command):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        entry.main([*command.split(), "--help"])
    assert done.value.code == 0
    assert out.getvalue().startswith(f"usage: ./hostbench {command}")
