"""The digest of a file: its size and SHA-256, read in blocks of 1 MiB so memory stays flat
whatever the file's size. The one home of that rule: a run's parts and files
(:mod:`kc_sim.runs.parts`) and model files (:mod:`kc_sim.net.model_file`) are hashed here."""

from __future__ import annotations

import hashlib

__all__ = ["file_digest", "file_sha256"]

_BLOCK = 1 << 20


def file_digest(path) -> dict:
    """``{"size": bytes, "sha256": hex}`` of a file, read in blocks (memory stays flat)."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
            size += len(block)
    return {"size": size, "sha256": h.hexdigest()}


def file_sha256(path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return file_digest(path)["sha256"]
