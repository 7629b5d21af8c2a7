"""Supersession never merges facts that differ in a number, a date or a name
(docs/protocol.md §3.2, "Specifics")."""

from __future__ import annotations

from brain.indexer.vault.visibility import Viewer

import pytest

from conftest import call
from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)

from brain.daemon.stores.fact_specifics import differ_in_specifics

# (first, second): two facts, however alike the sentences (cosine 0.97–0.998 with the bundled model)
DIFFERENT = [
    ("Priya has a dentist appointment on 2026-12-10", "Priya has a dentist appointment on 2026-12-17"),
    ("Priya has a dentist appointment on Monday", "Priya has a dentist appointment on Tuesday"),
    ("The invoice for Acme came to 4,200 euros", "The invoice for Acme came to 4,800 euros"),
    ("Priya's flight to Berlin leaves at 9:15", "Priya's flight to Berlin leaves at 11:40"),
    ("Priya has three children", "Priya has four children"),
]
# (first, second): the second restates or refines the first, and supersedes it
SAME_CLAIM = [
    ("Priya prefers morning meetings", "Priya prefers meetings in the morning"),
    ("Priya works at Acme Robotics in Berlin", "Priya works at Acme Robotics, Berlin"),
    ("Priya is allergic to peanuts", "Priya is allergic to peanuts and tree nuts"),
    ("Priya's team ships on Thursdays", "Priya's team now ships on Thursdays"),
]


@pytest.mark.model
@pytest.mark.parametrize("first,second", DIFFERENT + SAME_CLAIM)
def test_supersession_keeps_facts_that_differ_in_a_specific(model_engine, local, first, second):
    args = {"provenance": "t", "entity": "people/priya"}
    old, _ = call(model_engine, "remember", {**args, "fact": first}, local)
    new, err = call(model_engine, "remember", {**args, "fact": second}, local)
    assert not err
    if (first, second) in DIFFERENT:
        assert new["status"] == "inserted", new
        assert model_engine.facts.get(int(old["id"]), Viewer.owner())["expired_at"] is None
    else:
        assert new["status"] == "superseded", new
        assert model_engine.facts.get(int(old["id"]), Viewer.owner())["superseded_by"] == int(new["id"])


@pytest.mark.model
def test_a_different_kind_with_another_date_is_not_answered_duplicate(model_engine, local):
    args = {"provenance": "t", "entity": "people/priya"}
    call(model_engine, "remember", {**args, "fact": "Priya has a dentist appointment on 2026-12-10",
                                    "kind": "event"}, local)
    new, err = call(model_engine, "remember", {**args, "fact": "Priya has a dentist appointment on 2026-12-17"},
                    local)
    assert not err and new["status"] == "inserted", new


def test_specifics_are_numbers_dates_and_names():
    assert differ_in_specifics("Priya is meeting Tom on Friday", "Priya is meeting Sam on Friday")
    assert differ_in_specifics("Priya's dentist is Dr. Okafor", "Priya's dentist is Dr. okoro")
    assert differ_in_specifics("rent is due in march", "rent is due in june")
    assert differ_in_specifics("Priya's budget for Q3 is 50k", "Priya's budget for Q4 is 50k")
    assert differ_in_specifics("Priya moved here yesterday", "Priya moved here today")
    assert not differ_in_specifics("Priya likes green tea", "priya likes  green tea!")
    assert not differ_in_specifics("Priya prefers tea", "Priya now prefers tea")
