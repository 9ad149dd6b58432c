"""Model files: trained models as data. Reading one never runs code from it. (The models
are kc-sim train's, the net:/sb3: agents' and the shipped ``net``'s: the format lives below them all.)

A kc-sim model file is a zip. kc-sim's part of it is a JSON header and NumPy arrays:

* ``kc-sim/header.json``: an object ``{"encoding": 1, "format": "kc-sim/mlp-policy",
  "version": 1, "header": {...}, "arrays": {"w0": {"dtype": "<f4", "shape": [256, 1575]},
  ...}, "others": ["data", ...]}``. ``encoding`` is the version of this layout (the zip, the
  header's fields, the ``.npy`` entries); ``format`` and ``version`` name what the model is
  and the version of *its* fields, which the reader of that format checks; ``header`` holds
  the format's own settings (any JSON object); ``arrays`` declares every array with its
  dtype and shape; ``others`` lists the zip's entries outside ``kc-sim/`` (e.g. the sb3
  model that ``kc-sim train`` keeps beside the weights), which kc-sim never opens.
* ``kc-sim/arrays/<name>.npy``: each array in NumPy's ``.npy`` format, numbers only
  (bool, integer or float), read with ``allow_pickle=False``.

:func:`read_model` checks everything before it builds an array: the zip, the header's size,
nesting and fields, that the zip holds exactly the declared entries (nothing more under
``kc-sim/``, nothing outside it that the header does not list), each ``.npy`` header's dtype
and shape against the declaration, and each entry's size against what that dtype and
shape take. Anything else is refused with one line (:class:`~kc_sim.errors.UserError`).

**The trust model.** Agent files (``path/file.py:Name``, installed packages) are code and
run as code: load only those you trust. Model files, game records and run folders are
data: kc-sim reads them through checked loaders such as this one and never unpickles them.
sb3's own loader unpickles (it can run code), so kc-sim calls it only to resume training
(``kc-sim train --resume``) on a file that kc-sim itself wrote on this machine:
:func:`remember_written` records the SHA-256 of every model file ``kc-sim train`` saves (in
:func:`written_dir`), and :func:`require_written` refuses any other file.

Writing (:func:`write_model`) is atomic (:mod:`kc_sim.support.atomic`: a temporary file
renamed into place) and can keep
the entries of an existing zip (``base``), which is how the sb3 model and kc-sim's part
share one file.
"""

from __future__ import annotations

import io
import json
import os
import re
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.errors import UserError
from kc_sim.records import untrusted
from kc_sim.support.atomic import atomic_file
from kc_sim.support.digest import file_sha256

__all__ = ["ENCODING", "HEADER_ENTRY", "Model", "read_model", "write_model", "holds_model", "file_sha256",
           "written_dir", "remember_written", "forget_written", "require_written", "MAX_ARRAY_BYTES"]

#: the version of the container layout described above
ENCODING = 1
PREFIX = "kc-sim/"
HEADER_ENTRY = PREFIX + "header.json"
ARRAY_DIR = PREFIX + "arrays/"
MAX_HEADER_BYTES = 2**20
#: the most array bytes one model file may declare (a policy of 256 x 256 takes under 2 MB)
MAX_ARRAY_BYTES = 2**31
MAX_ENTRIES = 10_000
MAX_NDIM = 8
#: the dtypes a model's arrays may have: numbers, little-endian, never objects
DTYPES = ("|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_NPY_SLACK = 2**16          # the largest .npy header accepted, on top of the data
_FIELDS = ("encoding", "format", "version", "header", "arrays", "others")


@dataclass(frozen=True)
class Model:
    """What a model file holds: its ``format`` name and ``version``, the format's ``header``
    (a JSON object) and its named ``arrays``."""

    format: str
    version: int
    header: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)


def _refuse(path, what: str, right: str = "a model file written by kc-sim"):
    raise UserError(f"{path}: {what}: expected {right}")


