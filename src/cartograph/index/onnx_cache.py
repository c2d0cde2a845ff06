"""The folded-model cache: each int8 model's constant-folded copy, saved once per machine.

onnxruntime folds the model's ``DequantizeLinear`` nodes into float weights every time it opens
a session, and for that moment holds the int8 weights, the float weights and the parsed model at
once: opening the int8 MiniLM peaks 128 MB above the process and keeps 64 MB. Opening the copy
that onnxruntime saved after folding (its weights in a separate ``model.onnx.data``) peaks 54 MB
above and keeps 52, in a quarter of the time; with the reorder stage ``serve`` opens two models,
so this is most of its start-up peak (docs/benchmarks.md, "Serve memory").

The copy lives in ``$CARTOGRAPH_MODEL_CACHE`` (``off`` turns the cache off), else
``$XDG_CACHE_HOME/cartograph/models``, else ``~/.cache/cartograph/models``; one folder per source
model, rewrite and onnxruntime version (about 53 MB; the :data:`KEEP` most recently opened are
kept), holding ``manifest.json`` with both files' sha256, checked at each open. A folder whose
files do not match is built again (with a warning); a cache that cannot be written costs only
the saving (the model opens as before). The cache is trusted as far as the user's own home is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cartograph.envflags import OFF
from cartograph.files import atomic_write, file_sha256

logger = logging.getLogger(__name__)

CACHE_ENV = "CARTOGRAPH_MODEL_CACHE"
FORMAT = 1
KEEP = 6  # folded copies kept; the least recently opened beyond that are removed
MODEL = "model.onnx"
DATA = "model.onnx.data"


def cache_root() -> Path | None:
    """Where folded models are kept; None when ``$CARTOGRAPH_MODEL_CACHE`` is ``off``."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() in OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cartograph" / "models"


def cache_key(source: Path, variant: str, ort_version: str) -> str:
    """The folder name of ``source``'s folded copy: its content, the rewrite and onnxruntime."""
    digest = hashlib.sha256()
    for part in (file_sha256(source), variant, ort_version, str(FORMAT)):
        digest.update(part.encode() + b"\0")
    return f"{source.stem}-{digest.hexdigest()[:20]}"


def folded_model(
    ort: Any, source: Path, variant: str, rewritten: Callable[[], bytes | None]
) -> Path | None:
    """The cached folded copy of ``source`` (``rewritten()`` gives the model bytes to fold, None
    to fold ``source`` itself), built when missing or damaged; None when the cache is off or
    cannot be used (the reason logged), so that the caller opens the model as it is."""
    root = cache_root()
    if root is None:
        return None
    try:
        folder = root / cache_key(source, variant, ort.__version__)
        if _intact(folder):
            os.utime(folder / "manifest.json")  # opened now: the last to be pruned
            return folder / MODEL
        _build(ort, source, folder, rewritten)  # checked as it was saved (or the winner's copy)
        prune(root)
    except OSError as exc:
        logger.info("%s: not caching its folded copy (%s)", source, exc)
        return None
    except Exception as exc:  # onnxruntime raises its own untyped errors
        logger.warning("%s: cannot save its folded copy, opening it as it is: %s", source, exc)
        return None
    return folder / MODEL


def _intact(folder: Path) -> bool:
    """Whether ``folder`` holds a folded copy whose files match its manifest (a damaged one is
    removed, with a warning)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        return _discard(folder, f"unreadable manifest.json ({exc})")
    ours = isinstance(manifest, dict) and manifest.get("format") == FORMAT
    files = manifest.get("files") if ours else None
    if not isinstance(files, dict) or set(files) != {MODEL, DATA}:
        return _discard(folder, "manifest.json is not this version's")
    for name, want in files.items():
        try:
            got = file_sha256(folder / name)
        except OSError as exc:
            return _discard(folder, f"{name}: {exc}")
        if got != want:
            return _discard(folder, f"{name} does not match its sha256 in manifest.json")
    return True


def prune(root: Path, keep: int = KEEP) -> list[Path]:
    """Remove all but the ``keep`` most recently opened folded copies in ``root`` (each adapted
    model of `cartograph index tune` adds one); the folders removed."""

    def opened(folder: Path) -> float:
        try:
            return (folder / "manifest.json").stat().st_mtime
        except OSError:
            return 0.0

    folders = sorted(
        (p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=opened,
        reverse=True,
    )
    for folder in folders[keep:]:
        shutil.rmtree(folder, ignore_errors=True)
    return folders[keep:]


def _discard(folder: Path, reason: str) -> bool:
    logger.warning("%s: folded model damaged (%s); building it again", folder, reason)
    shutil.rmtree(folder, ignore_errors=True)
    return False


def _build(ort: Any, source: Path, folder: Path, rewritten: Callable[[], bytes | None]) -> None:
    """Fold ``source`` (or its rewritten bytes) with onnxruntime's basic optimisations, which
    hold on any CPU, and save the result into ``folder`` by one rename."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model = source
        lean = rewritten()
        if lean is not None:
            model = staging / "input.onnx"
            model.write_bytes(lean)
            del lean
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.intra_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(staging / MODEL)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", DATA
        )
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        ort.InferenceSession(str(model), sess_options=opts, providers=["CPUExecutionProvider"])
        if model != source:
            model.unlink()
        files = {name: file_sha256(staging / name) for name in (MODEL, DATA)}
        atomic_write(staging / "manifest.json", json.dumps({"format": FORMAT, "files": files}))
        try:
            staging.rename(folder)
        except OSError:  # another process saved it first
            if not _intact(folder):
                raise
            return
        logger.info("saved the folded copy of %s in %s", source, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
