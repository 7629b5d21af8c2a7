"""Import direction (docs/architecture.md, "Layers") and a lean CLI hot path.

Each package's `__init__` docstring says in words what it may import; the
table below says the same in module names, and every import statement in
the package (top level or inside a function) must fall under it. The
handlers `protocol.dispatch` resolves by name are not import statements and
are not checked here.
"""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# folders → the installed package they become (pyproject.toml, package-dir)
ROOTS = {"daemon": "brain.daemon", "indexer": "brain.indexer", "cli": "brain.cli", "hooks": "brain.hooks",
         "brain_pkg": "brain"}

SHARED = ("brain.daemon.config", "brain.daemon.places", "brain.daemon.private_files", "brain.daemon.vault_lock",
          "brain.daemon.rendezvous", "brain.daemon.line_log")
VERSION = ("brain.__version__",)

# package → what it may import of brain's own modules (third-party libraries are not listed)
MAY_IMPORT = {
    "brain.daemon.protocol": ("brain.daemon.protocol", "brain.indexer.vault"),
    "brain.daemon.stores": ("brain.daemon.stores", "brain.daemon.protocol", "brain.indexer.vault",
                            "brain.indexer.page_policy"),
    # the PostgreSQL backend: the contracts it implements and the policy it shares with the embedded
    # stores (facts: brain.daemon.stores.fact_*; pages: brain.indexer.page_policy), the vault's files and
    # its indexing pass, the vectors; never the embedded stores themselves (brain.indexer.pages,
    # brain.daemon.facts) nor the rest of the daemon
    "brain.daemon.postgres": ("brain.daemon.postgres", "brain.daemon.stores", "brain.daemon.protocol",
                              "brain.indexer.vault", "brain.indexer.page_policy", "brain.indexer.embeddings"),
    "brain.daemon.facts": ("brain.daemon.facts", "brain.daemon.stores", "brain.daemon.protocol",
                           "brain.daemon.private_files", "brain.indexer.vault", "brain.indexer.embeddings"),
    # the verbs speak the contracts (and the policy beside them), never a backend: no embedded
    # store (brain.daemon.facts, brain.indexer.pages) and no PostgreSQL
    "brain.daemon.verbs": ("brain.daemon.verbs", "brain.daemon.stores", "brain.daemon.protocol", "brain.daemon.llm",
                           "brain.indexer.vault", "brain.indexer.embeddings", "brain.indexer.page_policy", *VERSION),
    "brain.daemon.server": ("brain.daemon.server", "brain.daemon.stores", "brain.daemon.protocol", "brain.daemon.facts",
                            "brain.daemon.postgres", "brain.daemon.verbs",
                            "brain.daemon.llm", "brain.indexer", *SHARED, *VERSION),
    "brain.daemon.http": ("brain.daemon.http", "brain.daemon.stores", "brain.daemon.protocol", "brain.daemon.server.mcp",
                          "brain.daemon.client", "brain.indexer", *SHARED),
    "brain.daemon.client": ("brain.daemon.client", "brain.daemon.protocol", *SHARED, *VERSION),
    "brain.daemon.conformance": ("brain.daemon.conformance", "brain.daemon.protocol", *VERSION),
    "brain.daemon.llm": ("brain.daemon.llm", "brain.daemon.config"),
    # the modules directly under daemon/, shared by the daemon and its clients
    "brain.daemon": (*SHARED, "brain.daemon.protocol", "brain.indexer.vault"),
    # inside the indexer: vault ← embeddings ← pages (indexer/__init__.py)
    "brain.indexer": ("brain.indexer",),
    "brain.indexer.vault": ("brain.indexer.vault",),
    "brain.indexer.embeddings": ("brain.indexer.embeddings", "brain.indexer.vault"),
    "brain.indexer.page_policy": ("brain.indexer.page_policy", "brain.indexer.vault"),
    "brain.indexer.pages": ("brain.indexer.pages", "brain.indexer.page_policy", "brain.indexer.embeddings",
                            "brain.indexer.vault"),
    "brain.hooks": ("brain.hooks", "brain.cli.route", "brain.daemon.protocol", "brain.indexer", *SHARED),
    # the top layer: it builds the engines and servers, talks to the daemon and installs the
    # hooks; a verb is reached only through the dispatcher (by name), never imported
    "brain.cli": ("brain.cli", "brain.hooks", "brain.daemon.client", "brain.daemon.protocol", "brain.daemon.server",
                  "brain.daemon.http", "brain.daemon.postgres", "brain.daemon.facts", "brain.daemon.stores",
                  "brain.daemon.llm", "brain.daemon.conformance", "brain.indexer", *SHARED, *VERSION),
}


