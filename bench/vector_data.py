"""The texts and vectors the vector benches run on (bench_vectors.py, bench_embedder.py).

Generated sentences about people, organisations and topics (`sentence`,
`chunk_text`); real English paragraphs and their MiniLM vectors, cached on
disk (`text_pool`, `real_vectors`); more vectors near the real ones
(`widen`); and a stand-in embedder that fills a big index with real vectors
of other text in seconds (`PoolEmbedder`).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from corpus import CITIES, FIRST, LAST, TOPICS

ORGS = ["Acme Robotics", "Northwind Labs", "Bluefin Capital", "Helios Energy", "Quartz Health", "Orbital Ventures",
        "Riverside Clinic", "Atlas Logistics", "Cobalt Security", "Juniper Foods", "Lumen Analytics", "Nimbus Cloud"]
TEMPLATES = [
    "{p} met {q} in {c} to discuss {t}.",
    "{p} thinks {t} is the biggest risk for {o} this year.",
    "{o} agreed to revisit {t} after the last review with {p}.",
    "{p} moved from {o} to {o2} to lead work on {t}.",
    "We owe {p} a written summary of {t} by Friday.",
    "{q} raised concerns that {t} slipped two weeks because of staffing.",
    "{o} is considering an investment from {o2} tied to {t}.",
    "At the offsite in {c}, {p} presented a new proposal for {t}.",
    "{p} prefers async updates about {t} over long meetings.",
    "{o2} signed a pilot with {o} covering {t} in {c}.",
    "The notes from {p}'s call say {t} needs another owner.",
    "{q} asked whether {o} could share its numbers on {t}.",
]


def sentence(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(
        p=f"{rng.choice(FIRST)} {rng.choice(LAST)}", q=f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        o=rng.choice(ORGS), o2=rng.choice(ORGS), t=rng.choice(TOPICS), c=rng.choice(CITIES))


def chunk_text(rng: random.Random) -> str:
    """About 100 tokens, like a short section of a note."""
    return " ".join(sentence(rng) for _ in range(rng.randint(4, 7)))


def text_pool(n: int, seed: int) -> list[str]:
    """n distinct paragraphs of real English prose: docstrings of the installed packages."""
    import ast
    import re
    import sysconfig

    pieces: dict[str, None] = {}
    for path in sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node) or ""
            for para in re.split(r"\n\s*\n", doc):
                para = " ".join(para.split())
                if 60 <= len(para) <= 600 and sum(c.isalpha() or c == " " for c in para) > 0.85 * len(para):
                    pieces[para] = None
        if len(pieces) >= n * 2:
            break
    out = list(pieces)
    random.Random(seed).shuffle(out)
    return out[:n]


def real_vectors(model, n: int, cache: Path | None) -> np.ndarray:
    """MiniLM vectors of n real paragraphs (cached on disk: embedding 20K takes minutes)."""
    if cache is not None and cache.exists():
        data = np.load(cache)
        if len(data) >= n:
            return data[:n]
    texts = text_pool(n, seed=5)
    data = np.vstack([model.embed(texts[i:i + 32]) for i in range(0, len(texts), 32)])
    if cache is not None:
        np.save(cache, data)
    return data


def widen(base: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n unit vectors near the real ones: mixes of two real vectors plus a little noise."""
    rng = np.random.default_rng(seed)
    a = base[rng.integers(0, len(base), n)]
    b = base[rng.integers(0, len(base), n)]
    w = rng.uniform(0.55, 1.0, (n, 1)).astype(np.float32)
    out = w * a + (1 - w) * b + rng.normal(0, 0.02, a.shape).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


class PoolEmbedder:
    """Bench-only stand-in for filling a 20K-page index quickly: each text gets a
    real MiniLM vector of *other* text (picked by the text's hash) mixed with a
    second one. Same model id as the real model, so the daemon later trusts the
    cache. Query embeddings in the timings always come from the real model."""

    def __init__(self, model_id: str, pool: np.ndarray):
        self.model_id, self.dim, self.pool = model_id, pool.shape[1], pool

    def embed(self, texts):
        import zlib

        out = []
        for t in texts:
            h = zlib.crc32(t.encode())
            a, b = self.pool[h % len(self.pool)], self.pool[(h // 7919) % len(self.pool)]
            v = 0.8 * a + 0.2 * b
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)
