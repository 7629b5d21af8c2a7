"""Import direction (cli → daemon → indexer) and a lean CLI hot path."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            names.add(mod)
            if not node.module:  # `from .. import daemon` names the package in the alias
                names.update(mod + a.name for a in node.names)
    return names


def test_indexer_never_imports_daemon_cli_or_hooks():
    files = list((REPO / "indexer").rglob("*.py"))
    assert files
    for f in files:
        for name in _imports(f):
            stripped = name.lstrip(".")
            assert not stripped.startswith(("daemon", "cli", "hooks", "brain.daemon", "brain.cli", "brain.hooks")), (f, name)


def test_daemon_never_imports_cli():
    files = list((REPO / "daemon").rglob("*.py"))
    assert files
    for f in files:
        for name in _imports(f):
            # by segment: `.client` is daemon/client/calls.py, not the cli package
            assert name.lstrip(".").split(".")[0] != "cli" and not name.startswith("brain.cli"), (f, name)


def test_hot_cli_path_imports_nothing_heavy():
    code = (
        "import sys; from brain.cli import entry, verb_main, route, render\n"
        "try:\n    import brain.daemon.client.calls\nexcept ImportError:\n    pass\n"
        "heavy = [m for m in ('torch', 'numpy', 'tantivy', 'mcp', 'typer', 'sentence_transformers', 'pydantic') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
