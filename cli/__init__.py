"""The `brain` command line: `entry` picks the hot path (`verb_main`: the verb
commands declared in `verb_commands`, argparse, no typer import) or the typer app (`app`: every other
command, one `*_cmd` module per command group); `route` sends a verb call to the
daemon, in process, or to a remote brain; `render` prints answers for a person.

May import: the hooks, the daemon's client side, protocol, server (the engines
and the entry points it starts), HTTP front end, facts, stores, PostgreSQL
backend, LLM providers and conformance runner, the modules shared under
`daemon/`, and the indexer; never `daemon/verbs` (a verb is reached through
the dispatcher, by name). Nothing imports it except `brain.hooks`, which
borrows `route` to build a session's context. On the hot path (`verb_main`)
nothing heavy loads (tests/test_import_direction.py holds both).
"""
