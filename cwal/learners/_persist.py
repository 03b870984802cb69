"""Model files: an ``.npz`` of the weight arrays plus JSON metadata. Never pickle.

The per-feature arrays (``W``, ``SW``, ``UW``) are stored sparse (format version 3): most of
their entries never change from the fill a new feature row gets (0 or the initial variance), so
the file holds ``touched`` (the flat indices where any of the three differs from its fill) and
the three arrays' values there; version 2 files (dense arrays) still load. Version 4 adds the
word clusters of a model that uses them (``c_words``, ``c_ids``, ``c_sizes``); version 3 files
(no clusters) still load. Version 5 adds the ``documents`` parameter (document-level features,
cwal/features/documents.py); version 4 files load with it off. Version 6 stores each array in the
learner's own element type (``SequenceLearner.DTYPES``: the covariance and the lazy-average sums
in float32); the float64 arrays of older files are rounded to those types on loading. Version 7
adds the lexicon of the training labels of a model that uses it (``l_json``; see
cwal/features/lexicon.py); version 6 files have none.

Loading uses ``allow_pickle=False`` and checks every part, so a file that is not a cwal model
(or is damaged) raises ``ModelFileError`` instead of running or half-loading anything.
A learner with more state (``maxent-l1``: its training data) defines ``extra_state() ->
(json_meta, arrays)`` and ``restore_state(json_meta, arrays)``; its arrays are stored as
``x_<name>`` with their own dtypes (numeric only) and its metadata under ``extra``.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from cwal.errors import ModelFileError
from cwal.features import FeatureIndex
from cwal.features.clusters import WordClusters
from cwal.features.lexicon import Lexicon
from cwal.learners._tags import TagCodec

SequenceLearner = Any  # the model saved or built; this module knows only its attributes

FORMAT = "cwal-model"
FORMAT_VERSION = 7
READABLE = (2, 3, 4, 5, 6, 7)
ARRAYS = ("W", "A", "SW", "SA", "UW", "UA")
_PER_FEATURE = ("W", "SW", "UW")
EXTRA = "x_"  # prefix of a learner's own arrays (see extra_state / restore_state)
CLUSTERS = "c_"  # prefix of the word clusters' arrays (version 4; see WordClusters.to_arrays)
LEXICON = "l_"  # prefix of the lexicon's arrays (version 7; see Lexicon.to_arrays)


def _json_array(obj: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(obj).encode("utf-8"), dtype=np.uint8)


def to_bytes(model: SequenceLearner) -> bytes:
    """The model as the bytes of a compressed ``.npz``."""
    buf = io.BytesIO()
    write(model, buf)
    return buf.getvalue()


def save(model: SequenceLearner, path: str | Path) -> None:
    """Write the model to ``path`` straight from the arrays (no copy of the file's bytes in
    memory), through a temporary file renamed into place (a failed save leaves no half file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "wb") as out:
            write(model, out)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write(model: SequenceLearner, out: BinaryIO) -> None:
    """Write the model as a compressed ``.npz`` to a seekable binary file."""
    F = model.n_features_
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "name": model.name,
        "params": model.params,
        "labels": model.labels_,
        "template": model.features_.template,
        "frozen": model.features_.frozen,
        "count": model.count_,
        "n_updates": model.n_updates_,
        "schemes": model.codec_.candidates,
    }
    extra_arrays: dict[str, np.ndarray] = {}
    if hasattr(model, "extra_state"):
        meta["extra"], extra_arrays = model.extra_state()
    arrays: dict[str, np.ndarray] = {
        "meta": _json_array(meta),
        "features": _json_array(model.features_.strings),
        **{EXTRA + k: v for k, v in extra_arrays.items()},
    }
    if model.features_.clusters is not None:
        arrays.update({CLUSTERS + k: v for k, v in model.features_.clusters.to_arrays().items()})
    if model.features_.lexicon is not None:
        arrays.update({LEXICON + k: v for k, v in model.features_.lexicon.to_arrays().items()})
    fills = _fills(model)
    meta["fills"] = fills
    dense = {key: getattr(model, key + "_")[:F] for key in _PER_FEATURE}
    touched = np.zeros(dense["W"].shape, dtype=bool)
    for key, arr in dense.items():
        touched |= arr != arr.dtype.type(fills[key])  # the fill as stored (float32 0.1 != 0.1)
    arrays["meta"] = _json_array(meta)
    arrays["touched"] = np.flatnonzero(touched)
    for key in ARRAYS:
        arr = getattr(model, key + "_")
        arrays[key] = arr[:F].reshape(-1)[arrays["touched"]] if key in _PER_FEATURE else arr
    # deflate level 1: a tenth of level 6's time, 10-20% larger files
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, arr in arrays.items():
            with zf.open(key + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)


def _fills(model: SequenceLearner) -> dict[str, float]:
    """The value a new feature row gets in each per-feature array (see ``SequenceLearner._grow``)."""
    return {"W": 0.0, "SW": float(model.params.get("init_variance", 1.0)), "UW": 0.0}


