"""Write docs/walkthrough.md from a real run of the commands it shows.

Each step's command runs on a copy of sample_brain/ as `~/notes`, in a private HOME
(so brain's config, caches, state and the harness configs land there, as a new user's
would, and no BRAIN_HOME shows in what the install writes), keyword-only (no model:
the run stays short and the same on every machine). What changes from run to run is
normalised: the temporary folders read as /home/you, times and fact numbers take
fixed values, today's date a fixed day.

    python docs/walkthrough.py            # rewrite docs/walkthrough.md
    python docs/walkthrough.py --check    # exit 1, with a diff, when the doc is not what a run prints

tests/test_walkthrough.py runs the check, so a change in output the doc does not show fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "walkthrough.md"
SHOWN_HOME = "/home/you"
SHOWN_BIN = "/home/you/brain/.venv/bin"
SHOWN_DAY = "2026-12-03"
PAGES_TIME = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc).timestamp()  # every page's last change

INTRO = """# A first session with brain, step by step

From a fresh clone to an agent that starts its next session knowing what you
told it. Every output below was printed by these commands (`docs/walkthrough.py`
runs them and writes this page; a test checks it is up to date) on a copy of
`sample_brain/` as `~/notes`, with the embedding model switched off; times,
paths and fact numbers differ on your machine, and with the model `brain init`
also says when semantic search is ready.

## 1. Install, and put `brain` on your PATH

```sh
./install.sh
source .venv/bin/activate        # or call .venv/bin/brain everywhere below
```

## 2. Register your notes
"""

# (prose before the command, the command as shown, whether its output is shown)
STEPS: list[tuple[str, str]] = [
    ("""
`~/notes` is a copy of `sample_brain/`; give it a few open tasks of your own first:
""", """cat >> ~/notes/Inbox.md <<'EOF'
- [ ] send [[Priya Raman|Priya]] the refund numbers
- [ ] book the Ledger v2 demo room for [[Priya Raman]]
- [ ] ask [[Priya Raman]] about the on-call budget
EOF"""),
    ("", "brain init ~/notes"),
    ("""`brain init` with no folder asks which one (it never registers your home
folder by itself); a folder that does not exist is refused unless you pass
`--create`. With the model on, its export happens once per machine.

## 3. Connect Claude Code
""", "brain mcp install claude"),
    ("""This runs `claude mcp add --scope user brain -- <absolute path of brain>
serve --surface starter`; above, `claude` was not on the PATH, so it printed
that command and the JSON block to paste instead, and exited 1.

The absolute path matters: Claude Code does not start in your shell, so a bare
`brain` would not be found. For the same reason, a `BRAIN_HOME` or
`BRAIN_VAULT` set in your shell is written into the entry (docs/harnesses.md).
The `starter` surface gives the agent the seven verbs plus `get_page`, so it
can read a page the context points it to.

## 4. Tell it something, and ask
""", 'brain remember "Priya wants the refund numbers before Friday" --entity Priya'),
    ("""`Priya` is an alias on Priya Raman's page, so the fact is filed under her;
at the terminal the provenance defaults to `cli:<your user name>`. Fact numbers
are minted per device (docs/architecture.md, "Fact ids").
""", 'brain recall "who runs the ledger v2 migration" -n 3'),
    ("""Each hit starts with `path:line`, which terminals and editors open;
`--scores`, `--files` (`-0` for names with spaces), `--md` and `--json` change
the format.
""", "brain entity Priya"),
    ("""The tasks that link her are her open threads (before recent events on her page),
each dated by the day brain first saw it: editing the note later does not move it.

## 5. See it in the next session
""", "brain config set hooks.standing_entities people/priya-raman"),
    ("", "brain hooks install claude"),
    ("", "brain context"),
]

OUTRO = """
That block is what Claude Code receives at the start of every new, resumed,
cleared or compacted session. `brain doctor hooks` checks the whole chain:
the settings file, the program it names, the vault that program finds when
started as Claude Code starts it, and a simulated session start.
"""


class Normaliser:
    """What a run prints, with what differs from run to run replaced by fixed values."""

    def __init__(self, home: Path, bin_dir: str):
        self.home = str(home)
        self.bin_dir = bin_dir
        self.today = dt.datetime.now(dt.timezone.utc).date().isoformat()
        self.fact_ids: dict[str, str] = {}

    def _fact(self, m: re.Match) -> str:
        return "#" + self.fact_ids.setdefault(m.group(1), str(1247464 + len(self.fact_ids)))

    def __call__(self, text: str) -> str:
        text = text.replace(self.bin_dir, SHOWN_BIN).replace(self.home, SHOWN_HOME)
        text = re.sub(r"#(\d{5,})", self._fact, text)
        text = re.sub(r"\b\d+(?:\.\d+)? ms\b", "5 ms", text)
        text = re.sub(r"\bin \d+(?:\.\d+)? s\b", "in 0.8 s", text)
        text = re.sub(r"\b\d+(?:\.\d+)? s\b", "0.8 s", text)
        text = re.sub(re.escape(self.today) + r"T\d{2}:\d{2}:\d{2}\.\d{3}Z", SHOWN_DAY + "T22:24:18.909Z", text)
        text = re.sub(r"today \d{2}:\d{2}", "today 22:24", text)
        return text.replace(self.today, SHOWN_DAY)


def run_all() -> str:
    """Run every step in a fresh HOME and return the doc's text."""
    scratch = Path(tempfile.mkdtemp(prefix="bwt-", dir="/tmp"))
    home = scratch / "home"
    notes = home / "notes"
    shutil.copytree(REPO / "sample_brain", notes, ignore=shutil.ignore_patterns(".brain"))
    for path in notes.rglob("*"):  # a checkout's times differ from clone to clone; the doc's dates must not
        os.utime(path, (PAGES_TIME, PAGES_TIME))
    config = home / ".config" / "brain" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[embeddings]\nenabled = false\n")
    bin_dir = str(Path(sys.executable).parent)
    env = {"HOME": str(home), "PATH": bin_dir + os.pathsep + "/usr/bin:/bin", "LANG": "C.UTF-8",
           "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "USER": "you", "LOGNAME": "you",
           "TZ": "UTC", "COLUMNS": "100", "XDG_RUNTIME_DIR": str(scratch / "run")}
    (scratch / "run").mkdir(mode=0o700)
    norm = Normaliser(home, bin_dir)
    parts = [INTRO]
    try:
        for prose, command in STEPS:
            if prose:
                parts.append(prose)
            # as a person types it: a shell, with `brain` found on the PATH
            r = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=env,
                               cwd=str(home), timeout=120, stdin=subprocess.DEVNULL)
            out = (r.stdout + r.stderr).rstrip("\n")
            parts.append(f"\n```sh\n{command}\n```\n")
            if out:
                parts.append(f"\n```\n{norm(out)}\n```\n\n")
            else:
                parts.append("\n")
    finally:
        subprocess.run(["/bin/sh", "-c", "brain daemon stop"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)
    parts.append(OUTRO)
    return re.sub(r"\n{3,}", "\n\n", "".join(parts))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/walkthrough.md; write nothing")
    ns = ap.parse_args(argv)
    text = run_all()
    if ns.check:
        have = DOC.read_text(encoding="utf-8")
        if have == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), text.splitlines(True),
                                                   "docs/walkthrough.md", "a run of docs/walkthrough.py"))
        return 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