def holds_model(path) -> bool:
    """Whether the zip at ``path`` has a kc-sim part (a header entry); False for anything
    that is not a readable zip. Reads only the zip's directory."""
    try:
        with zipfile.ZipFile(path) as z:
            return HEADER_ENTRY in z.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def _header(z: zipfile.ZipFile, path) -> dict:
    info = z.getinfo(HEADER_ENTRY)
    if info.file_size > MAX_HEADER_BYTES:
        _refuse(path, f"its header is {info.file_size:,} bytes, over the limit of {MAX_HEADER_BYTES:,}")
    doc = untrusted.loads(z.read(info), f"{path}: {HEADER_ENTRY}", max_bytes=MAX_HEADER_BYTES,
                          expected="a JSON object (a kc-sim model header)")
    if not isinstance(doc, dict) or sorted(doc) != sorted(_FIELDS):
        got = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        _refuse(path, f"header fields {untrusted.preview(got)}", f"a header with the fields {', '.join(_FIELDS)}")
    if doc["encoding"] != ENCODING:
        _refuse(path, f"model file encoding {untrusted.preview(doc['encoding'])}",
                f"encoding {ENCODING} (a newer kc-sim may read it)")
    if not isinstance(doc["format"], str) or not isinstance(doc["version"], int) or isinstance(doc["version"], bool):
        _refuse(path, "header format/version are not a name and an integer")
    if not isinstance(doc["header"], dict):
        _refuse(path, "header.header is not an object")
    if not isinstance(doc["others"], list) or not all(isinstance(n, str) for n in doc["others"]):
        _refuse(path, "header.others is not a list of entry names")
    arrays = doc["arrays"]
    if not isinstance(arrays, dict):
        _refuse(path, "header.arrays is not an object {name: {dtype, shape}}")
    total = 0
    for name, spec in arrays.items():
        if not _NAME.fullmatch(name):
            _refuse(path, f"array name {untrusted.preview(name)}", "names of letters, digits, _ . - (at most 64)")
        ok = (isinstance(spec, dict) and sorted(spec) == ["dtype", "shape"] and spec["dtype"] in DTYPES
              and isinstance(spec["shape"], list) and len(spec["shape"]) <= MAX_NDIM
              and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**40 for n in spec["shape"]))
        if not ok:
            _refuse(path, f"array {name!r} declared as {untrusted.preview(spec)}",
                    f"{{\"dtype\": one of {' '.join(DTYPES)}, \"shape\": [sizes]}}")
        total += int(np.prod(spec["shape"], dtype=object)) * np.dtype(spec["dtype"]).itemsize
        if total > MAX_ARRAY_BYTES:
            _refuse(path, f"arrays of over {MAX_ARRAY_BYTES:,} bytes declared", "a smaller model")
    return doc


def _array(z: zipfile.ZipFile, path, name: str, spec: dict) -> np.ndarray:
    dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    info = z.getinfo(ARRAY_DIR + name + ".npy")
    if info.file_size > nbytes + _NPY_SLACK:
        _refuse(path, f"array {name!r} is {info.file_size:,} bytes, more than its declared {spec['dtype']} "
                f"{list(shape)} takes")
    f = io.BytesIO(z.read(info))
    try:
        major, _ = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        got_shape, fortran, got_dtype = read_header(f)
    except (ValueError, SyntaxError, TypeError, EOFError) as e:
        _refuse(path, f"array {name!r} is not a .npy array ({untrusted.preview(str(e), 80)})")
    if got_dtype != dtype or got_dtype.hasobject or tuple(got_shape) != shape or fortran:
        _refuse(path, f"array {name!r} holds {got_dtype} {list(got_shape)}{' (Fortran order)' if fortran else ''}, "
                f"but the header declares {spec['dtype']} {list(shape)}")
    if len(f.getbuffer()) - f.tell() != nbytes:
        _refuse(path, f"array {name!r} has {len(f.getbuffer()) - f.tell():,} bytes of data, not the {nbytes:,} "
                f"its dtype and shape take")
    f.seek(0)
    return np.lib.format.read_array(f, allow_pickle=False)


