"""Every command's `--help`, every flag and every completion, held against a golden file.

The command tree is made from declarations (verb commands, `brain serve`, the
typer areas); a change in how it is made must not change a word a person reads.
The snapshot walks the whole tree: the help text of each command and group,
each parameter's names, type, choices and whether it is required, and what the
shell completes after each command and for each option's value.

Regenerate after an intended change: `python tests/test_cli_help_snapshot.py`.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path


GOLDEN = Path(__file__).parent / "golden" / "cli" / "help.txt"


def _tree():
    from brain.cli.app import brain_command

    return brain_command()


def _paths(group, prefix=()):
    """(words, command) for the group and everything under it. typer's groups are not
    click.Group subclasses, so a group is whatever has sub-commands."""
    yield prefix, group
    for name in sorted(group.commands):
        cmd = group.commands[name]
        if hasattr(cmd, "commands"):
            yield from _paths(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def _is_option(p) -> bool:
    return p.param_type_name == "option"


def _param_line(p) -> str:
    kind = "option" if _is_option(p) else "argument"
    ptype = getattr(p, "type", None) or getattr(p, "type_descriptor", None)  # typer keeps its own
    choices = getattr(ptype, "choices", None)
    type_name = getattr(ptype, "name", None) or type(ptype).__name__
    return (f"  {kind} {'/'.join(p.opts + p.secondary_opts)} type={type_name} required={p.required} "
            f"flag={getattr(p, 'is_flag', False)} hidden={getattr(p, 'hidden', False)} "
            f"choices={list(choices) if choices else None} metavar={p.metavar}")


@contextlib.contextmanager
def _env(**values):
    """The environment with `values` set (None: removed), restored afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(args: list[str], **env) -> tuple[int, str]:
    """(exit code, stdout) of the real app, as a shell runs it."""
    from brain.cli.app import app

    buf = io.StringIO()
    code = 0
    # a fixed width and no forced colour: help text as a pipe sees it, the same on every machine
    with _env(COLUMNS="100", FORCE_COLOR=None, CLICOLOR_FORCE=None, **env), contextlib.redirect_stdout(buf):
        try:
            app(args=args, prog_name="brain")
        except SystemExit as e:
            code = e.code or 0
    return code, buf.getvalue()


def _completions(words: list[str], incomplete: str) -> list[str]:
    line = " ".join(["brain", *words, incomplete])
    return _run([], _BRAIN_COMPLETE="complete_bash", COMP_WORDS=line, COMP_CWORD=str(len(words) + 1))[1].split()


def snapshot() -> str:
    out = []
    for path, cmd in _paths(_tree()):
        words = list(path)
        code, text = _run([*words, "--help"])
        out.append(f"==== brain {' '.join(words)} --help (exit {code})")
        out.append(text.rstrip("\n"))
        out.append("---- parameters")
        out += [_param_line(p) for p in cmd.params]
        out.append("---- completes")
        out.append("  after: " + " ".join(_completions(words, "")))
        out.append("  '-': " + " ".join(_completions(words, "-")))
        for p in cmd.params:
            if _is_option(p) and not p.is_flag and not p.hidden:
                out.append(f"  {p.opts[0]} _: " + " ".join(_completions([*words, p.opts[0]], "")))
    from brain.cli.daemon_cmd import _serve_parser  # what `brain serve` parses with on its lean path

    out.append("==== brain serve: the lean path's parser")
    with _env(COLUMNS="100"):
        out.append(_serve_parser().format_help().rstrip("\n"))
    return "\n".join(out) + "\n"


def test_help_flags_and_completion_match_the_snapshot():
    want = GOLDEN.read_text(encoding="utf-8")
    got = snapshot()
    if got != want:
        import difflib

        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now", n=2))
        raise AssertionError("the CLI's help, flags or completion changed:\n" + diff[:6000])


def test_the_snapshot_covers_every_verb_command_and_serve():
    from brain.cli.verb_commands import COMMANDS

    text = GOLDEN.read_text(encoding="utf-8")
    for name in (*COMMANDS, "serve", "config set", "hooks install", "mcp install"):
        assert f"==== brain {name} --help (exit 0)" in text, name


def test_the_command_tree_is_made_without_argparse_internals():
    """The click commands come from the declarations (verb_commands.Command), not from
    reading a parser's private attributes back."""
    cli = Path(__file__).resolve().parents[1] / "cli"
    for f in sorted(cli.glob("*.py")):
        text = f.read_text(encoding="utf-8")
        assert "._actions" not in text and "argparse._" not in text, f.name


if __name__ == "__main__":
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(snapshot(), encoding="utf-8")
    print(f"wrote {GOLDEN}", file=sys.stderr)
