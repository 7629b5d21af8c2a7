"""The path of one call through the daemon, module by module (docs/architecture.md, "A recall, end to end").

    python bench/call_path.py [--vault DIR] [--embeddings] [--verbs recall,remember]

Starts a real daemon on a copy of the vault (default sample_brain/) under a
profiler that, while it is switched on, notes every call from one of brain's
modules into another. Each verb is called once to warm the daemon (lazy
imports, caches), then once more with the profiler on, over the daemon's
socket as an MCP host's relay sends it. Prints, per verb:

- the modules of brain the call entered, in the order it first entered them;
- how many modules, and how many package boundaries the calls crossed (a
  call from `brain.daemon.verbs.recall` into `brain.daemon.stores.x` is one
  crossing from `daemon/verbs` to `daemon/stores`; calls inside a package
  are not counted);
- each package-to-package edge with its count, so a climb back up (a verb
  calling into the server that called it) shows as an edge.

The relay (`brain serve`) copies bytes and parses nothing, so the daemon's
side is the whole path of brain's own code; the MCP SDK's and the standard
library's frames between brain's modules are not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_daemon import SocketClient  # noqa: E402

# runs inside the daemon: a profiler switched on and off by SIGUSR2, its notes written at each stop
PROFILER = r"""
import json, os, signal, sys, threading
OUT = os.environ["CALL_PATH_OUT"]
state = {"on": False, "edges": [], "order": []}
def prof(frame, event, arg):
    if event != "call" or not state["on"]:
        return
    callee = frame.f_globals.get("__name__", "")
    if not callee.startswith("brain."):
        return
    if callee not in state["order"]:
        state["order"].append(callee)
    back = frame.f_back
    while back is not None and not back.f_globals.get("__name__", "").startswith("brain."):
        back = back.f_back
    if back is not None:
        caller = back.f_globals.get("__name__", "")
        if caller != callee:
            state["edges"].append((caller, callee))
def toggle(signum, frm):
    if state["on"]:
        state["on"] = False
        with open(OUT, "w") as f:
            json.dump({"order": state["order"], "edges": state["edges"]}, f)
    else:
        state["order"], state["edges"] = [], []
        state["on"] = True
signal.signal(signal.SIGUSR2, toggle)
threading.setprofile(prof)
sys.setprofile(prof)
from brain.daemon.server.process import main
sys.exit(main(sys.argv[1:]))
"""

# the root of each top-level folder's installed name (pyproject.toml, package-dir)
FOLDERS = {"brain.daemon": "daemon", "brain.indexer": "indexer", "brain.cli": "cli", "brain.hooks": "hooks"}


def folder_of(module: str) -> str:
    """`brain.daemon.verbs.recall` → `daemon/verbs`: the package a module sits in, as a folder."""
    package = module.rsplit(".", 1)[0]
    for root, folder in FOLDERS.items():
        if package == root or package.startswith(root + "."):
            return folder + package[len(root):].replace(".", "/")
    return package


def summarise(notes: dict) -> dict:
    edges = Counter((folder_of(a), folder_of(b)) for a, b in notes["edges"])
    crossings = {f"{a} → {b}": n for (a, b), n in sorted(edges.items(), key=lambda kv: -kv[1]) if a != b}
    order = notes["order"]
    return {"modules": len(order), "packages": len({folder_of(m) for m in order}),
            "package_edges": len(crossings), "crossing_calls": sum(crossings.values()),
            "path": [m.removeprefix("brain.") for m in order], "edges": crossings}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", default=str(REPO / "sample_brain"))
    ap.add_argument("--embeddings", action="store_true", help="load the model (recall's vector arm runs)")
    ap.add_argument("--verbs", default="recall,remember")
    ap.add_argument("--json", action="store_true", help="one JSON line per verb instead of the listing")
    ns = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="cp-", dir="/tmp"))
    vault = home / "vault"
    shutil.copytree(ns.vault, vault, ignore=shutil.ignore_patterns(".brain"))
    out = home / "notes.json"
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1", CALL_PATH_OUT=str(out))
    env.pop("BRAIN_VAULT", None)
    from brain.daemon import config as config_mod
    from brain.daemon.places import Places

    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": bool(ns.embeddings)})
    daemon = subprocess.Popen([sys.executable, "-c", PROFILER, "--vault", str(vault)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    calls = {"recall": ("recall", {"query": "who works on the pricing decision", "limit": 10}),
             "remember": ("remember", {"fact": "the pricing review moved to Thursday", "provenance": "bench",
                                       "entity": "people/priya-raman"}),
             "entity": ("entity", {"name": "people/priya-raman"}),
             "context_pack": ("context_pack", {"entities": "people/priya-raman", "budget_tokens": 1500})}
    try:
        sock = places.socket_path(vault)
        deadline = time.monotonic() + 60
        while not sock.exists():
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit("the daemon did not start")
            time.sleep(0.1)
        client = SocketClient(str(sock), lane="remote", client="call-path")
        if ns.embeddings:
            time.sleep(20)  # the model and the vectors, so recall's vector arm runs
        for verb in ns.verbs.split(","):
            name, args = calls[verb]
            client.call(name, dict(args))  # warm: lazy imports, caches
            if verb == "remember":
                args = dict(args, fact=args["fact"] + " (second)")
            out.unlink(missing_ok=True)
            daemon.send_signal(signal.SIGUSR2)
            time.sleep(0.2)
            client.call(name, args)
            daemon.send_signal(signal.SIGUSR2)
            while not out.exists():
                time.sleep(0.05)
            time.sleep(0.2)
            summary = summarise(json.loads(out.read_text()))
            if ns.json:
                print(json.dumps({"verb": verb, **summary}))
                continue
            print(f"{verb}: {summary['modules']} modules in {summary['packages']} packages, "
                  f"{summary['package_edges']} package edges ({summary['crossing_calls']} calls across them)")
            print("  path: " + " → ".join(summary["path"]))
            for edge, n in summary["edges"].items():
                print(f"  {n:5d}  {edge}")
        client.close()
    finally:
        daemon.terminate()
        try:
            daemon.wait(20)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