# The floors, bottom up (docs/architecture.md, "Floors"): a package may import only from its own
# floor or below, so every rule above points down; test_every_rule_points_down holds the two together.
FLOORS = {
    "brain": 0, "brain.indexer": 0, "brain.indexer.vault": 0,               # the vault as files
    "brain.daemon": 1, "brain.daemon.protocol": 1, "brain.daemon.llm": 1,   # the wire core, shared modules,
    "brain.indexer.embeddings": 1, "brain.indexer.page_policy": 1,          # the models, the page policy
    "brain.daemon.stores": 2,                                               # the contracts and the facts policy
    "brain.indexer.pages": 3, "brain.daemon.facts": 3, "brain.daemon.postgres": 3,   # the backends, as peers
    "brain.daemon.verbs": 4,                                                # the verbs
    "brain.daemon.server": 5,                                               # the daemon process, its engines
    "brain.daemon.http": 6, "brain.daemon.client": 6, "brain.daemon.conformance": 6,  # transports, clients
    "brain.cli": 7, "brain.hooks": 7,                                       # what people and harnesses run
}


def floor_of(name: str) -> int:
    """The floor of a module or package a rule names: its own package's, or for a package with
    floors inside it the highest of them (`brain.indexer` holds the backends' floor)."""
    inside = [f for p, f in FLOORS.items() if p.startswith(name + ".")]
    best = max((p for p in FLOORS if name == p or name.startswith(p + ".")), key=len)
    return max([FLOORS[best], *inside])

def module_name(rel: Path) -> tuple[str, bool]:
    """(dotted name, is a package) of a file given relative to the repository."""
    parts = list(rel.with_suffix("").parts)
    dotted = ROOTS[parts[0]].split(".") + parts[1:]
    if dotted[-1] == "__init__":
        return ".".join(dotted[:-1]), True
    return ".".join(dotted), False


def imported_names(rel: Path, source: str) -> set[str]:
    """Every `brain…` name a file imports, absolute: `from ..x import y` gives `….x.y`."""
    name, is_package = module_name(rel)
    package = name if is_package else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.update(f"{module}.{a.name}" for a in node.names)
    return {n for n in names if n == "brain" or n.startswith("brain.")}


_SUBPACKAGES = {p.name for p in (REPO / "daemon").iterdir() if (p / "__init__.py").exists()}
_INDEXER_PACKAGES = {p.name for p in (REPO / "indexer").iterdir() if (p / "__init__.py").exists()}


def rule_for(module: str) -> str | None:
    """The MAY_IMPORT key governing a module: its daemon package, `brain.daemon` for the shared
    modules directly under daemon/, else its top-level package (cli, hooks)."""
    parts = module.split(".")
    if ".".join(parts[:4]) in MAY_IMPORT:   # a sub-package with a rule of its own (stores.postgres)
        return ".".join(parts[:4])
    if parts[:2] == ["brain", "daemon"]:
        return f"brain.daemon.{parts[2]}" if len(parts) > 2 and parts[2] in _SUBPACKAGES else "brain.daemon"
    if parts[:2] == ["brain", "indexer"] and len(parts) > 2 and parts[2] in _INDEXER_PACKAGES:
        return f"brain.indexer.{parts[2]}"
    top = ".".join(parts[:2])
    return top if top in MAY_IMPORT else None


def _allowed(name: str, allowed: tuple[str, ...]) -> bool:
    return any(name == a or name.startswith(a + ".") for a in allowed)


def violations(files) -> list[str]:
    """`file: imports X` for every import outside the file's rule; files: [(path relative to the repo, source)]."""
    found = []
    for rel, source in files:
        module, _ = module_name(rel)
        rule = rule_for(module)
        if rule is None:
            continue
        for name in sorted(imported_names(rel, source)):
            if not _allowed(name, MAY_IMPORT[rule]):
                found.append(f"{rel}: imports {name} (rule {rule})")
    return found


def _checked_files():
    for top in ("daemon", "indexer", "hooks", "cli"):
        for f in sorted((REPO / top).rglob("*.py")):
            yield f.relative_to(REPO), f.read_text()


def test_every_rule_points_down():
    """Each package's rule names only its own floor and the floors below it, and every package
    has a floor: the import rules and the floors are one picture."""
    assert set(MAY_IMPORT) <= set(FLOORS), set(MAY_IMPORT) - set(FLOORS)
    upward = [f"{package} (floor {FLOORS[package]}) may import {name} (floor {floor_of(name)})"
              for package, allowed in MAY_IMPORT.items() for name in allowed
              if name != package and floor_of(name) > FLOORS[package]]   # a package's own modules: itself
    assert upward == []


def test_the_floor_check_sees_a_rule_pointing_up(monkeypatch):
    monkeypatch.setitem(MAY_IMPORT, "brain.daemon.verbs", (*MAY_IMPORT["brain.daemon.verbs"], "brain.daemon.server"))
    assert any(floor_of(name) > FLOORS["brain.daemon.verbs"] for name in MAY_IMPORT["brain.daemon.verbs"])
    assert floor_of("brain.indexer") == 3 and floor_of("brain.daemon.server.mcp") == 5


def test_every_package_imports_only_what_its_docstring_allows():
    files = list(_checked_files())
    assert len(files) > 50
    assert violations(files) == []


