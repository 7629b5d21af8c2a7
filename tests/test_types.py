"""mypy over the whole package, `mypy -p brain` with the project's settings: strict on the store
contracts, the policy both backends share and the PostgreSQL backend, checked everywhere else; and
both engines against the Engine contract (docs/architecture.md, "Stores").

The package maps folders to names (pyproject.toml, package-dir: `daemon/` is
`brain.daemon`), which mypy cannot see through an editable install's import
hook; so the sources are laid out as the package they become, in a temp
folder, and mypy checks that copy with the settings in pyproject.toml. The
result is the same whether brain was installed editable or with
`pip install .`: the sources are this checkout's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# where each folder lands in the installed package (pyproject.toml, package-dir)
LAYOUT = {"brain_pkg": "brain", "daemon": "brain/daemon", "indexer": "brain/indexer", "cli": "brain/cli",
          "hooks": "brain/hooks"}
CHECKED = ("brain",)
# assigns each engine to the contract; checked beside the packages, reported on its own lines
ENGINES_CHECK = "engine_contract_check.py"


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


def lay_out(root: Path) -> Path:
    for folder, target in LAYOUT.items():
        shutil.copytree(REPO / folder, root / target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "tests" / ENGINES_CHECK, root / ENGINES_CHECK)
    return root


def run_mypy(root: Path, cache: Path) -> tuple[int, list[str]]:
    """mypy's exit code and its error lines, with paths as they are in the checkout."""
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(cache),
           "--no-error-summary", "--show-error-codes"]
    for package in CHECKED:
        cmd += ["-p", package]
    cmd += ["-m", ENGINES_CHECK.removesuffix(".py")]   # a module on MYPYPATH: mypy takes no files beside -p
    # the laid-out copy first, before any installed brain (MYPYPATH wins over site-packages)
    env = {**os.environ, "MYPYPATH": str(root)}
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    back = {f"{target}/": f"{folder}/" for folder, target in LAYOUT.items() if folder != "brain_pkg"}
    back[ENGINES_CHECK] = f"tests/{ENGINES_CHECK}"
    lines = []
    for line in (done.stdout + done.stderr).splitlines():
        for staged, source in back.items():
            if line.startswith(staged):
                line = source + line[len(staged):]
        lines.append(line)
    return done.returncode, lines


def held_errors(lines: list[str]) -> list[str]:
    return [line for line in lines if ": error:" in line]


def test_the_whole_package_type_checks(tmp_path, mypy_cache):
    code, lines = run_mypy(lay_out(tmp_path), mypy_cache)
    errors = held_errors(lines)
    # 2: mypy failed (bad config, crash); 1 with no error line: it never ran (not installed)
    assert code == 0 or (code == 1 and errors), "\n".join(lines)
    assert errors == [], "mypy found type errors:\n" + "\n".join(errors)


def test_the_contracts_are_checked_strictly_and_the_verbs_are_checked(tmp_path, mypy_cache):
    """The check can fail: an untyped function in a contract or in the PostgreSQL backend, a verb
    reading an attribute the Engine does not declare, and a wrong type in the CLI are all reported."""
    root = lay_out(tmp_path)
    with (root / "brain/daemon/stores/engine.py").open("a") as f:
        f.write("\n\ndef planted_untyped(x):\n    return x\n")
    with (root / "brain/daemon/postgres/connections.py").open("a") as f:
        f.write("\n\ndef planted_untyped(x):\n    return x\n")
    with (root / "brain/cli/render.py").open("a") as f:
        f.write("\n\ndef planted_wrong() -> int:\n    return 'one'\n")
    with (root / "brain/daemon/verbs/forget.py").open("a") as f:
        f.write("\n\ndef planted_reader(engine: Engine) -> object:\n    return engine.planted_attribute\n")
    _code, lines = run_mypy(root, mypy_cache)
    errors = held_errors(lines)
    assert any(e.startswith("daemon/stores/engine.py") and "[no-untyped-def]" in e for e in errors), lines
    assert any(e.startswith("daemon/postgres/connections.py") and "[no-untyped-def]" in e for e in errors), lines
    assert any(e.startswith("cli/render.py") and "[return-value]" in e for e in errors), lines
    assert any(e.startswith("daemon/verbs/forget.py") and '"Engine" has no attribute "planted_attribute"' in e
               for e in errors), lines


def engines_errors(lines: list[str]) -> list[str]:
    return [line for line in held_errors(lines) if line.startswith(f"tests/{ENGINES_CHECK}")]


def test_both_engines_satisfy_the_engine_contract(tmp_path, mypy_cache):
    _code, lines = run_mypy(lay_out(tmp_path), mypy_cache)
    assert engines_errors(lines) == [], "\n".join(lines)


def test_an_engine_missing_a_declared_member_fails_the_contract(tmp_path, mypy_cache):
    """The check can fail: a front end's engine without `label` is no Engine."""
    root = lay_out(tmp_path)
    source = root / "brain/daemon/server/store_engine.py"
    text = source.read_text()
    assert "        self.label = label" in text
    source.write_text(text.replace("        self.label = label", "        self.named = label"))
    _code, lines = run_mypy(root, mypy_cache)
    assert any("a_front_ends_engine" in line or "StoreEngine" in line for line in engines_errors(lines)), lines
