"""A lighter copy of the model for recall's queries: int8 weights, made from the export once.

A recall embeds one short question, and that embedding sits on the call's
critical path (docs/architecture.md, "On the hot path"). With the weights of
the matrix products and of the token table quantized to int8, one per output
channel (onnxruntime's dynamic quantization), a question of a dozen tokens
embeds in about 2 ms instead of 4.7 on one core of the project's 2-core
machine, with vectors close to the full model's: cosine 0.994 at the median
and 0.987 at the worst over the 165 questions of bench/data/hard/questions_a.tsv,
and 93 % of the ten nearest turns of conv_a.md the same (docs/architecture.md,
"The query model").

So it embeds what only ranks: a recall's query, compared against vectors the
full model made. It never makes a vector that is kept (chunks, facts), nor
the one a `remember` compares, where a cosine decides an answer (duplicate,
superseded).

The file is made in a child process (`python -m brain.indexer.embeddings.query_model
EXPORT_DIR`: the quantizer and the onnx library never stay in the daemon),
checked against the full model on the export's check texts (cosine at least
QUERY_MIN_COSINE), written beside the export under a temporary name and
renamed into place. When it cannot be made, queries use the full model.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from .onnx_export import CHECK_TEXTS, ExportCancelled, ExportFailed, child_main, run_child

log = logging.getLogger("brain.embeddings")

QUERY_FORMAT = 1            # bump whenever the quantization changes
QUERY_FILE = f"query-int8-v{QUERY_FORMAT}.onnx"
QUERY_MIN_COSINE = 0.97     # the worst check text's cosine to the full model's vector
MAKE_TIMEOUT_S = 300.0
# what the check embeds beside the export's own check texts: questions as people type them
CHECK_QUESTIONS = [
    "what did Priya say about the pricing review",
    "When is the board deck due?",
    "hotkey",
    "how do I restore a deleted note",
]


def query_file(export: Path) -> Path:
    return Path(export) / QUERY_FILE


def ensure(export: Path, timeout_s: float = MAKE_TIMEOUT_S, cancel: threading.Event | None = None) -> Path | None:
    """The query model of `export` (an onnx_export folder), made first when missing; None when
    it cannot be made (logged: queries then use the full model)."""
    target = query_file(export)
    if target.is_file():
        return target
    t = time.monotonic()
    try:
        run_child("query_model", export, "making the int8 query model", timeout_s, cancel)
    except ExportCancelled:
        return None  # stopping: the next start makes it
    except ExportFailed as e:
        log.warning("no int8 query model (%s); recall embeds its queries with the full model", e)
        return None
    if not target.is_file():  # removed meanwhile (another daemon found it broken): the next start
        return None
    log.info("made the int8 query model in %.1fs: %s", time.monotonic() - t, target)
    return target


def load(export: Path, cancel: threading.Event | None = None, full=None):
    """An embedder over the query model of `export`, or None (see `ensure`). With `full` (the
    full model's embedder), the file is trusted only if it still agrees with it on one question
    (a file replaced or damaged since it was made is removed, and the next start makes it again)."""
    path = ensure(export, cancel=cancel)
    if path is None:
        return None
    from .embedder import OnnxMiniLM

    try:
        light = OnnxMiniLM(export, model_file=path.name, workers=1)
        if full is not None:
            cos = float(full.embed(CHECK_QUESTIONS[:1])[0] @ light.embed(CHECK_QUESTIONS[:1])[0])
            if not cos >= QUERY_MIN_COSINE:
                raise ValueError(f"it no longer agrees with the full model (cosine {cos:.4f})")
        return light
    except Exception as e:  # a broken file: the next start makes it again
        log.warning("the int8 query model did not load (%s: %s); removed", type(e).__name__, e)
        path.unlink(missing_ok=True)
        return None


def attach(embedder, export: Path, cancel: threading.Event | None = None):
    """Give `embedder` (the full model over `export`) the query model as `for_queries`, or None;
    the two share their lanes, so a query on either holds the vector build back
    (embed_lanes.py). Returns `embedder`."""
    light = load(export, cancel=cancel, full=embedder)
    if light is not None:
        light.lane = embedder.lane
    embedder.for_queries = light
    return embedder


# -- the child process: the quantizer lives only here --------------------------


def make(export: Path) -> None:
    """Quantize `export`'s model.onnx, check it against the full model, rename it into place."""
    import numpy as np
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from .embedder import OnnxMiniLM

    export = Path(export)
    # a child killed midway (the daemon stopped, the timeout) left its temporary file: one older
    # than any child can run is nobody's
    for stale in export.glob(".query-*.onnx"):
        try:
            if time.time() - stale.stat().st_mtime > MAKE_TIMEOUT_S:
                stale.unlink()
        except OSError:
            pass
    fd, name = tempfile.mkstemp(prefix=".query-", suffix=".onnx", dir=export)
    os.close(fd)
    tmp = Path(name)
    try:
        quantize_dynamic(str(export / "model.onnx"), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Gather"])
        texts = CHECK_TEXTS + CHECK_QUESTIONS
        full = OnnxMiniLM(export).embed(texts)
        light = OnnxMiniLM(export, model_file=tmp.name).embed(texts)
        worst = float(np.min(np.sum(full * light, axis=1)))
        if worst < QUERY_MIN_COSINE:
            raise RuntimeError(f"the int8 query model is too far from the full model (cosine {worst:.4f})")
        os.replace(tmp, query_file(export))
    finally:
        tmp.unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    return child_main(argv, "query_model EXPORT_DIR", make, "the int8 query model failed")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
