"""recall's facts ranking on conversations (docs/architecture.md, "Facts ranking"): a name in
every turn does not win on its own, nor does a short turn on the one rare word it shares, a
turn that points at its subject (one or two turns back) rises with the turn that names it, and
a question naming a day relative to today meets the facts of that day."""

from __future__ import annotations

import datetime as dt

from conftest import call

from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)

SMALL_TALK = ["lol", "haha yes", "ok cool", "oh nice!", "same tbh", "wait what", "ugh I know", "fair enough",
              "no way", "brilliant", "how was it?", "sounds fun", "good luck!", "ha, classic", "true"]


def remember(engine, caller, fact, provenance="conversation c1, session 1, 2024-03-02", session_id=None):
    args = {"fact": fact, "provenance": provenance, **({"session_id": session_id} if session_id else {})}
    body, err = call(engine, "remember", args, caller)
    assert not err, body
    return body["id"]


def recall_ids(engine, caller, query, limit=10):
    body, err = call(engine, "recall", {"query": query, "limit": limit}, caller)
    assert not err, body
    return [f["fact_id"] for f in body["facts"]]


def chat(engine, caller, speaker, lines, provenance="conversation c1, session 1, 2024-03-02"):
    return [remember(engine, caller, f"{speaker}: {line}", provenance) for line in lines]


def test_a_name_in_every_turn_does_not_win_on_its_own(model_engine, local):
    # both speakers' names open every turn: "Caroline" is in half the facts
    for i, line in enumerate(SMALL_TALK * 2):
        remember(model_engine, local, f"{'Caroline' if i % 2 else 'Melanie'}: {line}")
    answer = remember(model_engine, local, "Caroline: I'm single again since the breakup, honestly it feels good")
    for i, line in enumerate(SMALL_TALK):
        remember(model_engine, local, f"Caroline: {line}")
    got = recall_ids(model_engine, local, "What is Caroline's relationship status?")
    assert got[0] == answer, got


def test_a_turn_pointing_at_its_subject_rises_with_the_turn_before(model_engine, local):
    engine = model_engine
    chat(engine, local, "Tom", SMALL_TALK[:6])
    named = remember(engine, local, "Nadia: I bought a vintage typewriter at the flea market")
    pointer = remember(engine, local, "Tom: look at this beauty!")  # no word of the question
    chat(engine, local, "Tom", SMALL_TALK[6:12])
    # the same words saved just after, but in another conversation: not a neighbour
    other = remember(engine, local, "Sam: look at this!", provenance="conversation c2, session 4, 2024-05-11")
    got = recall_ids(engine, local, "What did Nadia find at the flea market?")
    assert got[:2] == [named, pointer], got  # the turn's own text first, its pointer right after
    assert other not in got


def test_turns_of_one_session_id_are_neighbours_whatever_their_provenance(model_engine, local):
    # an agent remembering turn by turn: each turn its own provenance, the conversation its session_id
    engine = model_engine

    def turn(n, fact, session_id="chat-7"):
        return remember(engine, local, fact, provenance=f"chat turn {n}, 2024-03-02 10:{n:02d}", session_id=session_id)

    for n, line in enumerate(SMALL_TALK[:6]):
        turn(n, f"Tom: {line}")
    named = turn(6, "Nadia: I bought a vintage typewriter at the flea market")
    pointer = turn(7, "Tom: look at this beauty!")  # no word of the question
    for n, line in enumerate(SMALL_TALK[6:12], 8):
        turn(n, f"Tom: {line}")
    # the same provenance as the named turn, but another conversation: not its neighbour
    other = turn(6, "Sam: look at this!", session_id="chat-8")
    got = recall_ids(engine, local, "What did Nadia find at the flea market?")
    assert got[:2] == [named, pointer], got
    assert other not in got


def test_a_neighbour_outside_the_callers_scope_lends_nothing(model_engine, local, remote):
    engine = model_engine
    body, err = call(engine, "remember", {"fact": "Nadia: I bought a vintage typewriter at the flea market",
                                          "provenance": "conversation c1, session 1, 2024-03-02",
                                          "visibility": "private"}, local)
    assert not err, body
    pointer = remember(engine, local, "Tom: look at this beauty!")
    question = "What did Nadia find at the flea market?"
    assert pointer in recall_ids(engine, local, question)
    assert recall_ids(engine, remote, question) == []  # the private turn neither shows nor lends


def test_a_question_about_last_saturday_meets_that_days_facts(engine, local):
    today = dt.datetime.now(dt.timezone.utc).date()
    saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7 or 7)
    earlier = saturday - dt.timedelta(days=14)  # also a Saturday, saved later: wins a tie
    that_day = remember(engine, local, "Went climbing with Priya", provenance=f"chat {saturday.isoformat()}")
    remember(engine, local, "Went climbing with Jonas", provenance=f"chat {earlier.isoformat()}")
    assert recall_ids(engine, local, "who did I go climbing with last Saturday?")[0] == that_day
    three_ago = today - dt.timedelta(days=3)
    swim = remember(engine, local, "Went swimming at the lido", provenance=f"chat {three_ago.isoformat()}")
    remember(engine, local, "Went swimming in the lake", provenance=f"chat {(today - dt.timedelta(days=9)).isoformat()}")
    assert recall_ids(engine, local, "where did I swim 3 days ago?")[0] == swim


def test_the_answer_two_turns_after_its_subject_comes_with_it(model_engine, local):
    engine = model_engine
    chat(engine, local, "Tom", SMALL_TALK[:6])
    named = remember(engine, local, "Nadia: my niece has officially renamed the cat")
    remember(engine, local, "Tom: what? to what")
    answer = remember(engine, local, "Nadia: Mango")  # no word of the question, two turns on
    chat(engine, local, "Tom", SMALL_TALK[6:12])
    got = recall_ids(engine, local, "What new name did the cat get?")
    assert got[0] == named, got
    assert answer in got, got  # lifted by the turn two before it, which names its subject


def test_a_turn_that_says_little_does_not_win_on_the_name_it_shares(model_engine, local):
    # "how's Sam doing" holds the question's one rare word and little else: short, it would win
    # BM25 and the cosine over the turn that answers
    engine = model_engine
    for i, line in enumerate(SMALL_TALK):
        remember(engine, local, f"{'Tom' if i % 2 else 'Nadia'}: {line}")
    for i, line in enumerate(["how's Sam doing", "and Sam?", "classic Sam"]):
        remember(engine, local, f"Tom: {line}")
        remember(engine, local, f"Nadia: {SMALL_TALK[i]}")
    answer = remember(engine, local, "Nadia: Sam mixes sound for bands, live gigs mostly")
    chat(engine, local, "Nadia", SMALL_TALK[:5])
    assert recall_ids(engine, local, "What does Sam do for a living?")[0] == answer


def test_last_saturday_in_a_turn_is_the_saturday_before_it_was_said(engine, local):
    # said on Wednesday 2024-03-06: "last Saturday" is 2024-03-02, a date the turn never spells
    said = remember(engine, local, "Tom: climbing last Saturday with Priya",
                    provenance="conversation c1, session 3, 2024-03-06")
    remember(engine, local, "Tom: climbing next Saturday with Jonas",
             provenance="conversation c1, session 4, 2024-03-20")
    assert recall_ids(engine, local, "who was Tom climbing with on 2024-03-02?")[0] == said
