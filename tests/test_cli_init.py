"""`brain init` without a folder asks (on a terminal) or refuses with the fix, never
registering the current folder unasked; one init at a time."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args, cwd, env=None):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120, cwd=str(cwd),
                          stdin=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))


def config_text(brain_home: Path) -> str:
    path = brain_home / "config" / "config.toml"
    return path.read_text() if path.exists() else ""


def test_init_without_a_folder_off_a_terminal_refuses_with_the_fix(tmp_path, brain_home):
    here = tmp_path / "somewhere"
    here.mkdir()
    r = brain("init", "--no-daemon", cwd=here)
    assert r.returncode == 1 and "needs the folder of your notes" in r.stderr
    assert "fix: `brain init PATH`" in r.stderr and "brain init ." in r.stderr
    assert "vault" not in config_text(brain_home) and not (here / ".brain").exists()


def test_init_without_a_folder_in_home_refuses_even_on_a_terminal(tmp_path, brain_home):
    home = tmp_path / "home"
    home.mkdir()
    r = brain("init", "--no-daemon", cwd=home, env={"HOME": str(home)})
    assert r.returncode == 1 and "every Markdown file under it" in r.stderr and "brain init ~/notes" in r.stderr
    assert not (home / ".brain").exists()


def _on_a_terminal(args, cwd: Path, answer: bytes) -> tuple[int, str]:
    main, child = pty.openpty()
    proc = subprocess.Popen([*BRAIN, *args], cwd=str(cwd), stdin=child, stdout=child, stderr=child)
    os.close(child)
    out = b""
    sent = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not sent and b"[y/N]" in out:
            os.write(main, answer)
            sent = True
        if proc.poll() is not None and not ready:
            break
    proc.wait(timeout=30)
    os.close(main)
    return proc.returncode, out.decode("utf-8", "replace")


def test_init_without_a_folder_on_a_terminal_asks_first(tmp_path, brain_home):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n")
    code, out = _on_a_terminal(["init", "--no-daemon"], notes, b"n\n")
    assert code == 1 and f"Register {notes} (1 Markdown files) as your notes folder? [y/N]" in out
    assert "nothing was registered" in out and "vault" not in config_text(brain_home)
    code, out = _on_a_terminal(["init", "--no-daemon"], notes, b"y\n")
    assert code == 0 and f"vault: {notes}" in out, out
    assert str(notes) in config_text(brain_home)


def test_a_second_init_while_one_runs_fails_and_names_the_first(tmp_path, brain_home):
    from brain.cli.init_cmd import InitLock
    from brain.daemon.private_files import private_dir

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with InitLock(private_dir(brain_home / "config") / "init.lock", first) as running:
        assert running.ok
        r = brain("init", str(second), "--no-daemon", cwd=tmp_path)
    assert r.returncode == 1 and f"another `brain init` is running (registering {first})" in r.stderr
    assert f"{second} was not registered" in r.stderr and "fix: wait for it" in r.stderr
    assert str(second) not in config_text(brain_home) and not (second / ".brain").exists()
    r = brain("init", str(second), "--no-daemon", cwd=tmp_path)  # once it is done, the next one runs
    assert r.returncode == 0 and str(second) in config_text(brain_home)


def test_init_on_a_missing_folder_off_a_terminal_refuses_and_keeps_the_vault(tmp_path, brain_home):
    notes = tmp_path / "notes"
    notes.mkdir()
    assert brain("init", str(notes), "--no-daemon", cwd=tmp_path).returncode == 0
    typo = tmp_path / "Notes"
    r = brain("init", str(typo), "--no-daemon", cwd=tmp_path)
    assert r.returncode == 1 and f"{typo} does not exist (did you mean {notes}?)" in r.stderr, r.stderr
    assert f"brain init {typo} --create" in r.stderr and "Traceback" not in r.stderr
    assert not typo.exists() and f'"{notes}"' in config_text(brain_home)


def test_init_on_a_missing_folder_asks_on_a_terminal_and_create_makes_it(tmp_path, brain_home):
    wanted = tmp_path / "new-notes"
    code, out = _on_a_terminal(["init", str(wanted), "--no-daemon"], tmp_path, b"n\n")
    assert code == 1 and f"{wanted} does not exist. Create it as an empty notes folder" in out, out
    assert not wanted.exists() and "vault" not in config_text(brain_home)
    code, out = _on_a_terminal(["init", str(wanted), "--no-daemon"], tmp_path, b"y\n")
    assert code == 0 and wanted.is_dir() and f"vault: {wanted}" in out, out
    other = tmp_path / "made" / "by-flag"
    r = brain("init", str(other), "--no-daemon", "--create", cwd=tmp_path)
    assert r.returncode == 0 and other.is_dir() and str(other) in config_text(brain_home), r.stderr


def test_init_refuses_folders_that_cannot_hold_notes_with_the_reason(tmp_path, brain_home):
    a_file = tmp_path / "notes.md"
    a_file.write_text("# not a folder\n")
    for path, reason in (("/", "root of the file system"), ("/proc", "system folder"),
                         ("/proc/self", "system folder"), (str(a_file), "is a file, not a folder")):
        r = brain("init", path, "--no-daemon", "--create", cwd=tmp_path)
        assert r.returncode == 1 and reason in r.stderr and "fix: " in r.stderr, (path, r.stderr)
        assert "Traceback" not in r.stderr and "No such file" not in r.stderr, r.stderr
    assert "vault" not in config_text(brain_home) and not Path("/proc/.brain").exists()
