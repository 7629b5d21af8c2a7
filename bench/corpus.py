"""A deterministic generator of realistic vaults for every benchmark.

    python bench/corpus.py OUT_DIR --pages 20000 [--seed 7]

Same seed and size → byte-identical pages and facts. A vault holds people
(40%), companies (15%), projects (15%), meetings (20%) and notes (10%), with
frontmatter (title, aliases, type, tags, typed wikilink fields), wikilinks
and Markdown links between them, inline `key:: [[T]]` fields, `## Timeline`
sections of dated bullets, `### YYYY-MM-DD` meeting headings, a few private
pages, and `<vault>/.brain/facts.jsonl` in the facts log's format (about one
fact per two pages). Sizes: 1K, 20K, 200K pages (any number works).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from pathlib import Path

from brain.indexer.vault.timestamps import iso
from brain.indexer.vault.slugs import slugify as _slug

FIRST = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jia", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara",
         "Zoe", "Arjun", "Bea", "Cyrus", "Dmitri", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jonas", "Keiko"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Silva", "Kowalski", "Mehta", "Brennan",
        "Castillo", "Fischer", "Ivanova", "Nakamura", "Osei", "Petrov", "Rahman", "Schulz", "Varga", "Wright",
        "Adeyemi", "Bergstrom", "Costa", "Dubois", "Eriksen", "Ferreira", "Gupta", "Horvat", "Ito", "Jensen"]
ORG_A = ["Acme", "Northwind", "Bluefin", "Helios", "Quartz", "Orbital", "Riverside", "Atlas", "Cobalt", "Juniper",
         "Lumen", "Nimbus", "Granite", "Saffron", "Tidal", "Vertex", "Willow", "Zephyr", "Beacon", "Harbor"]
ORG_B = ["Robotics", "Labs", "Capital", "Energy", "Health", "Ventures", "Logistics", "Security", "Foods",
         "Analytics", "Cloud", "Systems", "Materials", "Bio", "Media", "Works"]
PROJ_A = ["Phoenix", "Falcon", "Aurora", "Basalt", "Cascade", "Delta", "Ember", "Fjord", "Glacier", "Halo",
          "Iris", "Jade", "Kestrel", "Lotus", "Mosaic", "Nova", "Onyx", "Prism", "Quasar", "Raven"]
PROJ_B = ["migration", "launch", "redesign", "pilot", "audit", "rollout", "study", "platform", "integration", "v2"]
TOPICS = ["the pricing model", "the hiring plan", "the data migration", "customer churn", "the Q3 roadmap",
          "the security audit", "the onboarding flow", "vendor contracts", "the board deck", "latency regressions",
          "the mobile launch", "warehouse automation", "the grant proposal", "on-call rotations", "the API redesign",
          "quarterly budgets", "the clinical trial", "supply shortages", "the partnership terms", "model evaluation"]
CITIES = ["Berlin", "Lagos", "Osaka", "Lisbon", "Toronto", "Nairobi", "Austin", "Seoul", "Oslo", "Bogotá"]
ROLES = ["engineer", "designer", "founder", "investor", "product manager", "researcher", "sales lead", "CFO", "advisor"]
SOURCES = ["Crunchbase", "LinkedIn", "email", "meeting notes", "Slack", "TechCrunch", "call"]
SENTENCES = [
    "{p} met {q} in {c} to discuss {t}.",
    "{p} thinks {t} is the biggest risk for {o} this year.",
    "{o} agreed to revisit {t} after the last review with {p}.",
    "We owe {p} a written summary of {t} by Friday.",
    "{q} raised concerns that {t} slipped two weeks because of staffing.",
    "{o} is considering an investment tied to {t}.",
    "At the offsite in {c}, {p} presented a new proposal for {t}.",
    "{p} prefers async updates about {t} over long meetings.",
    "The notes from {c} mention ticket ADR-{n:03d} and the file src/{w}.py.",
    "Follow up with {q} about {t} and the numbers in the appendix.",
]
KINDS = ["fact", "fact", "preference", "commitment", "belief", "event"]
BASE_DAY = _dt.date(2024, 1, 1)
BASE_TS = _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc)


class _Names:
    def __init__(self, rng: random.Random, n_people: int, n_orgs: int, n_projects: int):
        self.people = self._unique(rng, n_people, lambda: f"{rng.choice(FIRST)} {rng.choice(LAST)}")
        self.orgs = self._unique(rng, n_orgs, lambda: f"{rng.choice(ORG_A)} {rng.choice(ORG_B)}")
        self.projects = self._unique(rng, n_projects, lambda: f"{rng.choice(PROJ_A)} {rng.choice(PROJ_B)}")

    @staticmethod
    def _unique(rng, n, make) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for _ in range(n):
            base = make()
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.append(base if k == 0 else f"{base} {k + 1}")
        return out


def _date(rng: random.Random) -> str:
    return (BASE_DAY + _dt.timedelta(days=rng.randrange(0, 700))).isoformat()


def _sentence(rng, names: _Names) -> str:
    return rng.choice(SENTENCES).format(
        p=f"[[{rng.choice(names.people)}]]", q=rng.choice(names.people), o=f"[[{rng.choice(names.orgs)}]]",
        c=rng.choice(CITIES), t=rng.choice(TOPICS), n=rng.randrange(1000), w=rng.choice(["main", "sync", "api", "db"]))


def _paragraphs(rng, names, n: int) -> str:
    return "\n\n".join(" ".join(_sentence(rng, names) for _ in range(rng.randint(2, 5))) for _ in range(n))


def _timeline(rng, n: int) -> str:
    lines = []
    for _ in range(n):
        if rng.random() < 0.5:
            lines.append(f"- **{_date(rng)}** | {rng.choice(SOURCES)} — {rng.choice(TOPICS).capitalize()} came up")
        else:
            lines.append(f"- {_date(rng)}: talked about {rng.choice(TOPICS)}")
    return "## Timeline\n" + "\n".join(sorted(lines, reverse=True)) + "\n"


def _frontmatter(fields: dict) -> str:
    out = ["---"]
    for k, v in fields.items():
        if isinstance(v, list):
            out.append(f"{k}: [{', '.join(json.dumps(x, ensure_ascii=False) for x in v)}]")
        else:
            out.append(f"{k}: {json.dumps(v, ensure_ascii=False)}")
    out.append("---")
    return "\n".join(out) + "\n"


def _person(rng, names, name: str) -> str:
    first, last = name.split(" ")[0], name.split(" ")[1]
    org = rng.choice(names.orgs)
    fields = {"title": name, "type": "person", "aliases": [first, f"{first[0]}{last[0]}".upper() + f" {last}"],
              "tags": [rng.choice(["friend", "colleague", "investor", "customer"]), "people"],
              "works_at": f"[[{org}]]"}
    if rng.random() < 0.02:
        fields["visibility"] = "private"
    role = rng.choice(ROLES)
    body = (f"# {name}\n\n{name} is {'an' if role[0] in 'aeiou' else 'a'} {role} at [[{org}]] based in {rng.choice(CITIES)}. "
            f"{_paragraphs(rng, names, rng.randint(1, 3))}\n\n"
            f"reports_to:: [[{rng.choice(names.people)}]]\n\n{_timeline(rng, rng.randint(2, 7))}")
    return _frontmatter(fields) + body


def _company(rng, names, name: str) -> str:
    fields = {"title": name, "type": "company", "aliases": [name.split(" ")[0], name.upper().replace(" ", "")[:6]],
              "tags": ["company"], "invested_in": [f"[[{rng.choice(names.orgs)}]]"]}
    body = (f"# {name}\n\n{name} builds products around {rng.choice(TOPICS)}. "
            f"{_paragraphs(rng, names, rng.randint(2, 4))}\n\n"
            f"## People\n" + "\n".join(f"- [[{rng.choice(names.people)}]]" for _ in range(rng.randint(2, 6)))
            + f"\n\n{_timeline(rng, rng.randint(3, 8))}")
    return _frontmatter(fields) + body


def _project(rng, names, name: str) -> str:
    fields = {"title": name, "type": "project", "aliases": [name.split(" ")[0] + " project"], "tags": ["project"],
              "owner": f"[[{rng.choice(names.people)}]]"}
    body = (f"# {name}\n\nThe {name} project at [[{rng.choice(names.orgs)}]] is about {rng.choice(TOPICS)}.\n\n"
            f"## Status\n{_paragraphs(rng, names, 2)}\n\nsponsor:: [[{rng.choice(names.people)}]]\n\n"
            f"## Risks\n{_paragraphs(rng, names, 1)}\n\n{_timeline(rng, rng.randint(2, 5))}")
    return _frontmatter(fields) + body


def _meeting(rng, names, i: int) -> tuple[str, str]:
    day = _date(rng)
    topic = rng.choice(TOPICS)
    rel = f"meetings/{day[:4]}/{day}-{_slug(topic)}-{i}.md"
    people = rng.sample(names.people, 3)
    body = (f"# {topic.capitalize()} ({day})\n\nAttendees: " + ", ".join(f"[[{p}]]" for p in people) + "\n\n"
            f"### {day} — {topic.capitalize()}\n{_paragraphs(rng, names, 2)}\n\n"
            f"Related project: [{rng.choice(names.projects)}](../../projects/{_slug(rng.choice(names.projects))}.md)\n")
    return rel, _frontmatter({"type": "meeting", "tags": ["meeting"]}) + body


def _note(rng, names, i: int) -> tuple[str, str]:
    topic = rng.choice(TOPICS)
    rel = f"notes/{_slug(topic)}-{i}.md"
    body = (f"# Notes on {topic}\n\n{_paragraphs(rng, names, rng.randint(2, 5))}\n\n"
            "```python\n# [[not a link]] inside code\nprint('hello')\n```\n\n"
            "| who | what |\n|---|---|\n| " + rng.choice(names.people) + " | " + topic + " |\n")
    return rel, body


def generate(out: Path, pages: int, seed: int = 7, facts_ratio: float = 0.5) -> dict:
    """Write a vault of `pages` pages (plus facts) into `out`; returns a summary with sample slugs."""
    out = Path(out)
    rng = random.Random(seed)
    n_people, n_orgs, n_proj, n_meet = int(pages * 0.40), int(pages * 0.15), int(pages * 0.15), int(pages * 0.20)
    n_notes = pages - n_people - n_orgs - n_proj - n_meet
    names = _Names(rng, n_people, n_orgs, n_proj)
    files: list[tuple[str, str]] = []
    files += [(f"people/{_slug(n)}.md", _person(rng, names, n)) for n in names.people]
    files += [(f"companies/{_slug(n)}.md", _company(rng, names, n)) for n in names.orgs]
    files += [(f"projects/{_slug(n)}.md", _project(rng, names, n)) for n in names.projects]
    files += [_meeting(rng, names, i) for i in range(n_meet)]
    files += [_note(rng, names, i) for i in range(n_notes)]
    made_dirs: set[Path] = set()
    for rel, text in files:
        path = out / rel
        if path.parent not in made_dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            made_dirs.add(path.parent)
        path.write_text(text, encoding="utf-8")
    n_facts = int(pages * facts_ratio)
    _write_facts(out, rng, names, n_facts)
    return {"pages": len(files), "facts": n_facts, "people": names.people[:50], "orgs": names.orgs[:50],
            "projects": names.projects[:50], "sample_slugs": [rel[:-3] for rel, _ in files[:: max(1, len(files) // 200)]]}


def _write_facts(out: Path, rng, names: _Names, n: int) -> None:
    """facts.jsonl exactly as the facts log writes it: one insert record per line."""
    path = out / ".brain" / "facts.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, n + 1):
            ts = BASE_TS + _dt.timedelta(minutes=7 * i)
            stamp = iso(ts)
            who = rng.choice(names.people)
            rec = {"op": "insert", "id": i, "ts": stamp, "fact": f"{who} {rng.choice(['likes', 'owns', 'is working on', 'worries about'])} {rng.choice(TOPICS)}",
                   "kind": rng.choice(KINDS), "entity_slug": f"people/{_slug(who)}",
                   "visibility": "private" if rng.random() < 0.05 else "world", "source": "bench corpus",
                   "source_session": None, "context": None, "confidence": 1.0, "notability": "medium",
                   "valid_from": stamp, "valid_until": None}
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ns = ap.parse_args()
    summary = generate(ns.out, ns.pages, ns.seed)
    print(json.dumps({"vault": str(ns.out), "pages": summary["pages"], "facts": summary["facts"]}))


if __name__ == "__main__":
    main()