def read_model(path, *, format: str | None = None, versions=None) -> Model:
    """The model in the zip at ``path``, every part checked (see the module docstring).
    ``format``: the format name the caller reads; ``versions``: the versions of it the
    caller knows. Raises a one-line :class:`UserError` naming the file and what is wrong."""
    path = Path(path)
    try:
        z = zipfile.ZipFile(path)
    except FileNotFoundError:
        _refuse(path, "no such file")
    except IsADirectoryError:
        _refuse(path, "a folder")
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        _refuse(path, f"not a zip file ({untrusted.preview(str(e), 80)})")
    with z:
        infos = z.infolist()
        if len(infos) > MAX_ENTRIES:
            _refuse(path, f"{len(infos):,} entries in the zip, over the limit of {MAX_ENTRIES:,}")
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            _refuse(path, "the zip names an entry twice")
        if HEADER_ENTRY not in names:
            _refuse(path, f"no {HEADER_ENTRY} inside, so no kc-sim model")
        if any(i.flag_bits & 0x1 for i in infos):
            _refuse(path, "encrypted entries")
        doc = _header(z, path)
        ours = {HEADER_ENTRY} | {ARRAY_DIR + n + ".npy" for n in doc["arrays"]}
        unexpected = [n for n in names if n not in ours and (n.startswith(PREFIX) or n not in doc["others"])]
        missing = [n for n in sorted(ours) if n not in names]
        if unexpected or missing:
            what = (f"unexpected entries {untrusted.preview(unexpected)}" if unexpected
                    else f"missing entries {untrusted.preview(missing)}")
            _refuse(path, what, "exactly the entries its header declares")
        if format is not None and doc["format"] != format:
            _refuse(path, f"a model of format {untrusted.preview(doc['format'])}", f"format {format!r}")
        if versions is not None and doc["version"] not in versions:
            _refuse(path, f"{doc['format']} version {doc['version']}",
                    f"version {' or '.join(map(str, versions))} (a newer kc-sim may read it)")
        try:
            arrays = {n: _array(z, path, n, spec) for n, spec in doc["arrays"].items()}
        # zipfile raises NotImplementedError for an entry compressed by a method it lacks
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError) as e:
            if isinstance(e, UserError):
                raise
            _refuse(path, f"a damaged entry ({type(e).__name__}: {untrusted.preview(str(e), 80)})")
    return Model(doc["format"], doc["version"], doc["header"], arrays)


def write_model(path, model: Model, *, base=None) -> str:
    """Write ``model`` to the zip ``path`` and return the file's SHA-256. ``base``: a zip
    whose entries outside ``kc-sim/`` are kept (it may be ``path`` itself, e.g. the sb3 model
    just saved there). The file is written under a temporary name and renamed into place."""
    path = Path(path)
    arrays = {}
    for name, a in model.arrays.items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"array name {name!r}: use letters, digits, _ . - (at most 64)")
        a = np.ascontiguousarray(a)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False) if a.dtype.byteorder == ">" else a
        if a.dtype.str not in DTYPES:
            raise ValueError(f"array {name!r} of dtype {a.dtype}: model arrays are numbers ({' '.join(DTYPES)})")
        arrays[name] = a
    kept = []
    if base is not None:
        with zipfile.ZipFile(base) as zb:
            kept = [(i, zb.read(i)) for i in zb.infolist() if not i.filename.startswith(PREFIX)]
    doc = {"encoding": ENCODING, "format": model.format, "version": int(model.version), "header": model.header,
           "arrays": {n: {"dtype": a.dtype.str, "shape": list(a.shape)} for n, a in arrays.items()},
           "others": [i.filename for i, _ in kept]}
    with atomic_file(path, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in kept:
            z.writestr(info, data)
        z.writestr(HEADER_ENTRY, json.dumps(doc, indent=1, allow_nan=False))
        for name, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, allow_pickle=False)
            z.writestr(ARRAY_DIR + name + ".npy", buf.getvalue())
    return file_sha256(path)


# --- files kc-sim wrote itself (the only ones given to sb3's unpickling loader) ------------------

def written_dir() -> Path:
    """Where the SHA-256 of every model file kc-sim wrote on this machine is recorded:
    ``KC_SIM_STATE_DIR`` when set, else ``$XDG_STATE_HOME/kc-sim`` (``~/.local/state/kc-sim``),
    in its ``written-models`` folder (one small file per hash)."""
    base = os.environ.get("KC_SIM_STATE_DIR")
    if not base:
        base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "kc-sim"
    return Path(base) / "written-models"


def remember_written(path, digest: str) -> None:
    """Record that kc-sim wrote the file ``path`` whose SHA-256 is ``digest``."""
    d = written_dir()
    d.mkdir(parents=True, exist_ok=True)
    (d / digest).write_text(f"{Path(path).resolve()}\n{time.strftime('%Y-%m-%d %H:%M:%S')}\n", encoding="utf-8")


def forget_written(digest: str | None) -> None:
    """Drop a record of :func:`remember_written` (a model file since overwritten)."""
    if digest:
        (written_dir() / digest).unlink(missing_ok=True)


def require_written(path, doing: str) -> str:
    """The SHA-256 of ``path`` if kc-sim wrote this very file on this machine; otherwise a
    one-line UserError saying why ``doing`` (which unpickles the file) is refused."""
    digest = file_sha256(path)
    if not (written_dir() / digest).is_file():
        raise UserError(f"cannot {doing} {path}: kc-sim did not write this file on this machine (its SHA-256 is "
                        f"not among those recorded in {written_dir()}), and that would run sb3's loader, which "
                        "unpickles the file and so can run code from it: resume only models kc-sim train saved "
                        "here, or train anew")
    return digest
