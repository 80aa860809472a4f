# SPDX-License-Identifier: GPL-3.0-or-later
"""Is the armature where the meshes are? Checked before Auto Skin weights anything, so that
a rig left at the origin or in another unit is refused with a message instead of skinning
the whole body to the nearest bone (docs/auto_skin.md)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArmatureError

# A mesh whose bounding box stays this far (fraction of the rig's size) from the bones' box
# is not where the armature is: refuse rather than weight it to whichever bone is nearest.
FAR_APART = 0.25
# An armature (3 bones or more) spanning less than this share of the meshes' size is in
# another unit (centimetres against metres) or left unscaled: refuse rather than skin
# the whole body to the few bones it reaches.
TOO_SMALL = 0.02


def check_placement(parts, joints, tails, armature_name: str | None = None) -> None:
    """InvalidArmatureError when a mesh lies clearly away from the bones (an armature left
    at the origin while the character stands elsewhere, a wrong unit scale...). `parts`:
    [(mesh name or None, its vertices (n,3))]; joints, tails (J,3): the bones' ends;
    armature_name: the armature's name in Blender (None: from Python, unnamed)."""
    armature, of = (f"The armature '{armature_name}'", f"'{armature_name}'") if armature_name else \
        ("The armature", "the armature")
    bones = np.vstack([joints, tails])
    lo, hi = bones.min(axis=0), bones.max(axis=0)
    rig_size = float(np.linalg.norm(hi - lo))
    # NaN vertices are core's to report (InvalidMeshError); here only the finite ones count,
    # or one NaN would make the margin NaN and let every mesh pass as near
    parts = [(name, np.asarray(v, dtype=np.float64).reshape(-1, 3)) for name, v in parts]
    parts = [(name, v[np.isfinite(v).all(axis=1)]) for name, v in parts]
    finite = np.vstack([v for _, v in parts]) if parts else np.zeros((0, 3))
    mesh_size = float(np.linalg.norm(np.ptp(finite, axis=0))) if len(finite) else 0.0
    margin = FAR_APART * max(mesh_size, rig_size)
    if len(joints) >= 3 and mesh_size > 0 and rig_size < TOO_SMALL * mesh_size:
        raise InvalidArmatureError(
            f"{armature} is {mesh_size / max(rig_size, 1e-30):.0f}x smaller than the "
            "mesh it should deform: the two are in different units or one has an unapplied scale. "
            "Scale the armature to the mesh (or apply the objects' scale: Ctrl+A) and run Auto Skin again")
    far = []
    for name, vertices in parts:
        if not len(vertices):
            continue  # core reports an empty mesh with its own message
        v_lo, v_hi = vertices.min(axis=0), vertices.max(axis=0)
        gap = np.maximum(np.maximum(lo - v_hi, v_lo - hi), 0.0)
        if np.linalg.norm(gap) > margin:
            far.append(name)
    if far:
        listed = "".join(f" '{n}'," for n in far if n)[:-1]
        raise InvalidArmatureError(
            f"The mesh{listed} is far away from the bones of {of}: move the "
            "armature onto the mesh (or fix a unit scale) and run Auto Skin again")
