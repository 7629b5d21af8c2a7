"""The README documents every command and every setting the code has."""

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


def test_every_command_is_in_the_readme():
    missing = []
    for full in _commands(app):
        words = full.split()
        # a group's subcommands may be written together: `brain daemon start [--foreground] | stop`
        if f"`{full}" not in README and not all(w in README for w in words[1:]):
            missing.append(full)
        elif f"`{' '.join(words[:2])}" not in README:
            missing.append(full)
    assert not missing, f"undocumented commands: {missing}"


def test_every_setting_is_in_the_readme():
    missing = [k for k in config_mod.DEFAULTS if f"`{k}`" not in README]
    assert not missing, f"undocumented settings: {missing}"
