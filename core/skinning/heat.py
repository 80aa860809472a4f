# SPDX-License-Identifier: GPL-3.0-or-later
"""Bone heat (Baran & Popovic 2007), made robust: the smooth global prior of Auto Skin.

For every bone b solve  (L + H) w_b = H p_b  on the surface, with L the cotangent
Laplacian over mixed Voronoi areas, H_ii = k / d_i^2 where d_i is the distance from
vertex i to its nearest *visible* bone (the segment from the vertex to the closest
point on the bone crosses no triangle) and p_b,i = 1/(number of tied nearest visible
bones) if b is one of them. Multiplying by the vertex areas M gives the symmetric
positive definite system  (C + M H) w = M H p  (C = cotangent stiffness), factorised
once (SuperLU, symmetric mode, no pivoting) and back-solved for all bones
(docs/auto_skin.md#heat-prior).

What makes it robust on game meshes (each measured in bench/skin.py):
- works on the welded, normalised mesh (prep.py): seams no longer split parts, units
  do not matter;
- degenerate triangles: cotangents of a triangle are scaled down together (PSD kept);
- face winding is made consistent per patch and each connected part is oriented so
  that its normals point away from the bones (area-weighted vote) before the
  "normal faces away from the bone" distance penalty is used;
- a connected part where no vertex sees a bone (helmet, eyes, floating armour) gets
  weak heat from its nearest bones (no visibility test), so no vertex is unweighted
  and the matrix is never singular.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ..mesh import orient_faces, weld_positions
from ..rays import segment_tester
from .geometry import bone_distances, cotangent_laplacian, vertex_normals
from .prep import Bones, SkinMesh

TIE_EPS = 1e-4          # bones within this relative distance of the nearest count as tied (Blender)
END_GAP = 1e-5          # visibility: walls this close (normalised units) to either end of a segment do not block
PLANE_GAP = 1e-5        # ... nor a face whose plane either end lies this close to (a segment along a flat face)
EDGE_GAP = 1e-5         # ... and faces block as if grown by this much: a segment through an edge or corner is blocked
MIN_DIST = 1e-3         # floor of d_i in normalised units (longest side 1)


@dataclass
class HeatOptions:
    k: float = 4.0                 # heat strength: Blender's Laplacian is 1/4 of the mixed-Voronoi one, so k = 4 = its C_WEIGHT 1
    visibility: bool = True        # only bones visible from the vertex give heat
    max_visibility_tries: int = 1  # nearest bones tried per vertex (Blender: 1, no heat if hidden)
    max_visibility_rays: int = 12000  # above this many vertices, one ray per small surface cell
    normal_penalty: bool = True    # Blender's d / (0.5 (cos + 1.001)) after orienting parts
    orient: bool = True            # make winding consistent and normals face away from bones
                                   # (False: the input winding, as Blender)
    weak_heat: float = 0.1         # factor of k for parts that see no bone
    front_only: bool = True        # only surfaces facing the vertex block its view (Blender)
    limit_weights: bool = True     # Blender's cut: w < 0.025 -> 0, ramp up to 0.05
    max_cot: float = 1e3
    edge_count: bool = False       # True: Blender's cot / (faces on the edge) instead of cot / 2


@dataclass
class HeatResult:
    W: np.ndarray                  # (n, J) weights on the welded mesh, rows ~ sum 1
    dist: np.ndarray               # (n, J) Euclidean vertex-bone distance
    source_bone: np.ndarray        # (n,) nearest visible bone (-1 none)
    tpar: np.ndarray = None        # (n, J) closest point parameter on each bone
    faces: np.ndarray = None       # (m, 3) faces with consistent, outward winding (if oriented)
    normals: np.ndarray = None     # (n, 3) vertex normals of `faces`
    rank: np.ndarray = None        # (n, J) penalised distance that picked the heat sources
    seeds: np.ndarray = None       # (n, J) bool: bone j heats vertex i (nearest visible, ties)
    weak_parts: int = 0            # parts that got weak heat
    info: dict = field(default_factory=dict)


def _orient_parts(mesh: SkinMesh, dist, tpar, bones: Bones):
    """Consistent winding per patch (faces connected through manifold edges), then flip
    every patch whose face normals point toward its nearest bones (area-weighted vote).
    Returns the oriented faces."""
    F, _, lab = orient_faces(mesh.F)
    V = mesh.V
    nearest = np.argmin(dist, axis=1)
    cp = bones.heads[nearest] + tpar[np.arange(len(V)), nearest][:, None] * (bones.tails[nearest] - bones.heads[nearest])
    out = V - cp
    fn = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    vote = np.einsum("ij,ij->i", fn, out[F].mean(axis=1))
    s = np.bincount(lab, weights=vote)
    flip = s[lab] < 0
    F = F.copy()
    F[flip] = F[flip][:, ::-1]
    return F


def representatives(V, F, target: int):
    """None when len(V) <= target; else (n,) the representative vertex of each vertex's
    cell in a grid sized for about `target` occupied cells on the surface."""
    n = len(V)
    if n <= target:
        return None
    area = 0.5 * np.linalg.norm(np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), axis=1).sum()
    h = np.sqrt(area / target)
    for _ in range(6):
        first, inv, _ = weld_positions(V, h)     # cells centred on the mesh centre: a mirror or turn keeps them
        if len(first) <= 1.3 * target:
            break
        h *= np.sqrt(len(first) / target)
    return first[inv]


def _first_nearest(rank_dist):
    """(n,) per row the lowest-numbered bone tied (TIE_EPS) with the nearest: rounding
    noise of a turned or moved input does not pick another bone of a shared joint
    (docs/auto_skin.md#frame-invariance)."""
    near = rank_dist <= rank_dist.min(axis=1, keepdims=True) * (1 + TIE_EPS) + 1e-12
    return np.argmax(near, axis=1)


def visible_nearest(mesh: SkinMesh, bones: Bones, dist, tpar, rank_dist, opt: HeatOptions, F=None):
    """Nearest visible bone(s) per vertex by `rank_dist` (n, J).

    Returns (P (n, J) heat targets rows summing to 1 or 0, dmin (n,) Euclidean distance
    of the chosen bone, inf where none)."""
    n, J = dist.shape
    V = mesh.V
    tries = min(J, opt.max_visibility_tries) if opt.visibility else 1
    order = np.argsort(rank_dist, axis=1) if tries > 1 else _first_nearest(rank_dist)[:, None]
    chosen = np.full(n, -1, np.int64)
    todo = np.arange(n)
    FF = mesh.F if F is None else F
    front = opt.front_only

    test = segment_tester(V, FF, EDGE_GAP) if opt.visibility else None

    def blocked(vs, bs):
        cp = bones.heads[bs] + tpar[vs, bs][:, None] * (bones.tails[bs] - bones.heads[bs])
        # the ends pulled in by END_GAP: a bone point on the surface, or a wall grazing the
        # vertex, is decided the same way after a sub-micro move (docs/auto_skin.md#frame-invariance)
        d = cp - V[vs]
        length = np.linalg.norm(d, axis=1)
        far = length > 2 * END_GAP
        out = np.zeros(len(vs), bool)
        step = d[far] * (END_GAP / length[far])[:, None]
        out[far] = test(V[vs[far]] + step, cp[far] - step, skip_vertex=vs[far], front_only=front,
                        margin=PLANE_GAP)
        return out

    rep = representatives(V, mesh.F, opt.max_visibility_rays) if opt.visibility else None
    for r in range(tries):
        if len(todo) == 0:
            break
        b = order[todo, r]
        if not opt.visibility:
            blk = np.zeros(len(todo), bool)
        elif rep is None:
            blk = blocked(todo, b)
        else:
            # Large meshes: test one vertex per small cell of the surface and pass its
            # answer to the cell's vertices that look at the same bone; test the others.
            blk = np.zeros(len(todo), bool)
            rb = np.full(n, -1, np.int64)
            rb[todo] = b
            cell_rep = rep[todo]
            is_rep = cell_rep == todo
            res = np.zeros(n, bool)
            tested = np.zeros(n, bool)
            if is_rep.any():
                res[todo[is_rep]] = blocked(todo[is_rep], b[is_rep])
                tested[todo[is_rep]] = True
            share = ~is_rep & tested[cell_rep] & (rb[cell_rep] == b)
            blk[share] = res[cell_rep[share]]
            own = ~is_rep & ~share
            if own.any():
                blk[own] = blocked(todo[own], b[own])
            blk[is_rep] = res[todo[is_rep]]
        chosen[todo[~blk]] = b[~blk]
        todo = todo[blk]
    P = np.zeros((n, J))
    ok = chosen >= 0
    idx = np.flatnonzero(ok)
    dsel = rank_dist[idx, chosen[idx]]
    # ties: bones as near as the chosen one (shared joint of parent and child bones);
    # they share the closest point, so they are as visible as the chosen one
    rk = rank_dist[idx]
    tie = (rk <= dsel[:, None] * (1 + TIE_EPS) + 1e-12) & (rk >= dsel[:, None] * (1 - TIE_EPS) - 1e-12)
    P[idx] = tie / tie.sum(axis=1, keepdims=True)
    dmin = np.full(n, np.inf)
    dmin[idx] = rank_dist[idx, chosen[idx]]     # Blender: the penalised distance sets H
    return P, dmin, chosen


def limit_weights(W, start: float = 0.05, end: float = 0.025):
    """Blender's heat_limit_weight: below `end` -> 0, linear ramp to `start`."""
    t = np.clip((W - end) / (start - end), 0.0, 1.0)
    return np.where(W >= start, W, t * start)


def bone_heat(mesh: SkinMesh, bones: Bones, opt: HeatOptions | None = None, *, dist=None, tpar=None) -> HeatResult:
    """Heat weights (n, J) on the welded mesh. See the module docstring."""
    import time
    opt = opt or HeatOptions()
    t0 = time.perf_counter()
    V = mesh.V
    n, J = len(V), bones.J
    if dist is None or tpar is None:
        dist, tpar = bone_distances(V, bones.heads, bones.tails)
    info = {"t_dist": time.perf_counter() - t0}
    F = _orient_parts(mesh, dist, tpar, bones) if opt.orient else mesh.F
    N = vertex_normals(V, F)
    if opt.normal_penalty:
        # cos between the normal and the direction bone -> vertex, per bone
        rank = np.empty_like(dist)
        step = max(1, 2_000_000 // max(J, 1))
        D = bones.tails - bones.heads
        for s in range(0, n, step):
            cp = bones.heads[None] + tpar[s:s + step, :, None] * D[None]
            d = V[s:s + step, None, :] - cp
            ln = np.linalg.norm(d, axis=2)
            cos = np.einsum("nkj,nj->nk", d, N[s:s + step]) / np.maximum(ln, 1e-300)
            cos = np.where(ln > 0, cos, 1.0)
            rank[s:s + step] = dist[s:s + step] / (0.5 * (cos + 1.001))
    else:
        rank = dist
    info["t_orient"] = time.perf_counter() - t0 - info["t_dist"]
    t1 = time.perf_counter()
    P, dmin, chosen = visible_nearest(mesh, bones, dist, tpar, rank, opt, F)
    info["t_visibility"] = time.perf_counter() - t1

    Hd = np.zeros(n)
    ok = chosen >= 0
    seeds = (P > 0) & ok[:, None]
    Hd[ok] = opt.k * (P[ok] > 0).sum(axis=1) / np.maximum(dmin[ok], MIN_DIST) ** 2   # Blender: numclosest * k / d^2
    # parts without heat: weak heat from the nearest bone(s), no visibility
    has = np.bincount(mesh.comp, weights=ok.astype(float), minlength=mesh.n_comp) > 0
    weak = ~has[mesh.comp]
    if weak.any():
        wi = np.flatnonzero(weak)
        dw = dist[wi]
        dm = dw.min(axis=1)
        tie = dw <= dm[:, None] * (1 + TIE_EPS) + 1e-12
        P[wi] = tie / tie.sum(axis=1, keepdims=True)
        Hd[wi] = opt.weak_heat * opt.k * tie.sum(axis=1) / np.maximum(dm, MIN_DIST) ** 2
    t2 = time.perf_counter()
    C, M = cotangent_laplacian(V, mesh.F, opt.max_cot, opt.edge_count)
    MH = M * Hd
    A = (C + sp.diags(MH)).tocsc()
    lu = splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    # one back-solve per bone that has heat sources (SuperLU's multi-column solve is far
    # slower than column by column); bones without sources get 0
    W = np.zeros((n, J))
    for j in np.flatnonzero((P > 0).any(axis=0)):
        W[:, j] = lu.solve(MH * P[:, j])
    info["t_solve"] = time.perf_counter() - t2
    W = np.clip(np.nan_to_num(W, nan=0.0), 0.0, 1.0)
    if opt.limit_weights:
        W = limit_weights(W)
    s = W.sum(axis=1)
    bad = ~(s > 1e-12)
    if bad.any():                      # never leave a vertex without weights
        nb = np.argmin(dist[bad], axis=1)
        W[bad] = 0.0
        W[np.flatnonzero(bad), nb] = 1.0
        s = W.sum(axis=1)
    W /= s[:, None]
    info["t_total"] = time.perf_counter() - t0
    info["visible_frac"] = float(ok.mean())
    return HeatResult(W, dist, chosen, tpar, F, N, rank, seeds, int(np.unique(mesh.comp[weak]).size) if weak.any() else 0, info)
