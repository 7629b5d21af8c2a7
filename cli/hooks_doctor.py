"""`brain doctor hooks`: proves the chain a harness runs at session start: a config
that names our hook, a program that exists where the harness looks for it, the
vault that program finds in the harness's bare environment (PATH, HOME and what
the hook command carries: hooks/carried_env.py), and a simulated SessionStart,
run in that environment, that yields context."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable

from ..hooks.carried_env import CARRIED, clean_env, split_env
from ..hooks.session_start import NOTHING_TO_INJECT
from .doctor import DoctorContext, check

Row = tuple[str, str, str]


def deadline_ms(cfg: dict) -> int:
    from ..hooks.session_start import DEFAULT_DEADLINE_MS, int_setting

    return int_setting(cfg, "hooks.deadline_ms", DEFAULT_DEADLINE_MS)


def _installed_hooks():
    """(harness, hooks file, command, target) for every config that runs our hook."""
    from ..hooks import install as inst
    from ..hooks.harnesses import HARNESSES

    found = []
    for harness in HARNESSES.values():
        for project in (False, True):
            t = harness.target(project)
            try:
                text = inst.read_text(t.hooks_file)
            except inst.InstallError:
                continue
            if inst.has_our_hooks(text) and t.hooks_file not in [f[1] for f in found]:
                found.append((harness.name, t.hooks_file, inst.our_handler(text)[0], t))
    return found


def _standing(ctx: DoctorContext) -> str:
    from ..daemon import config as config_mod

    value = config_mod.get(ctx.cfg, "hooks.standing_entities")
    return ", ".join(value) if isinstance(value, (list, tuple)) else str(value or "people/me")


def _last_hook_log_line(log_dir: Path) -> str:
    try:
        lines = (log_dir / "hooks.log").read_text(encoding="utf-8", errors="replace").splitlines()
        return lines[-1] if lines else "(hooks.log is empty)"
    except OSError:
        return "(no hooks.log)"


def simulate_session_start(argv: list[str], cwd: Path, timeout_s: float = 10.0,
                           env: dict | None = None) -> tuple[int, bytes, float]:
    """Run the hook command on a made-up SessionStart payload, in `env` (the harness's
    bare environment) when given: (exit code, stdout, wall seconds)."""
    payload = {"session_id": "brain-doctor", "transcript_path": None, "cwd": str(cwd),
               "hook_event_name": "SessionStart", "source": "startup", "model": "doctor"}
    t0 = time.monotonic()
    r = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, timeout=timeout_s, env=env)
    return r.returncode, r.stdout, time.monotonic() - t0


_WHERE = ("import json\n"
          "from brain.cli import route\n"
          "p = route.places()\n"
          "try:\n    v = str(route.vault_path(p))\n"
          "except route.NoVault:\n    v = None\n"
          "print(json.dumps({'vault': v, 'log_dir': str(p.log_dir)}))\n")


def vault_in(env: dict) -> tuple[Path | None, Path | None]:
    """(vault, log folder) a brain started in `env` finds, asked of a brain in that very
    environment (platform folders and all); (None, None) when it cannot say."""
    try:
        r = subprocess.run([sys.executable, "-c", _WHERE], env=env, capture_output=True, text=True, timeout=20)
        where = json.loads(r.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None, None
    return (Path(where["vault"]) if where.get("vault") else None), Path(where["log_dir"])


def _environment_check(ctx: DoctorContext, command: str, env: dict, seen: Path | None) -> Iterable[Row]:
    """Whether the hook, started with only PATH, HOME and what its command carries (`env`),
    finds this shell's vault (it finds `seen`): a BRAIN_HOME or BRAIN_VAULT exported here
    reaches no harness."""
    if ctx.vault is None:
        return
    carried = ", ".join(k for k in CARRIED if k in env) or "nothing"
    if seen is not None and seen.resolve() == ctx.vault.resolve():
        yield ("ok", "hook environment", f"started as a harness starts it (PATH, HOME and {carried}), the hook "
               f"finds the vault {seen}")
        return
    here = ", ".join(f"{k}={os.environ[k]}" for k in CARRIED if os.environ.get(k)) or "no BRAIN_HOME"
    yield ("fail", "hook environment", f"started as a harness starts it (PATH, HOME and {carried}), `{command}` "
           f"finds {'no vault' if seen is None else f'the vault {seen}'}, not {ctx.vault} ({here} in this shell "
           "only). Fix: run `brain hooks install claude` (or codex) again from this shell; it writes them into "
           "the hook command")


def _distinct_programs(found) -> list[tuple[str, str]]:
    """(program, one command running it), once per program: a hook installed for two
    harnesses runs the same brain, and its check is printed once."""
    seen: dict[str, str] = {}
    for _, _, command, _ in found:
        _, words = split_env(shlex.split(command))
        seen.setdefault(words[0], command)
    return list(seen.items())


def _program_check(program: str, command: str) -> tuple[str, str, str | None]:
    """(status, detail, the path to run) for the program a hook config names. An absolute
    path is checked as it stands: the harness runs it from its own environment, not this
    shell's PATH. A bare name works only where the harness's PATH happens to hold it."""
    if Path(program).is_absolute():
        if Path(program).is_file() and os.access(program, os.X_OK):
            return "ok", f"{program} exists and is executable", program
        return ("fail", f"{program} does not exist or is not executable: the harness cannot run `{command}`. "
                "Fix: run `brain hooks install claude` (or codex) again with the brain you use now", None)
    where = shutil.which(program)
    if where is None:
        return ("fail", f"`{program}` is not on PATH: the harness cannot run `{command}`. Fix: run "
                "`brain hooks install claude` (or codex) again; it writes brain's absolute path", None)
    return ("warn", f"`{program}` resolves to {where} in this shell only; a harness started elsewhere may not find "
            "it. Fix: run `brain hooks install claude` (or codex) again; it writes brain's absolute path", where)


@check("hooks")
def _hooks_check(ctx: DoctorContext):
    from ..hooks.harnesses import HARNESSES

    found = _installed_hooks()
    if not found:
        yield ("warn", "hook config", "no harness runs `brain hook session-start`: run "
               "`brain hooks install claude` (or `codex`; add --project for one repository)")
    for harness, path, command, t in found:
        yield ("ok", "hook config", f"{harness}: {path} runs `{command}`")
        yield from HARNESSES[harness].doctor_checks(t)
    argv: list[str] | None = None
    carried: dict[str, str] = {}
    shown = ""
    for program, command in _distinct_programs(found):
        status, detail, runnable = _program_check(program, command)
        yield (status, "hook command", detail)
        if runnable and argv is None:
            carried, words = split_env(shlex.split(command))
            argv, shown = [runnable, *words[1:]], command
    if argv is None:
        # no runnable hook config: the chain is proved with this brain, as this shell runs it
        argv, env = [sys.executable, "-m", "brain.cli.entry", "hook", "session-start"], None
        log_dir = ctx.places.log_dir
    else:
        env = clean_env(carried, os.environ)
        seen, its_logs = vault_in(env)
        yield from _environment_check(ctx, shown, env, seen)
        log_dir = its_logs or ctx.places.log_dir
    deadline = deadline_ms(ctx.cfg)
    try:
        code, out, wall = simulate_session_start(argv, Path.cwd(), env=env)
        if not out.strip() and "deadline" in _last_hook_log_line(log_dir):
            time.sleep(2.0)  # a cold daemon misses the first deadline; the second run meets a warm one
            code, out, wall = simulate_session_start(argv, Path.cwd(), env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        yield ("fail", "simulated session start", f"could not run the hook: {e}. Fix: run "
               f"`{shlex.join(argv)} < /dev/null` by hand to see why; `brain daemon logs` if it hangs")
        return
    context = ""
    try:
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
    except (ValueError, KeyError, TypeError):
        yield ("fail", "simulated session start", f"the hook printed something that is not hook JSON: {out[:200]!r}. "
               "Fix: the hook command must be `brain hook session-start`; run `brain hooks install claude` "
               "(or codex) to rewrite it")
        return
    last = _last_hook_log_line(log_dir)
    if code != 0:
        yield ("fail", "simulated session start", f"the hook exited {code}; it must always exit 0. Fix: reinstall "
               "brain (`pip install -e .` in its folder) and run `brain hooks install claude` (or codex) again")
    elif not context.strip() and NOTHING_TO_INJECT in last:
        # a healthy brain with nothing to say yet: the chain works, the entities are empty
        yield ("ok", "simulated session start", f"the hook ran in {int(wall * 1000)} ms and has nothing to inject yet "
               f"(no page, facts or open threads for {_standing(ctx)}); `brain remember \"…\" --provenance me "
               "--entity people/me` gives it something, or `brain config set hooks.standing_entities E1,E2`")
    elif not context.strip():
        yield ("fail", "simulated session start", f"no context was injected; the hook log says: {last}. Fix: "
               "`brain daemon logs` shows daemon errors; a deadline miss needs a larger "
               "`brain config set hooks.deadline_ms N`")
    else:
        status = "ok" if wall * 1000 <= deadline else "warn"
        yield (status, "simulated session start", f"{len(context)} characters of context in {int(wall * 1000)} ms "
               f"(deadline {deadline} ms)")
