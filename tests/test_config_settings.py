"""Settings are declared once (daemon/config.py SETTINGS): the defaults, the closed sets
of values, the ranges, `brain config set`'s checks and refusals, and the README's table
all come from the declarations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.daemon import config as config_mod

TESTS = Path(__file__).parent
README = (TESTS.parent / "README.md").read_text(encoding="utf-8")
# what `brain config set` made of typed values before the settings were declarations
GOLDEN = json.loads((TESTS / "golden" / "config" / "coerce.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: f"{c['key']}={c['typed']!r}")
def test_every_typed_value_is_taken_or_refused_as_before(case):
    if "value" in case:
        assert config_mod.coerce(case["key"], case["typed"]) == case["value"]
    else:
        with pytest.raises(ValueError) as e:
            config_mod.coerce(case["key"], case["typed"])
        assert str(e.value) == case["refused"]


def test_the_vault_setting_takes_an_existing_folder(tmp_path):
    assert config_mod.coerce("vault", f" {tmp_path} ") == str(tmp_path.resolve())


def test_one_declaration_per_setting_makes_every_table():
    decl = config_mod.SETTINGS
    assert list(config_mod.DEFAULTS) == list(decl)
    assert config_mod.CHOICES == {k: s.choices for k, s in decl.items() if s.choices}
    assert set(config_mod.INT_RANGES) == {k for k, s in decl.items() if isinstance(s.default, int)
                                          and not isinstance(s.default, bool)}
    for key, s in decl.items():
        assert s.key == key and s.kind in config_mod.PARSERS and s.help, key
        if s.default is not None and s.kind != "list":  # a default is itself a value `config set` takes
            typed = ("true" if s.default else "false") if isinstance(s.default, bool) else str(s.default)
            assert config_mod.coerce(key, typed) == s.default, key


def test_the_readme_table_is_made_from_the_declarations():
    table = config_mod.settings_table()
    assert table in README, "README.md's Settings table should read:\n" + table
    assert table.count("\n") == len(config_mod.SETTINGS) + 2