def _read(data: bytes, source: str) -> tuple[dict, list, dict[str, np.ndarray]]:
    try:
        z = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise ModelFileError(f"{source}: not a cwal model file (not an .npz archive)") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise ModelFileError(f"{source}: not a cwal model file (a bare array, not an archive)")
    with z:
        missing = sorted({"meta", "features", *ARRAYS} - set(z.files))
        if missing:
            raise ModelFileError(f"{source}: not a cwal model file (missing {', '.join(missing)})")
        try:
            meta = json.loads(bytes(z["meta"]).decode("utf-8"))
            strings = json.loads(bytes(z["features"]).decode("utf-8"))
            arrays = {k: np.asarray(z[k]) for k in ARRAYS}
            if "touched" in z.files:
                arrays["touched"] = np.asarray(z["touched"])
            arrays.update(
                {k: np.asarray(z[k]) for k in z.files if k.startswith((EXTRA, CLUSTERS, LEXICON))}
            )
        except (OSError, ValueError, TypeError, zipfile.BadZipFile, EOFError) as exc:
            raise ModelFileError(f"{source}: damaged cwal model file ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(strings, list):
        raise ModelFileError(f"{source}: damaged cwal model file (bad metadata)")
    for key in ARRAYS:
        if arrays[key].dtype.kind not in "fiu":
            raise ModelFileError(f"{source}: damaged cwal model file (array {key} is not numeric)")
    return meta, strings, arrays


def from_bytes(
    data: bytes, make: Callable[..., SequenceLearner], source: str = "<bytes>"
) -> SequenceLearner:
    """Rebuild a model from ``to_bytes`` output with ``make(name, labels=, template=, **params)``
    (the learner registry); anything else raises ModelFileError."""
    meta, strings, arrays = _read(data, source)
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{source}: not a cwal model file (format {meta.get('format')!r})")
    if meta.get("version") not in READABLE:
        raise ModelFileError(
            f"{source}: model format version {meta.get('version')!r} is not supported "
            f"(this cwal reads version {FORMAT_VERSION}); retrain the model"
        )
    try:
        model = make(
            meta["name"], labels=meta["labels"], template=meta["template"], **meta["params"]
        )
        parts = {k[len(CLUSTERS) :]: v for k, v in arrays.items() if k.startswith(CLUSTERS)}
        found = WordClusters.from_arrays(parts) if parts else None
        lex = {k[len(LEXICON) :]: v for k, v in arrays.items() if k.startswith(LEXICON)}
        model.features_ = FeatureIndex(
            meta["template"],
            strings,
            clusters=found,
            documents=model.params.get("documents", False),
            lexicon=Lexicon.from_arrays(lex) if lex else None,
        )
        model.features_.frozen = bool(meta["frozen"])
        count, n_updates = float(meta["count"]), int(meta["n_updates"])
        model.codec_ = TagCodec(model.params["encoding"], list(meta["schemes"]))
    except (KeyError, TypeError, ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{source}: damaged cwal model file ({exc})") from None
    L, F = len(model.labels_), len(strings)
    if len(model.features_) != F:
        raise ModelFileError(f"{source}: damaged cwal model file (duplicate feature strings)")
    dtypes = {key: getattr(model, "DTYPES", {}).get(key, np.float64) for key in ARRAYS}
    if meta["version"] >= 3:
        _densify(arrays, meta, F, L, source, dtypes)
    for key in ARRAYS:
        want = (F, L) if key in _PER_FEATURE else (L + 2, L)
        if arrays[key].shape != want:
            raise ModelFileError(
                f"{source}: array {key} has shape {arrays[key].shape}, expected {want}"
            )
        setattr(model, key + "_", np.ascontiguousarray(arrays[key], dtype=dtypes[key]))
    model.count_ = count
    model.n_updates_ = n_updates
    restore = getattr(model, "restore_state", None)
    if restore is not None:
        extra = {k[len(EXTRA) :]: v for k, v in arrays.items() if k.startswith(EXTRA)}
        try:
            restore(meta["extra"], extra)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{source}: damaged cwal model file ({exc})") from None
    return model


def _densify(
    arrays: dict[str, np.ndarray], meta: dict, F: int, L: int, source: str, dtypes: dict
) -> None:
    """Rebuild the dense per-feature arrays of a version-3 file in place (in ``dtypes``)."""
    touched = arrays.get("touched")
    fills = meta.get("fills")
    if touched is None or not isinstance(fills, dict) or touched.ndim != 1:
        raise ModelFileError(f"{source}: damaged cwal model file (no sparse layout)")
    if touched.dtype.kind not in "iu" or (
        len(touched) and not 0 <= touched.min() <= touched.max() < F * L
    ):
        raise ModelFileError(f"{source}: damaged cwal model file (touched entries out of range)")
    for key in _PER_FEATURE:
        values = arrays[key]
        if values.shape != touched.shape:
            raise ModelFileError(
                f"{source}: array {key} has shape {values.shape}, expected {touched.shape}"
            )
        try:
            dense = np.full(F * L, float(fills[key]), dtypes[key])
        except (KeyError, TypeError, ValueError):
            raise ModelFileError(f"{source}: damaged cwal model file (fill of {key})") from None
        dense[touched] = values
        arrays[key] = dense.reshape(F, L)


def load(path: str | Path, make: Callable[..., SequenceLearner]) -> SequenceLearner:
    """Read a model file; a missing or unreadable file raises ModelFileError too."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read model file ({exc.strerror or exc})") from None
    return from_bytes(data, make, str(path))
