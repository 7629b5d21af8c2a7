"""No link under `.brain/` (nor at this device's journal) is followed for a write.

docs/architecture.md "Symlinks": `.brain/facts` or a facts log replaced by a
link, to anywhere, is refused: remember answers `unavailable` without a path,
nothing is written, created or chmod'ed through the link, and `brain doctor
facts` names the link with its fix. The family is generated: where the link
is (facts folder, device log, journal) x where it points (a folder or file
outside the vault, a file inside it, nowhere) x when it appears (before the
log's first write, or after, while the daemon holds the log open).
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time

import pytest
from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401  (fixture)

from brain.cli.doctor import CHECKS, DoctorContext

OUTSIDE_BYTES = b'{"op":"insert","id":1,"fact":"not yours"}\n'


def _targets(tmp_path, vault, what):
    """Where a link points: (target path, the thing to check is untouched)."""
    out = tmp_path / "elsewhere"
    out.mkdir(exist_ok=True)
    os.chmod(out, 0o755)
    if what == "outside folder":
        return out, out
    if what == "outside file":
        f = out / "target.jsonl"
        f.write_bytes(OUTSIDE_BYTES)
        os.chmod(f, 0o644)
        return f, f
    if what == "file inside vault":
        f = write(vault, "notes/inside.md", "# Inside\n\nA page.\n")
        os.chmod(f, 0o644)
        return f, f
    return out / "nothing-here", out   # dangling


def _snapshot(path):
    """Mode and bytes of a file, or mode and listing of a folder (each file's bytes and mode too)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        return stat.S_IMODE(st.st_mode), {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
                                          for p in sorted(path.iterdir())}
    return stat.S_IMODE(st.st_mode), path.read_bytes()


PLACES = ["facts folder", "device log", "journal"]
POINTS = ["outside folder", "outside file", "file inside vault", "dangling"]
CASES = [(where, to) for where in PLACES for to in POINTS
         if not (where == "facts folder" and to in ("outside file", "file inside vault"))
         and not (where != "facts folder" and to == "outside folder")]


@pytest.mark.parametrize("after_a_write", [False, True], ids=["first write", "log held open"])
@pytest.mark.parametrize("where,to", CASES, ids=[f"{w} to {t}" for w, t in CASES])
def test_a_link_under_brain_is_never_written_through(tmp_path, vault, open_index, remote, places,
                                                     where, to, after_a_write):
    e = open_index(vault)
    if after_a_write:
        body, err = call(e, "remember", {"fact": "before the link", "provenance": "t"}, remote)
        assert not err, body
    log_path, journal = e.facts.log.path, e.facts.journal.path
    spot = {"facts folder": log_path.parent, "device log": log_path, "journal": journal}[where]
    target, watched = _targets(tmp_path, vault, to)
    before = _snapshot(watched)
    if os.path.lexists(spot):
        os.rename(spot, tmp_path / "moved-aside")
    spot.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, spot)

    body, err = call(e, "remember", {"fact": "the door code is 4321", "provenance": "t"}, remote)
    assert err and body["error"] == "unavailable", body
    assert str(tmp_path) not in json.dumps(body)   # no path of this machine to a remote caller
    assert _snapshot(watched) == before            # nothing written, created or chmod'ed through the link
    assert os.path.islink(spot)                    # the link left as it was, for its owner to fix
    assert "4321" not in "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*")
                                 if p.is_file() and not p.is_symlink() and "cache" not in p.parts)

    rows = [r for r in CHECKS["facts"](DoctorContext(places, {}, vault)) if r[1] == "links"]
    assert rows and rows[0][0] == "fail" and str(spot) in rows[0][2] and "fix:" in rows[0][2], rows


def test_doctor_says_no_links_when_there_are_none(vault, open_index, remote, places):
    e = open_index(vault)
    call(e, "remember", {"fact": "a fact", "provenance": "t"}, remote)
    rows = [r for r in CHECKS["facts"](DoctorContext(places, {}, vault)) if r[1] == "links"]
    assert rows == [("ok", "links", rows[0][2])]


def test_a_log_swapped_for_a_link_while_writers_run_never_writes_outside(tmp_path, vault, open_index, remote):
    """Another program keeps replacing the device log with a link to a file outside the vault (and
    putting the real log back) while remember runs: the outside file keeps its bytes and mode, and every
    acknowledged fact is in the log at its path."""
    e = open_index(vault)
    body, err = call(e, "remember", {"fact": "fact zero", "provenance": "t"}, remote)
    assert not err, body
    log_path = e.facts.log.path
    target, _ = _targets(tmp_path, vault, "outside file")
    before = _snapshot(target)
    aside = log_path.with_name("held-aside")
    stop = threading.Event()
    swaps = [0]

    link_tmp = log_path.with_name("link-tmp")

    def swapper():
        # each swap is one rename, so the path is never empty: brain never sees its log gone
        # (and starts a new one the next swap would drop), only the link or the log itself
        while not stop.is_set():
            os.link(log_path, aside)            # the real log keeps a second name
            os.symlink(target, link_tmp)
            os.replace(link_tmp, log_path)      # the link takes its place
            time.sleep(0.002)
            os.replace(aside, log_path)         # and the real log comes back
            swaps[0] += 1
            time.sleep(0.002)

    t = threading.Thread(target=swapper)
    t.start()
    acked, refused = [], 0
    try:
        deadline = time.monotonic() + 4
        n = 0
        while time.monotonic() < deadline:
            n += 1
            body, err = call(e, "remember", {"fact": f"fact number {n}", "provenance": "t"}, remote)
            if err:
                refused += 1
                assert str(tmp_path) not in json.dumps(body), body
            else:
                acked.append(f"fact number {n}")
    finally:
        stop.set()
        t.join()
    assert swaps[0] > 50 and refused and acked, (swaps[0], refused, len(acked))
    assert _snapshot(target) == before
    assert not os.path.islink(log_path)
    held = {json.loads(line).get("fact") for line in log_path.read_text().splitlines() if line.strip()}
    assert set(acked) <= held, set(acked) - held
