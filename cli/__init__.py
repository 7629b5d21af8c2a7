"""The `brain` command line: `entry` picks the hot path (`verb_main`: the verb
commands declared in `verb_commands`, argparse, no typer import) or the typer app (`app`: every other
command, one `*_cmd` module per command group); `route` sends a verb call to the
daemon, in process, or to a remote brain; `render` prints answers for a person.

May import: everything (it is the top layer); nothing imports it except
`brain.hooks`, which borrows `route` to build a session's context.
"""
