# SPDX-License-Identifier: GPL-3.0-or-later
"""Geometric contraction by implicit Laplacian smoothing (Au et al. 2008);
docs/auto_skeleton.md#contraction.

Each iteration solves, in the least-squares sense,
    [W_L L ; W_H] V' = [0 ; W_H V]
i.e. the normal equations (W_L^2 L^T L + W_H^2) V' = W_H^2 V, with L the
intrinsic-Delaunay ("robust") cotangent Laplacian of the current positions so
that degenerate triangles do not make the weights explode.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .meshprep import triangle_areas


def one_ring_areas(V, F):
    """Sum of the areas of the faces around each vertex."""
    a = triangle_areas(V, F)
    out = np.zeros(len(V))
    np.add.at(out, F.ravel(), np.repeat(a, 3))
    return out


def laplacian(V, F):
    """Cotangent Laplacian (positive semi-definite), robust to degenerate triangles."""
    import robust_laplacian
    L, _ = robust_laplacian.mesh_laplacian(np.ascontiguousarray(V), np.ascontiguousarray(F), mollify_factor=1e-5)
    return L.tocsr()


def _solve_spd(A, B):
    """Solve A X = B for symmetric positive definite sparse A (SuperLU in symmetric mode);
    None when the factorisation finds A singular."""
    try:
        lu = spla.splu(A.tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError:                      # "Factor is exactly singular"
        return None
    return lu.solve(B)


def contract(V, F, *, wl0: float | None = None, wl_scale: float = 2.0,
             max_iterations: int = 12, area_ratio: float = 1e-4,
             max_wh: float = 1e4, progress=None):
    """Contract a (normalised) mesh toward its curve skeleton.

    wl0: initial contraction weight; default 1 / (10 sqrt(mean face area)).
    Stops when the total area falls below area_ratio of the original, when it no
    longer shrinks, or after max_iterations. Returns (contracted V, info dict).
    """
    V0 = np.asarray(V, dtype=np.float64)
    A0_faces = triangle_areas(V0, F).sum()
    ring0 = np.maximum(one_ring_areas(V0, F), 1e-300)
    if wl0 is None:
        wl0 = 1.0 / (10.0 * np.sqrt(A0_faces / len(F)))
    wl, wh = float(wl0), np.ones(len(V0))
    Vt = V0.copy()
    history = [1.0]
    for it in range(max_iterations):
        L = laplacian(Vt, F)
        if not np.isfinite(L.data).all():     # collapsed triangles the intrinsic Laplacian could not mend
            break
        A = (wl * wl) * (L.T @ L) + sp.diags(wh * wh)
        Vn = _solve_spd(A, (wh * wh)[:, None] * Vt)
        if Vn is None or not np.isfinite(Vn).all():     # keep the last contraction that solved
            break
        ratio = triangle_areas(Vn, F).sum() / A0_faces
        Vt = Vn
        history.append(ratio)
        if progress:
            progress((it + 1) / max_iterations, "Contracting mesh")
        if ratio < area_ratio or history[-2] - ratio < 0.01 * history[-2]:
            break
        wl *= wl_scale
        wh = np.minimum(np.sqrt(ring0 / np.maximum(one_ring_areas(Vt, F), 1e-300)), max_wh)
    return Vt, {"iterations": len(history) - 1, "area_ratio": history[-1], "wl0": wl0}
