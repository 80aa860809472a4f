# SPDX-License-Identifier: GPL-3.0-or-later
"""Files the operators keep in the extension's user folder (trained skin models, learned
correctives, joint regressors): safe file names, and saves that replace an older file
only once the new one is complete."""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..core.errors import BonesmithError
from ..core.safe_write import save_atomic  # noqa: F401 - the operators' atomic save


def safe_name(name: str) -> str:
    """`name` as a file name: runs of other characters than letters, digits, . _ - become
    one _, no leading or trailing . or _ ("skin_trained" when nothing is left)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip()).strip("._")
    return name or "skin_trained"


def write_json(path: Path, info: dict) -> None:
    save_atomic(lambda p: p.write_text(json.dumps(info, indent=1)), path)


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise BonesmithError(f"Could not read {path.name} ({error}): learn or train again") from None
