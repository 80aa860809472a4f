# SPDX-License-Identifier: GPL-3.0-or-later
"""Saving files so that a failed or interrupted write never leaves half a file behind."""
from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

# What np.load raises for a file that is not a readable .npz archive (missing, not a zip,
# empty, truncated, corrupt member, pickled data).
UNREADABLE_NPZ = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


def save_atomic(save, path) -> Path:
    """Call save(partial) to write the file under a temporary name beside `path`, then
    rename it to `path` in one step: an older file of that name stays until the new one is
    complete. The temporary name keeps the suffix (numpy's savez appends none) and is
    removed when save raises. Returns `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        save(partial)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path
