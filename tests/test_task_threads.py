"""Open tasks as open threads: on the entity's own page, in callouts, and on other pages
that link it (a daily note's `- [ ] send [[Priya Raman|Priya]] the contract`), through the
entity, context_pack and delta verbs over real files and the real indexer."""

from __future__ import annotations

import datetime as dt
import os

from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)

PRIYA = """---
title: Priya Raman
---
# Priya Raman

Counsel at the ledger firm.

> [!todo] Waiting on
> - [ ] call the bank
> - [x] file the motion
"""

DAILY = """# 2026-12-01

- [ ] send [[Priya Raman|Priya]] the contract
- [x] thank [[Priya Raman]] for the notes

> [!todo]
> - [ ] courier the deed to [[Priya Raman]] 📅 2026-12-02

```markdown
- [ ] an example for [[Priya Raman]]
```
"""

SECRET = """---
visibility: private
---
# Quiet plans

- [ ] SECRET-TASK ask [[Priya Raman]] about the move
"""

DAILY_CHANGED = dt.datetime(2026, 12, 5, 12, tzinfo=dt.timezone.utc).timestamp()
SEND = {"kind": "commitment", "text": "send [[Priya Raman|Priya]] the contract", "date": "2026-12-05T12:00:00.000Z",
        "page": "daily/2026-12-01"}
COURIER = {"kind": "commitment", "text": "courier the deed to [[Priya Raman]] 📅 2026-12-02",
           "date": "2026-12-02T00:00:00.000Z", "page": "daily/2026-12-01"}


def brain(vault, open_index):  # noqa: F811
    write(vault, "people/priya-raman.md", PRIYA)
    daily = write(vault, "daily/2026-12-01.md", DAILY)
    os.utime(daily, (DAILY_CHANGED, DAILY_CHANGED))
    write(vault, "notes/quiet-plans.md", SECRET)
    return open_index(vault)


def card_of(engine, caller, name="Priya Raman") -> dict:
    body, err = call(engine, "entity", {"name": name}, caller)
    assert not err, body
    return body["card"]


def test_tasks_elsewhere_that_link_the_entity_are_its_open_threads(vault, open_index, remote):  # noqa: F811
    engine = brain(vault, open_index)
    card = card_of(engine, remote)
    own = {"kind": "commitment", "text": "call the bank", "date": card["last_touched"]["updated_at"]}
    # its own page's callout task first, then the daily note's, newest date first; nothing checked,
    # nothing from a code fence, nothing from the private page
    assert card["open_threads"] == [own, SEND, COURIER]

    pack, err = call(engine, "context_pack", {"entities": "Priya Raman"}, remote)
    assert not err, pack
    assert pack["open_threads"] == [own, SEND, COURIER]
    assert pack["cards"][0]["open_threads"] == [own, SEND, COURIER]
    assert "- [commitment] send [[Priya Raman|Priya]] the contract (on `daily/2026-12-01`)" in pack["text"]
    for absent in ("SECRET", "thank", "an example", "file the motion"):
        assert absent not in str(pack)

    wake, err = call(engine, "delta", {"since": "2026-12-03T00:00:00Z", "entities": "Priya Raman"}, remote)
    assert not err, wake
    assert SEND in wake["threads"] and COURIER not in wake["threads"]   # dated before the cursor


def test_the_owner_sees_a_private_pages_task_and_threads_stay_three(vault, open_index, local):  # noqa: F811
    engine = brain(vault, open_index)
    threads = card_of(engine, local)["open_threads"]
    assert len(threads) == 3
    assert threads[0]["text"] == "call the bank"
    # the private page changed last, so its task is the newest; the courier task no longer fits
    assert threads[1] == {"kind": "commitment", "text": "SECRET-TASK ask [[Priya Raman]] about the move",
                          "date": threads[1]["date"], "page": "notes/quiet-plans"}
    assert threads[2] == SEND


def test_a_quoted_task_in_a_daily_note_reaches_the_linked_card(vault, open_index, remote):  # noqa: F811
    write(vault, "companies/ledger-firm.md", "# Ledger Firm\n\nA firm.\n")
    write(vault, "daily/2026-12-02.md", "> [!todo]\n> > - [ ] renew the [Ledger Firm](../companies/ledger-firm.md) "
                                        "retainer [due:: 2026-12-20]\n")
    engine = open_index(vault)
    assert card_of(engine, remote, "Ledger Firm")["open_threads"] == [
        {"kind": "commitment", "text": "renew the [Ledger Firm](../companies/ledger-firm.md) retainer "
                                       "[due:: 2026-12-20]", "date": "2026-12-20T00:00:00.000Z",
         "page": "daily/2026-12-02"}]


def test_the_terminal_card_names_the_page_a_task_is_written_on(vault):
    import subprocess
    import sys

    write(vault, "people/priya-raman.md", PRIYA)
    daily = write(vault, "daily/2026-12-01.md", DAILY)
    os.utime(daily, (DAILY_CHANGED, DAILY_CHANGED))
    r = subprocess.run([sys.executable, "-m", "brain.cli.entry", "entity", "Priya Raman", "--no-daemon"],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "BRAIN_VAULT": str(vault)})
    assert r.returncode == 0, r.stderr
    assert "  [commitment] call the bank (" in r.stdout
    assert "  [commitment] send [[Priya Raman|Priya]] the contract (on daily/2026-12-01) (2026-12-05)" in r.stdout


def test_a_task_linking_two_packed_entities_is_one_thread(vault, open_index, remote):  # noqa: F811
    write(vault, "people/priya-raman.md", "# Priya Raman\n")
    write(vault, "companies/ledger-firm.md", "# Ledger Firm\n")
    write(vault, "daily/2026-12-03.md", "- [ ] introduce [[Priya Raman]] to [[Ledger Firm]]\n")
    engine = open_index(vault)
    pack, err = call(engine, "context_pack", {"entities": "Priya Raman, Ledger Firm"}, remote)
    assert not err, pack
    assert [c["open_threads"][0]["text"] for c in pack["cards"]] == ["introduce [[Priya Raman]] to [[Ledger Firm]]"] * 2
    assert [t["text"] for t in pack["open_threads"]] == ["introduce [[Priya Raman]] to [[Ledger Firm]]"]
