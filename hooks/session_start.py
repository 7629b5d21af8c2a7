"""`brain hook session-start`: the command a harness runs when a session
starts, resumes, is cleared or has just been compacted.

It reads the harness's hook JSON on stdin, asks for a `context_pack` of the
standing entities plus the page named after the current project, and prints
the pack's text as `additionalContext` in the harness's SessionStart output.

It fails open: whatever goes wrong (no vault, no daemon, bad stdin, an error
envelope, the deadline passing) it prints nothing and exits 0, and the reason
is appended to `hooks.log` in the brain log folder. A hook must never block or
break a session. Nothing here imports typer, torch, numpy or the MCP SDK.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import cast

from ..daemon.config import DEFAULTS
from ..daemon.line_log import append_line
from ..daemon.protocol.limits import MAX_ENTITIES
from ..indexer.vault.timestamps import now_iso

MAX_STDIN_BYTES = 1 << 20  # a hook payload is a few hundred bytes
LOG_ROTATE_BYTES = 1 << 20
# both declared as integers in daemon/config.py (SETTINGS); the table holds every setting's type
DEFAULT_DEADLINE_MS = cast(int, DEFAULTS["hooks.deadline_ms"])
DEFAULT_BUDGET = cast(int, DEFAULTS["hooks.budget_tokens"])


# the log line of a run that worked but found nothing to say (doctor tells it from a failure)
NOTHING_TO_INJECT = "context_pack returned no text"


class Skip(Exception):
    """A reason to print nothing; its message goes to the hook log."""


# -- pure pieces ---------------------------------------------------------------


def parse_payload(raw: bytes) -> dict:
    """The harness's hook JSON as a dict, or Skip when it is not one."""
    if not raw.strip():
        raise Skip("empty stdin: expected the harness's hook JSON")
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Skip(f"stdin is not JSON ({e.__class__.__name__}: {e})") from None
    if not isinstance(payload, dict):
        raise Skip(f"stdin JSON is a {type(payload).__name__}, not an object")
    return payload


def event_of(payload: dict) -> str:
    """SessionStart (the default, for harnesses that omit the name) or PostCompact."""
    name = payload.get("hook_event_name") or "SessionStart"
    if name not in ("SessionStart", "PostCompact"):
        raise Skip(f"not a session-start event: hook_event_name={name!r}")
    return name


def repo_root(cwd: str | os.PathLike | None) -> Path | None:
    """The nearest folder at or above `cwd` holding `.git` (a folder, or a file
    for worktrees and submodules); None outside a repository."""
    if not cwd:
        return None
    try:
        here = Path(cwd).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def project_name(cwd: str | os.PathLike | None) -> str | None:
    """The git repository's name for `cwd`: its root folder's name, or for a
    linked worktree the name of the main repository it belongs to."""
    root = repo_root(cwd)
    if root is None:
        return None
    dot_git = root / ".git"
    if dot_git.is_file():
        # "gitdir: /path/main/.git/worktrees/<name>" -> the main repo is /path/main
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            line = ""
        if line.startswith("gitdir:"):
            gitdir = Path(line[len("gitdir:"):].strip())
            if not gitdir.is_absolute():
                gitdir = (root / gitdir).resolve()
            parts = gitdir.parts
            if "worktrees" in parts:
                i = len(parts) - 1 - parts[::-1].index("worktrees")
                main_git = Path(*parts[:i])
                if main_git.name == ".git":
                    return main_git.parent.name or None
    return root.name or None


def choose_entities(standing, project: str | None) -> list[str]:
    """Standing entities in config order, then the project page, at most MAX_ENTITIES (as context_pack),
    without repeats. The project always gets a seat when there is one."""
    if isinstance(standing, str):
        standing = standing.split(",")
    names: list[str] = []
    seen: set[str] = set()
    for name in list(standing or []):
        if not isinstance(name, str) or not name.strip():
            continue
        key = name.strip().lower()
        if key not in seen:
            seen.add(key)
            names.append(name.strip())
    if project and project.strip().lower() not in seen:
        names = names[: MAX_ENTITIES - 1] + [project.strip()]
    return names[:MAX_ENTITIES]


def pack_args(payload: dict, entities: list[str], budget: int) -> dict:
    """The context_pack arguments for this payload."""
    args: dict = {"entities": ",".join(entities), "budget_tokens": budget}
    session = payload.get("session_id")
    if isinstance(session, str) and session.strip():
        args["session_id"] = session.strip()[:200]
    return args


