# SPDX-License-Identifier: GPL-3.0-or-later
"""A flat plate the character stands on: a ground plane, a shadow disc, a base.

Scenes put one under the feet and users select it with the character or join it into
the mesh. It is no body part: as a part of the body it made a humanoid a 1- to 27-bone
generic rig (docs/auto_skeleton.md#preparation). The cue is the body's own: a
separate part, flat across the caller's up axis (+Z: Blender's and the command line's
up), with the rest of the mesh standing on it, every point where the rest comes down to
it above the plate. A sole under one foot is no ground plate (the other foot's contact
lies beside it); no record of ../shared/data has one.
"""
from __future__ import annotations

import numpy as np

from .mesh import vertex_components
from .meshprep import component_boxes, weld_normalised

FLAT = 0.25      # a plate's height is at most this x its narrower width
CONTACT = 0.02   # the rest's points this share of its height above its lowest one stand on the plate


def ground_vertices(V, F) -> np.ndarray:
    """(V,) bool: the vertices of the flat plates (see the module) the rest of the mesh
    stands on. V, F: validated arrays (meshprep.validate) in the caller's axes (+Z up),
    welded first (a flat bottom cut off by a UV seam is the body's); loose vertices are
    in no plate. A plate under a plate (a shadow disc on a ground plane) is found in turn."""
    w = weld_normalised(V, F)
    return np.where(w.weld >= 0, _plates(w.vertices, w.faces)[np.maximum(w.weld, 0)], False)


def _plates(V, F) -> np.ndarray:
    """ground_vertices on welded arrays."""
    n, comp = vertex_components(len(V), F)
    parts = np.unique(comp[F[:, 0]])
    plate = np.zeros(n, bool)
    if len(parts) < 2:
        return plate[comp]
    lo, hi = component_boxes(V, comp, parts)
    extent = hi - lo
    flat = parts[extent[:, 2] <= FLAT * extent[:, :2].min(axis=1)]
    box = dict(zip(parts, zip(lo, hi)))
    in_faces = np.isin(comp, parts)
    found = True
    while found:
        found = False
        for c in flat[~plate[flat]]:
            if _stands_on(V[in_faces & ~plate[comp] & (comp != c)], *box[c]):
                plate[c] = found = True
    return plate[comp]


def _stands_on(rest, lo, hi) -> bool:
    """Does `rest` (k, 3) stand on the plate with box lo, hi (3,): the plate's top at
    its lowest points, and they all over the plate?"""
    if len(rest) == 0:
        return False
    low, height = rest[:, 2].min(), np.ptp(rest[:, 2])
    if not height > 0 or hi[2] > low + CONTACT * height:
        return False
    feet = rest[rest[:, 2] <= low + CONTACT * height, :2]
    return bool(((feet >= lo[:2]) & (feet <= hi[:2])).all())
