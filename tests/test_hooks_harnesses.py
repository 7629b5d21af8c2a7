"""One declaration per harness (hooks/harnesses.py): a harness added to the table is
installed, uninstalled, registered and checked by the doctor with no other change,
and no installer or command branches on a harness's name."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from brain.hooks import harnesses, install as inst, mcp_register

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def extra_harness(tmp_path, monkeypatch):
    """A third harness, declared like the two real ones, with its config in tmp_path."""
    home = tmp_path / "zed-home"
    h = replace(harnesses.HARNESSES["claude"], name="zed", label="Zed", program="zed-cli",
                config_dir=lambda env: home, user_hooks_file="hooks.json",
                mcp_add=lambda name, server, scope, env: ["zed-cli", "mcp", "add", name, *server],
                installed_note="Zed runs it at its next start.")
    monkeypatch.setitem(harnesses.HARNESSES, "zed", h)
    return home


def test_a_declared_harness_is_installed_and_removed_through_the_table(extra_harness, capsys):
    from brain.cli.hooks_cmd import hooks_install, hooks_uninstall

    assert hooks_install("zed", project=False, dry_run=False) == 0
    text = (extra_harness / "hooks.json").read_text()
    assert inst.has_our_hooks(text)
    assert sorted(p.name for p in extra_harness.iterdir()) == ["hooks.json"]  # no switch declared: no flag file
    assert "Zed runs it at its next start." in capsys.readouterr().out

    from brain.cli.hooks_doctor import _installed_hooks

    assert [f[0] for f in _installed_hooks() if f[1] == extra_harness / "hooks.json"] == ["zed"]
    assert hooks_uninstall("zed", project=False, dry_run=False) == 0
    assert not (extra_harness / "hooks.json").exists()  # restored as it was: absent


def test_mcp_registration_goes_through_the_declaration(extra_harness):
    assert mcp_register.mcp_add_argv("zed", ["/x/brain"]) == ["zed-cli", "mcp", "add", "brain", "/x/brain", "serve",
                                                               "--surface", "starter"]
    with pytest.raises(inst.InstallError, match="unknown harness 'nope': use one of claude, codex, zed"):
        mcp_register.mcp_add_argv("nope", ["/x/brain"])


def test_the_real_harnesses_keep_their_files(tmp_path):
    env = {"HOME": str(tmp_path)}
    claude, codex = harnesses.HARNESSES["claude"], harnesses.HARNESSES["codex"]
    assert claude.target(environ=env).hooks_file == tmp_path / ".claude" / "settings.json"
    assert claude.target(environ=dict(env, CLAUDE_CONFIG_DIR=str(tmp_path / "c"))).hooks_file == \
        tmp_path / "c" / "settings.json"
    assert claude.target(project=True, cwd=tmp_path).hooks_file == tmp_path / ".claude" / "settings.local.json"
    t = codex.target(environ=env)
    assert (t.hooks_file, t.flag_file) == (tmp_path / ".codex" / "hooks.json", tmp_path / ".codex" / "config.toml")
    assert [e for e, _ in t.events] == ["SessionStart", "PostCompact"]
    assert codex.target(project=True, cwd=tmp_path).hooks_file == tmp_path / ".codex" / "hooks.json"


def test_no_installer_or_command_branches_on_a_harness_name():
    branch = re.compile(r"""(==|!=|\bin)\s*\(?\s*["'](claude|codex)["']""")
    hits = [f"{f.relative_to(REPO)}:{n}: {line.strip()}"
            for top in ("hooks", "cli") for f in sorted((REPO / top).glob("*.py"))
            for n, line in enumerate(f.read_text().splitlines(), 1) if branch.search(line)]
    assert hits == []