def render(text: str) -> bytes:
    """The SessionStart output both Claude Code and Codex accept. ASCII-only
    JSON, so a harness started under a C locale still reads it."""
    out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return (json.dumps(out, ensure_ascii=True) + "\n").encode("ascii")


def int_setting(cfg: dict, key: str, default: int) -> int:
    """A positive integer setting, or the default when absent or malformed."""
    v = cfg.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return default
    return int(v)


# -- the run -------------------------------------------------------------------


class HookLog:
    """One line per run in `<log dir>/hooks.log`; never raises."""

    def __init__(self, path: Path | None):
        self.path = path

    def write(self, outcome: str, detail: str, started: float, source: str | None = None) -> None:
        if self.path is None:
            return
        ms = int((time.monotonic() - started) * 1000)
        line = f"{now_iso()} session-start source={source or '-'} {outcome} {ms}ms {detail}".replace("\n", " ") + "\n"
        append_line(self.path, line.encode("utf-8", "replace"), LOG_ROTATE_BYTES)


def _work(stdin, cfg: dict, no_daemon: bool, state: dict) -> None:
    """Everything that may be slow or fail, run under the deadline."""
    from ..cli import route

    try:
        raw = stdin.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            raise Skip(f"stdin is larger than {MAX_STDIN_BYTES} bytes: not a hook payload")
        payload = parse_payload(raw)
        state["source"] = payload.get("source") if isinstance(payload.get("source"), str) else None
        event = event_of(payload)
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        entities = choose_entities(cfg.get("hooks.standing_entities", ["people/me"]), project_name(cwd))
        if not entities:
            raise Skip("no entities: hooks.standing_entities is empty and cwd is not in a git repository")
        args = pack_args(payload, entities, int_setting(cfg, "hooks.budget_tokens", DEFAULT_BUDGET))
        body, is_error = route.route_call("context_pack", args, no_daemon=no_daemon, remote=cfg.get("hooks.remote"))
        if is_error:
            raise Skip(f"context_pack answered {body.get('error')}: {body.get('message')}")
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise Skip(f"{NOTHING_TO_INJECT} for {args['entities']!r}")
        if event == "PostCompact":
            # Codex's PostCompact output cannot carry model context; its
            # SessionStart(source=compact) does. This run only warmed the daemon.
            raise Skip("PostCompact: context goes in through SessionStart(source=compact); pack warmed")
        state["out"] = render(text)
        state["detail"] = f"entities={args['entities']!r} chars={len(text)}"
    except Skip as e:
        state["skip"] = str(e)
    except route.NoVault as e:
        state["skip"] = f"no vault: {e}"
    except BaseException as e:  # fail open: any failure is a log line, never a broken session
        state["skip"] = f"failed: {e.__class__.__name__}: {e}"


def process_age_s() -> float:
    """Seconds since this process was spawned (Linux; 0 elsewhere), so the
    deadline counts the interpreter's start-up the harness already waited for."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in clock ticks
        return age if 0.0 <= age < 60.0 else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    """Run the hook; always returns 0. `--no-daemon` runs the engine in-process."""
    started = time.monotonic() - process_age_s()
    argv = list(sys.argv[1:] if argv is None else argv)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    log = HookLog(None)
    try:
        from ..cli import route

        places = route.places()
        log = HookLog(places.log_dir / "hooks.log")
        cfg = route.load_config(places)
    except BaseException as e:  # e.g. a config.toml that does not parse
        log.write("skip", f"config: {e.__class__.__name__}: {e}", started)
        return 0
    deadline_s = int_setting(cfg, "hooks.deadline_ms", DEFAULT_DEADLINE_MS) / 1000.0
    state: dict = {}
    worker = threading.Thread(target=_work, args=(stdin, cfg, "--no-daemon" in argv, state), daemon=True)
    worker.start()
    worker.join(max(0.0, deadline_s - (time.monotonic() - started)))
    if worker.is_alive() or time.monotonic() - started > deadline_s:
        log.write("skip", f"deadline of {int(deadline_s * 1000)} ms passed; printed nothing", started,
                  state.get("source"))
        if worker.is_alive():
            # the worker may be blocked on a socket or stdin: leave without it
            try:
                stdout.flush()
            finally:
                os._exit(0)
        return 0
    if "out" not in state:
        log.write("skip", state.get("skip", "no output"), started, state.get("source"))
        return 0
    try:
        stdout.write(state["out"])
        stdout.flush()
    except OSError as e:  # the harness closed our stdout: nothing more to do
        log.write("skip", f"stdout: {e}", started, state.get("source"))
        return 0
    log.write("ok", state.get("detail", ""), started, state.get("source"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
