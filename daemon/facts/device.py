"""This machine's device id for a vault, and what binds it to the machine and state folder that made it.

docs/architecture.md, "Two devices, one vault" and "A device id belongs to one
machine": the id lives in brain's state folder, outside the vault. Beside it,
`device.binding` records the machine (/etc/machine-id, or the host name) and
the state folder's real path and inode. A state folder copied to another
path or machine (a migration, a clone, a restore from backup) no longer
matches, and takes a new device id before it mints: two machines sharing
one id would mint the same ids for different facts.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
from collections.abc import Set as AbstractSet
from pathlib import Path

from ...indexer.vault.atomic_files import write_atomic
from .sources import slot_of

_DEVICE = re.compile(r"[0-9a-f]{16}")


def binding_file(device_file: Path) -> Path:
    return device_file.with_name(device_file.name + ".binding")  # `device.binding`


def this_machine() -> str:
    """What names this machine: its machine id when the system has one, else its host name."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            got = Path(path).read_text().strip()
        except OSError:
            continue
        if got:
            return got
    return socket.gethostname()


def binding_of(device: str, folder: Path, machine: str) -> dict:
    st = os.stat(folder)
    return {"device": device, "machine": machine, "folder": os.path.realpath(folder), "inode": st.st_ino}


def _bound(device_file: Path, device: str, machine: str) -> bool | None:
    """Whether the recorded binding is this machine and folder; None when none was recorded for `device`
    (an id an older brain made: it is bound now, as nothing tells a copy from the original)."""
    try:
        recorded = json.loads(binding_file(device_file).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.get("device") != device:
        return None
    return recorded == binding_of(device, device_file.parent, machine)


def _bind(device_file: Path, device: str, machine: str) -> None:
    data = json.dumps(binding_of(device, device_file.parent, machine), sort_keys=True) + "\n"
    write_atomic(binding_file(device_file), data.encode(), mode=0o600)


def device_id(device_file: Path, avoid_slots: AbstractSet[int] = frozenset(), renew: bool = False,
              machine: str | None = None) -> tuple[str, bool]:
    """(this machine's device id for a vault, whether it was just drawn because the old one was
    bound elsewhere).

    A new one is drawn when there is none, when `renew` (its slot turned out
    to be another device's), or when the state folder was copied from
    another path or machine.
    """
    machine = machine if machine is not None else this_machine()
    moved = False
    if not renew:
        try:
            got = device_file.read_text().strip()
        except FileNotFoundError:
            got = ""
        if _DEVICE.fullmatch(got):
            bound = _bound(device_file, got, machine)
            if bound is None:
                _bind(device_file, got, machine)
            if bound is not False:
                return got, False
            moved = True
    while True:
        new = secrets.token_hex(8)
        if slot_of(new) not in avoid_slots:
            break
    device_file.parent.mkdir(parents=True, exist_ok=True)
    # the binding names the new id only once the id file holds it; a crash between leaves an unbound id,
    # which the next start binds
    write_atomic(device_file, (new + "\n").encode(), mode=0o600)
    _bind(device_file, new, machine)
    return new, moved
