"""The README documents every command and every setting the code has."""

import re
from pathlib import Path

import typer.main

from brain.cli.app import app
from brain.daemon import config as config_mod

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _commands(group, prefix="brain"):
    click_group = typer.main.get_command(group) if not hasattr(group, "commands") else group
    for name, cmd in click_group.commands.items():
        if getattr(cmd, "hidden", False):
            continue
        full = f"{prefix} {name}"
        yield full
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, full)


def _documented(full: str) -> bool:
    """`brain x y` appears as such, or on a line of its group's subcommands
    written together: `brain daemon start [--foreground] | stop`."""
    if f"`{full}" in README:
        return True
    *group, last = full.split()
    word = re.compile(rf"(?<![\w-]){re.escape(last)}(?![\w-])")
    return any(f"`{' '.join(group)}" in line and word.search(line) for line in README.splitlines())


def test_every_command_is_in_the_readme():
    missing = [full for full in _commands(app) if not _documented(full)]
    assert not missing, f"undocumented commands: {missing}"
    assert not _documented("brain daemon frobnicate")  # the check itself can say no


def test_every_setting_is_in_the_readme():
    missing = [k for k in config_mod.DEFAULTS if f"`{k}`" not in README]
    assert not missing, f"undocumented settings: {missing}"
