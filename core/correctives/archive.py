# SPDX-License-Identifier: GPL-3.0-or-later
"""Model files: .npz archives tagged with a format name (no pickles)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..records import UNREADABLE_NPZ
from .errors import CorrectivesError


def write_npz(path, format: str, **arrays) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:  # a file object: numpy would otherwise append ".npz"
        np.savez_compressed(f, format=format, **arrays)
    return path


def read_npz(path, formats, what: str) -> dict:
    """The arrays of a file whose format is one of `formats`; CorrectivesError naming
    `what` (e.g. "joint regressor") otherwise."""
    name = Path(path).name
    try:
        with np.load(path, allow_pickle=False) as d:
            if str(d.get("format", "")) not in formats:
                raise CorrectivesError(f"{name} is not a Bonesmith {what}")
            return {key: d[key] for key in d.files}
    except (*UNREADABLE_NPZ, KeyError) as error:
        raise CorrectivesError(f"Could not read {what} {name}: {error}") from None
