# SPDX-License-Identifier: GPL-3.0-or-later
"""Segment-against-mesh tests on Intel Embree (the `embreex` binding) when it is
installed: a BVH in C++, as Blender's bone heat uses, instead of the numpy candidate
search of geometry.segments_blocked (docs/auto_skin.md#visibility).

Embree returns the first triangle a ray hits. The rules of segments_blocked (a
triangle holding the segment's own start vertex does not block; with front_only a
triangle facing away from the start does not block) are applied to that hit, and a
ray whose hit does not count is cast again from just past it, up to MAX_PASSES times;
the few rays still undecided then get the exact numpy test. Embree works in float32,
on the normalised mesh (longest side 1): a hit within about 1e-6 of an edge may be
decided differently from the float64 test (measured: bench/README.md, tests).

`BONESMITH_RAYS=numpy` in the environment turns Embree off (comparisons, bug reports).
"""
from __future__ import annotations

import os

import numpy as np

MAX_PASSES = 32       # casts per segment before the numpy test decides
STEP_PAST = 1e-5      # a recast starts this far (share of the segment) past the ignored hit


def embree_available() -> bool:
    if os.environ.get("BONESMITH_RAYS", "").lower() == "numpy":
        return False
    try:
        from embreex import rtcore_scene  # noqa: F401
        from embreex.mesh_construction import TriangleMesh  # noqa: F401
    except (ImportError, OSError):      # not installed, or its library does not load here
        return False
    return True


class Scene:
    """An Embree scene of one triangle mesh, for many segment queries."""

    def __init__(self, V, F):
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh
        self.V, self.F = np.asarray(V, np.float64), np.asarray(F, np.int64)
        self.scene = rtcore_scene.EmbreeScene()
        TriangleMesh(self.scene, np.ascontiguousarray(self.V, np.float32),
                     np.ascontiguousarray(self.F, np.int32))
        T0, T1, T2 = (self.V[self.F[:, k]] for k in range(3))
        self.normals = np.cross(T1 - T0, T2 - T0)      # winding of F, not normalised

    def first_hits(self, origins, directions, reach):
        """(triangle or -1, t along `directions`) of the first hit within `reach`."""
        out = self.scene.run(np.ascontiguousarray(origins, np.float32),
                             np.ascontiguousarray(directions, np.float32),
                             dists=np.ascontiguousarray(reach, np.float32), output=1)
        return out["primID"].astype(np.int64), out["tfar"].astype(np.float64)

    def segments_blocked(self, P0, P1, skip_vertex=None, *, tol: float = 1e-6, front_only: bool = False):
        """geometry.segments_blocked's answer; undecided rays: the `exact` numpy test."""
        from .geometry import segments_blocked_exact
        P0, P1 = np.asarray(P0, np.float64), np.asarray(P1, np.float64)
        d = P1 - P0
        blocked = np.zeros(len(P0), bool)
        t = np.full(len(P0), tol)
        active = np.flatnonzero(np.einsum("ij,ij->i", d, d) > 0)
        for _ in range(MAX_PASSES):
            reach = (1.0 - tol) - t[active]
            active = active[reach > 0]
            if not len(active):
                return blocked
            tri, hit_t = self.first_hits(P0[active] + t[active, None] * d[active], d[active],
                                         (1.0 - tol) - t[active])
            hit = tri >= 0
            ignored = np.zeros(len(active), bool)
            if skip_vertex is not None:
                own = np.asarray(skip_vertex)[active][:, None]
                ignored |= hit & (self.F[np.maximum(tri, 0)] == own).any(axis=1)
            if front_only:
                facing = np.einsum("ij,ij->i", d[active], self.normals[np.maximum(tri, 0)]) < 0
                ignored |= hit & ~facing
            blocked[active[hit & ~ignored]] = True
            again = hit & ignored
            t[active[again]] += hit_t[again] + STEP_PAST
            active = active[again]
        if len(active):
            blocked[active] = segments_blocked_exact(self.V, self.F, P0[active], P1[active],
                                                     None if skip_vertex is None else np.asarray(skip_vertex)[active],
                                                     tol=tol, front_only=front_only)
        return blocked
