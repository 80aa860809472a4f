# SPDX-License-Identifier: GPL-3.0-or-later
"""The Bonesmith record: one character in one `.npz` file. This module is the one place
that knows its keys; the CLI, the bridge, training and the benchmarks read and write
records here.

| key | shape | meaning |
|---|---|---|
| `verts` | (V,3) float | rest-pose vertex positions, world units |
| `faces` | (F,3) int | triangles |
| `joints` | (J,3) float | heads of the deforming bones |
| `joint_tails` | (J,3) float | their tails |
| `joint_names` | (J,) str | their names |
| `parents` | (J,) int | parent index, -1 for a root |
| `weights` | (V,J) float | skin weights |
| `rest_mats` | (J,4,4) float | optional: the bones' rest matrices (roll: column 2) |
| `unweighted` | (V,) bool | optional: vertices the artist left without weights |
| `family` | () str | optional: the character's family, for train/test splits |
| `pose_rot` | (P,J,3,3) float | optional: local joint rotations, world-aligned axes |
| `pose_verts` | (P,V,3) float | optional: the posed mesh for each rotation set |
| `pose_A` | (P,J,4,4) float | optional: skinning matrices of those poses |

The benchmark data's records carry more keys (see its README); readers ask for the keys
they need and ignore the rest. Records never hold Python objects (`allow_pickle=False`).
"""
from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from .errors import BonesmithError

# What np.load raises for a file that is not a readable .npz archive (missing, not a zip,
# empty, truncated, corrupt member, pickled data).
UNREADABLE_NPZ = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)

MESH = ("verts", "faces")
RIG = MESH + ("joints", "parents", "weights")
POSES = ("pose_rot", "pose_verts")


class InvalidRecordError(BonesmithError):
    """A file is not a readable Bonesmith record, or lacks the arrays a task needs."""


def read(path, required=MESH, optional=(), *, needed_for: str = "a Bonesmith record") -> dict:
    """The arrays `required` (all of them) and `optional` (those present) of a record.

    Returns {key: np.ndarray}. Raises InvalidRecordError naming the file and what is wrong:
    unreadable (not a zip, truncated, empty) or a required array missing ("x.npz is not
    <needed_for>: it has no 'pose_rot' array (needs ...)").
    """
    path = Path(path)
    try:
        record = np.load(path, allow_pickle=False)
        if not isinstance(record, np.lib.npyio.NpzFile):
            raise ValueError("it holds a single array")
        with record:
            missing = [k for k in required if k not in record.files]
            if not missing:
                return {k: np.asarray(record[k]) for k in (*required, *optional) if k in record.files}
    except UNREADABLE_NPZ as error:
        raise InvalidRecordError(f"Could not read {path.name}: it is not a readable .npz record "
                                 f"({type(error).__name__}: {error})") from None
    raise InvalidRecordError(
        f"{path.name} is not {needed_for}: it has no {', '.join(repr(k) for k in missing)} "
        f"array{'s' if len(missing) > 1 else ''} (needs {', '.join(required)})")


def write(path, character: dict) -> Path:
    """Write a character dict (vertices, faces, joints, tails, parents, weights; names,
    unweighted and family optional: what training and `read` use) as a record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = np.asarray(character["weights"])
    np.savez(
        path,
        verts=np.asarray(character["vertices"], dtype=np.float32),
        faces=np.asarray(character["faces"], dtype=np.int32),
        joints=np.asarray(character["joints"], dtype=np.float32),
        joint_tails=np.asarray(character["tails"], dtype=np.float32),
        joint_names=np.asarray(character.get("names") or
                               [f"bone_{j}" for j in range(len(character["joints"]))]),
        parents=np.asarray(character["parents"], dtype=np.int32),
        weights=weights.astype(np.float32),
        unweighted=np.asarray(character.get("unweighted", weights.sum(1) <= 0), dtype=bool),
        family=np.asarray(str(character.get("family", path.stem))),
    )
    return path