def test_every_daemon_package_has_a_rule_and_a_docstring_saying_what_it_may_import():
    for name in sorted(_SUBPACKAGES):
        assert f"brain.daemon.{name}" in MAY_IMPORT, name
        doc = ast.get_docstring(ast.parse((REPO / "daemon" / name / "__init__.py").read_text())) or ""
        assert "May import" in doc, name
    for name in sorted(_INDEXER_PACKAGES):
        assert f"brain.indexer.{name}" in MAY_IMPORT, name
        doc = ast.get_docstring(ast.parse((REPO / "indexer" / name / "__init__.py").read_text())) or ""
        assert "May import" in doc, name
    for rel, _ in _checked_files():
        assert rule_for(module_name(rel)[0]) is not None, rel


def test_the_rules_catch_a_planted_import():
    """The checker can fail: a server module importing the client side, a verb importing a transport."""
    planted = [
        (Path("daemon/server/vault_engine.py"), "from ..client.spawn import connect_or_start\n"),
        (Path("daemon/verbs/recall.py"), "def f():\n    from ..server import socket\n"),
        (Path("daemon/protocol/dispatch.py"), "from ..verbs import recall\n"),
        (Path("daemon/places.py"), "from .facts.store import SqliteFactsStore\n"),
        (Path("indexer/vault/scan.py"), "import brain.daemon.config\n"),
        (Path("indexer/vault/parse.py"), "from ..pages.db import open_db\n"),
        (Path("indexer/embeddings/vectors.py"), "def f():\n    from ..pages import search\n"),
        (Path("daemon/postgres/page_search.py"), "from ...indexer.pages.search import search_pages\n"),
        (Path("daemon/postgres/facts_store.py"), "from ..facts.store import SqliteFactsStore\n"),
        (Path("hooks/session_start.py"), "from ..daemon.server.usage import UsageLog\n"),
        (Path("cli/verb_main.py"), "def f():\n    from ..daemon.verbs import recall\n"),
    ]
    found = violations(planted)
    assert [f.split(":")[0] for f in found] == [str(p) for p, _ in planted], found
    assert violations([(Path("daemon/server/vault_engine.py"), "from ..rendezvous import pid_path\n")]) == []


def _runtime_source(source: str) -> str:
    """The source without its `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = [ast.Pass()]
    return ast.unparse(tree)


def import_graph(files, checker_names: bool = False) -> dict[str, set[str]]:
    """module → the brain modules it imports, top level or inside a function alike: a function-level
    import only postpones the cycle to the first call, and a module on either side can no longer be
    understood or moved without the other. `from pkg import name` counts as importing pkg.name when
    that is a module, else pkg; a module's own package __init__ is not an edge. Imports under
    `if TYPE_CHECKING:` are names for the type checker only, never run: not edges, unless
    `checker_names` (a module that needs another's names to be read still depends on it)."""
    if not checker_names:
        files = [(rel, _runtime_source(source)) for rel, source in files]
    modules = {module_name(rel)[0] for rel, _ in files}
    graph = {}
    for rel, source in files:
        me = module_name(rel)[0]
        targets = set()
        for name in imported_names(rel, source):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me:
                targets.add(name)
        graph[me] = targets
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each set of modules that import one another round a loop (strongly connected, more than one)."""
    order, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        order[v] = low[v] = len(order)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return cycles


def _all_files():
    for top in ROOTS:
        for f in sorted((REPO / top).rglob("*.py")):
            yield f.relative_to(REPO), f.read_text()


def test_no_import_cycles_among_brains_modules():
    files = list(_all_files())
    assert len(files) > 100
    assert import_cycles(import_graph(files)) == []


def test_no_indexer_modules_need_one_another_even_for_types():
    """The pages store answers its reads itself and the VaultIndex only writes (docs/architecture.md,
    "Stores"): no loop through the type checker's names either."""
    files = [(f.relative_to(REPO), f.read_text()) for f in sorted((REPO / "indexer").rglob("*.py"))]
    assert import_cycles(import_graph(files, checker_names=True)) == []
    planted = [(Path("indexer/pages/store_files.py"), "if TYPE_CHECKING:\n    from .vault_index import VaultIndex\n"),
               (Path("indexer/pages/vault_index.py"), "from .store_files import PagesNotOpen\n")]
    assert import_cycles(import_graph(planted, checker_names=True)) == [
        ["brain.indexer.pages.store_files", "brain.indexer.pages.vault_index"]]
    assert import_cycles(import_graph(planted)) == []


def test_the_cycle_check_sees_a_function_level_import():
    planted = [
        (Path("indexer/embeddings/embedder.py"), "from .onnx_export import MANIFEST\n"),
        (Path("indexer/embeddings/onnx_export.py"), "def f():\n    from .embedder import OnnxMiniLM\n"),
        (Path("indexer/embeddings/vectors.py"), "from . import embedder\n"),
    ]
    assert import_cycles(import_graph(planted)) == [
        ["brain.indexer.embeddings.embedder", "brain.indexer.embeddings.onnx_export"]]


def test_hot_cli_path_imports_nothing_heavy():
    code = (
        "import sys; from brain.cli import entry, verb_main, route, render\n"
        "try:\n    import brain.daemon.client.calls\nexcept ImportError:\n    pass\n"
        "heavy = [m for m in ('torch', 'numpy', 'tantivy', 'mcp', 'typer', 'sentence_transformers', 'pydantic') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
