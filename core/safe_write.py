# SPDX-License-Identifier: GPL-3.0-or-later
"""Saving files so that a failed or interrupted write never leaves half a file behind, and
checking that an output can be written before any work is done."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import BonesmithError


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


def check_writable(out: Path) -> None:
    """BonesmithError unless `out` can be written: an existing file must be writable and
    not a folder; otherwise the nearest existing folder above it must be writable (the
    missing ones are made when writing)."""
    out = Path(out)
    if out.is_dir():
        raise BonesmithError(f"Cannot write {out}: it is a folder")
    if out.exists():
        if not os.access(out, os.W_OK):
            raise BonesmithError(f"Cannot write {out}: the file is read-only")
        return
    folder = out.parent.absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise BonesmithError(f"Cannot write {out}: {folder} is not a writable folder (choose another output)")
