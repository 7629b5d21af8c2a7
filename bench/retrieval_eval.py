"""Retrieval evaluation: does recall find what it was told?

    python bench/retrieval_eval.py [--smoke] [--mode keyword|hybrid|both] [--no-pages]
                                   [--set ours|hard-tune|hard-report|all] [--no-baselines]
                                   [--provenance session|turn|both]

Builds a brain in a temp BRAIN_HOME, remembers every turn of the
conversational memory set (`bench/data/conversations.md`) as one fact through
the real MCP `remember` tool over `brain serve`, then asks the questions of
`bench/data/questions.tsv` through `recall {query}` and scores the facts it
returns against each question's evidence turns: R@1, R@5, R@10 (share of the
evidence in the top k) and MRR. Questions with no answer in the set score
`no_answer_empty`: the share for which recall returned no facts at all.
Page figures come from `bench/eval_pages.py` when it is present.

Beside brain's figures, the textbook baselines of `eval_baselines.py`
(BM25 alone, MiniLM alone, their RRF, and RRF over turns with their
neighbours) are computed in the same run on the same turns and questions,
with the same metrics: a ranking change counts as a gain over them, not as
an absolute number. `--set` picks the conversations: `ours` (the set above,
written by the project), `hard-tune` and `hard-report` (`bench/data/hard/`:
long, messy conversations whose questions were written by someone who saw
only the conversations; tune on the first, report the second, never the
other way round).

`--provenance` is how each turn is remembered: `session` (the default) gives
every turn of a session one provenance ("conversation d1, session 2,
2024-01-20") and no session_id; `turn` gives each turn its own provenance
("conversation d1, session 2, 2024-01-20, turn 5") and the session's key as
`session_id`, as agents that remember turn by turn do (their figures are
reported as mode `keyword/turn`, `hybrid/turn`); `both` runs the two.

Prints one JSON line per (set, mode) and then a table. `--smoke` asks a
slice of the questions (the whole set is still remembered).

`--calibrate` chooses the vector floor of `daemon/stores/fact_ranking.py` (the
cosine a fact reached only by the vector arm must clear): it embeds every
turn and question with the bundled model and prints, per candidate floor,
the share of evidence turns at or above it (kept answers) and the share of
unanswerable questions whose nearest turn is below it (no filler); the floor
is the one maximising their sum (Youden's J).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_common import TempBrain, call, loadavg, rank_metrics  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SMOKE_DIALOGUES = ("d1", "d3", "d6", "h1", "h3")
_TURN = re.compile(r"^(\d+) ([^:]+): (.+)$")
_DIALOGUE = re.compile(r"^# ([a-z]+\d+) ")
# name -> (conversations, questions)
SETS = {
    "ours": (DATA / "conversations.md", DATA / "questions.tsv"),
    "hard-tune": (DATA / "hard" / "conv_a.md", DATA / "hard" / "questions_a.tsv"),
    "hard-report": (DATA / "hard" / "conv_b.md", DATA / "hard" / "questions_b.tsv"),
}


def load_turns(path: Path = DATA / "conversations.md") -> list[dict]:
    """Every turn: {id, dialogue, session, date, speaker, text}."""
    turns, dialogue, session, date = [], None, None, None
    for line in path.read_text().splitlines():
        if m := _DIALOGUE.match(line):
            dialogue, session = m.group(1), None
        elif line.startswith("## "):
            session, date = line[3:].split()
        elif dialogue and session and (m := _TURN.match(line)):
            turns.append({"id": f"{dialogue}.{session}.{m.group(1)}", "dialogue": dialogue, "session": session,
                          "session_key": f"{dialogue}.{session}", "date": date, "speaker": m.group(2),
                          "text": m.group(3)})
    return turns


def load_questions(path: Path = DATA / "questions.tsv") -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        evidence, kind, question = line.split("\t")
        ev = [] if evidence.strip() == "-" else evidence.split()
        out.append({"evidence": ev, "type": kind, "question": question})
    return out


def fact_args(turn: dict, per_turn: bool = False) -> dict:
    """How an agent would remember one turn: who said it, and where and when it was said; per turn,
    with the turn's own provenance and the conversation's session as its session_id."""
    where = f"conversation {turn['dialogue']}, session {turn['session']}, {turn['date']}"
    if not per_turn:
        return {"fact": f"{turn['speaker']}: {turn['text']}", "provenance": where}
    return {"fact": f"{turn['speaker']}: {turn['text']}", "provenance": f"{where}, turn {turn['id'].split('.')[-1]}",
            "session_id": turn["session_key"]}


def smoke_slice(questions: list[dict]) -> list[dict]:
    keep = [q for q in questions if q["evidence"] and q["evidence"][0].split(".")[0] in SMOKE_DIALOGUES]
    return keep + [q for q in questions if not q["evidence"]][:4]


def score(questions: list[dict], ranked_per_q: list[list[str]], prefix: str = "conversational") -> dict:
    """R@k and MRR overall and per question type; the share of no-answer questions left empty."""
    runs, per_type, empty_none = [], {}, []
    for q, ranked in zip(questions, ranked_per_q):
        if not q["evidence"]:
            empty_none.append(not ranked)
            continue
        pair = (ranked[:10], set(q["evidence"]))
        runs.append(pair)
        per_type.setdefault(q["type"], []).append(pair)
    out = {prefix: rank_metrics(runs)}
    for kind, pairs in sorted(per_type.items()):
        out[f"{prefix}/{kind}"] = rank_metrics(pairs)
    if empty_none:
        out[prefix]["no_answer_empty"] = round(sum(empty_none) / len(empty_none), 3)
        out[prefix]["no_answer_n"] = len(empty_none)
    return out


def baselines(turns: list[dict], questions: list[dict], prefix: str) -> dict[str, dict]:
    """The textbook rankings of eval_baselines.py on the same turns and questions, scored the same way."""
    from eval_baselines import rank_all, with_neighbours

    asked = [q for q in questions if q["evidence"]]
    texts = [fact_args(t)["fact"] for t in turns]
    ranked = rank_all([t["id"] for t in turns], texts, [q["question"] for q in asked],
                      neighbour_texts=with_neighbours(turns, lambda t: fact_args(t)["fact"]))
    return {name: score(asked, lists, prefix) for name, lists in ranked.items()}


async def _run_conversations(brain: TempBrain, turns: list[dict], questions: list[dict], per_turn: bool) -> dict:
    async with brain.session() as s:
        by_fact: dict[str, str] = {}
        for t in turns:
            body = await call(s, "remember", fact_args(t, per_turn))
            by_fact[body["id"]] = t["id"]
        ranked_per_q, lat = [], []
        for q in questions:
            t0 = time.perf_counter()
            body = await call(s, "recall", {"query": q["question"], "limit": 10})
            lat.append((time.perf_counter() - t0) * 1000)
            ranked_per_q.append([by_fact.get(f["fact_id"], "?") for f in body["facts"]])
    return ranked_per_q, lat


def load_set(name: str, smoke: bool) -> tuple[list[dict], list[dict]]:
    conv, qs = SETS[name]
    turns, questions = load_turns(conv), load_questions(qs)
    if smoke:
        questions = smoke_slice(questions)
    return turns, questions


def set_prefix(name: str) -> str:
    return "conversational" if name == "ours" else f"conv-{name}"


def conversational(keyword_only: bool, smoke: bool, name: str = "ours", per_turn: bool = False) -> dict:
    turns, questions = load_set(name, smoke)
    with tempfile.TemporaryDirectory(prefix="eval-vault-") as vault:
        with TempBrain(Path(vault), embeddings=not keyword_only) as brain:
            brain.wait_ready()
            ranked_per_q, lat = anyio.run(_run_conversations, brain, turns, questions, per_turn)
    prefix = set_prefix(name)
    out = score(questions, ranked_per_q, prefix)
    lat.sort()
    out[prefix]["recall_p50_ms"] = round(lat[len(lat) // 2], 1)
    return out


def page_figures(keyword_only: bool) -> dict:
    try:
        import eval_pages  # the page question sets, when present
    except ImportError:
        return {}
    return eval_pages.run(keyword_only=keyword_only)


def evaluate(modes: list[str], smoke: bool, pages: bool = True, sets: tuple[str, ...] = ("ours",),
             with_baselines: bool = True, provenances: tuple[str, ...] = ("session",)) -> list[dict]:
    lines = []

    def emit(figures: dict, mode: str, started: float) -> None:
        for name, metrics in figures.items():
            line = {"set": name, "mode": mode, "smoke": smoke, **metrics,
                    "seconds": round(time.monotonic() - started, 1), "loadavg": loadavg()}
            lines.append(line)
            print(json.dumps(line), flush=True)

    for set_name in sets:
        if with_baselines:
            started = time.monotonic()
            turns, questions = load_set(set_name, smoke)
            for base, figures in baselines(turns, questions, set_prefix(set_name)).items():
                emit(figures, base, started)
        for mode in modes:
            for provenance in provenances:
                started = time.monotonic()
                per_turn = provenance == "turn"
                emit(conversational(mode == "keyword", smoke, set_name, per_turn),
                     f"{mode}/turn" if per_turn else mode, started)
    if pages:
        for mode in modes:
            started = time.monotonic()
            emit(page_figures(mode == "keyword"), mode, started)
    return lines


def table(lines: list[dict]) -> str:
    head = f"{'set':32} {'mode':12} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'n':>5}"
    rows = [head, "-" * len(head)]
    for ln in lines:
        rows.append(f"{ln['set']:32} {ln['mode']:12} {ln['R@1']:6.3f} {ln['R@5']:6.3f} {ln['R@10']:6.3f} "
                    f"{ln['MRR']:6.3f} {ln['n']:5d}")
        if "no_answer_empty" in ln:
            rows.append(f"{'  no-answer questions, no facts':32} {ln['mode']:12} {ln['no_answer_empty']:6.3f}"
                        f" {'':20} {ln['no_answer_n']:5d}")
    return "\n".join(rows)


def calibrate() -> dict:
    """The vector floor that best separates evidence turns from the nearest turn of an unanswerable question."""
    import numpy as np
    from brain.indexer.embeddings.embedder import MiniLMEmbedder

    turns = load_turns()
    questions = load_questions()
    emb = MiniLMEmbedder()
    facts = emb.embed([fact_args(t)["fact"] for t in turns])
    at = {t["id"]: i for i, t in enumerate(turns)}
    qv = emb.embed([q["question"] for q in questions])
    kept, empty = [], []
    for q, v in zip(questions, qv):
        sims = facts @ v
        if q["evidence"]:
            kept.extend(float(sims[at[e]]) for e in q["evidence"])
        else:
            empty.append(float(sims.max()))
    kept_a, empty_a = np.array(kept), np.array(empty)
    best = None
    for floor in np.arange(0.20, 0.80, 0.01):
        tpr = float((kept_a >= floor).mean())
        tnr = float((empty_a < floor).mean())
        line = {"floor": round(float(floor), 2), "evidence_kept": round(tpr, 3), "no_answer_dropped": round(tnr, 3)}
        print(json.dumps(line))
        if best is None or tpr + tnr > best["evidence_kept"] + best["no_answer_dropped"]:
            best = line
    print(json.dumps({"chosen": best}))
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="a small slice of the questions")
    ap.add_argument("--mode", choices=("keyword", "hybrid", "both"), default="both")
    ap.add_argument("--no-pages", action="store_true", help="skip the page question sets")
    ap.add_argument("--calibrate", action="store_true", help="choose the facts vector floor, then stop")
    ap.add_argument("--set", choices=(*SETS, "all"), default="ours",
                    help="which conversations (hard-tune to tune on, hard-report to report; default ours)")
    ap.add_argument("--no-baselines", action="store_true", help="skip the textbook baselines")
    ap.add_argument("--provenance", choices=("session", "turn", "both"), default="session",
                    help="one provenance per session (default), or per turn with the session as session_id")
    a = ap.parse_args(argv)
    if a.calibrate:
        calibrate()
        return 0
    modes = ["keyword", "hybrid"] if a.mode == "both" else [a.mode]
    sets = tuple(SETS) if a.set == "all" else (a.set,)
    provenances = ("session", "turn") if a.provenance == "both" else (a.provenance,)
    lines = evaluate(modes, a.smoke, pages=not a.no_pages, sets=sets, with_baselines=not a.no_baselines,
                     provenances=provenances)
    print(table(lines), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
