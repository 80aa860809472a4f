# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-vertex features for the skin-weight network (docs/auto_skin.md#features)
plus the heat prior.

    fs = vertex_features(vertices, faces, joints, parents, tails)

Everything is computed on the welded, normalised mesh (prep.SkinMesh: n vertices,
bounding box centred, longest side 1), so features do not depend on units, position
or seams. `fs.vmap` maps the caller's V vertices to the n welded ones.

Candidates: the K = 5 bones of shortest geodesic distance (geodesic.py), except that
bones carrying heat-prior weight >= `PRIOR_KEEP` that are not among them replace the
farthest geodesic candidates (so the network can always reproduce the prior).
Characters with fewer than 5 bones repeat the last candidate; `mask` is False there.
Measured share of the artist's weight on the candidates (all 188 records): quat 0.991,
mpfb 0.971, zad 0.897 (geodesic-only candidates: 0.988 / 0.968 / 0.899); the
artist's heaviest bone is a candidate for 99.5 % / 97.5 % / 89.6 % of the vertices
(0 A.D. reuses one skeleton for bodies it does not fit).

Feature layout of `x` (float32, n x (VERTEX_DIM + K * BONE_DIM)), `h` = mean edge length:
  vertex block (VERTEX_DIM = 26):
    [0:3]    vertex position (normalised frame)
    [3:6]    unit vertex normal (winding made consistent, facing away from the bones)
    [6:21]   5 nearest one-ring neighbours, (neighbour - vertex) / h, nearest first
             (fewer than 5 neighbours: the last one repeated)
    [21:26]  their inverse distances h / d
  then per candidate k = 0..4 a block of BONE_DIM = 16:
    [0:3]    (bone head - vertex)       normalised units
    [3:6]    (bone tail - vertex)
    [6]      1 / max(geodesic distance, 0.01)
    [7]      1 / max(straight distance, 0.01)
    [8]      heat prior weight of the bone (also in `prior`)
    [9]      1 if the bone is a nearest visible bone of the vertex (a heat source) else 0
    [10]     cosine between the vertex normal and the direction bone -> vertex
    [11]     position along the bone: projection parameter on head -> tail (0 head, 1 tail),
             not clipped to the bone, limited to [-1, 2]
    [12]     distance across, relative: straight distance / bone length, limited to 10
    [13]     bone length (normalised units)
    [14]     1 if the bone is the parent of the vertex's heaviest heat-prior bone
    [15]     1 if the bone is a child of the vertex's heaviest heat-prior bone
`x_vertex` and `x_bone` give the two parts as (n, 26) and (n, 5, 11) views.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..mesh import unique_edges
from .geodesic import bone_geodesics
from .heat import HeatOptions, HeatResult, bone_heat
from .prep import Bones, SkinMesh, prepare

K = 5                      # candidate bones per vertex (docs/auto_skin.md#candidates)
VERTEX_DIM = 26
BONE_DIM = 16
ALONG_RANGE = (-1.0, 2.0)   # position along a bone, beyond its ends, is limited to this
ACROSS_MAX = 10.0          # relative distance across a bone is limited to this
PRIOR_KEEP = 0.05
INV_FLOOR = 0.01
GEO_TIE = 1e-4             # geodesic distances (normalised units) this close are tied: bone index decides
TIE_GAP = 0.01             # one-ring neighbours within this x mean edge of each other are tied


@dataclass
class FeatureSet:
    """Features of one character on its welded mesh (n vertices, J bones)."""
    candidates: np.ndarray   # (n, K) int64 candidate bone indices, nearest (geodesic) first
    mask: np.ndarray         # (n, K) bool, False on padding repeats (J < K)
    x: np.ndarray            # (n, VERTEX_DIM + K * BONE_DIM) float32, layout in the module doc
    prior: np.ndarray        # (n, K) float32 heat-prior weight of each candidate (masked: 0)
    geodesic: np.ndarray     # (n, K) float32 geodesic distance to each candidate (normalised units)
    heat: np.ndarray         # (n, J) full heat-prior weights (rows sum to 1)
    n_bones: int
    vmap: np.ndarray         # (V_in,) welded vertex of every input vertex
    source_index: np.ndarray  # (n,) one input vertex per welded vertex
    mesh: SkinMesh = field(repr=False)
    bones: Bones = field(repr=False)
    info: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.candidates)

    @property
    def x_vertex(self) -> np.ndarray:
        return self.x[:, :VERTEX_DIM]

    @property
    def x_bone(self) -> np.ndarray:
        return self.x[:, VERTEX_DIM:].reshape(self.n, K, BONE_DIM)

    def gather(self, W_in) -> np.ndarray:
        """Per-input-vertex weights (V_in, J) -> welded (n, J): mean over each welded
        vertex's duplicates, rows renormalised (rows that were all 0 stay 0)."""
        W_in = np.asarray(W_in, dtype=np.float64)
        out = np.zeros((self.n, W_in.shape[1]))
        np.add.at(out, self.vmap, W_in)
        s = out.sum(axis=1, keepdims=True)
        return np.divide(out, s, out=np.zeros_like(out), where=s > 0)

    def candidate_targets(self, W_in):
        """Artist weights (V_in, J) -> (targets (n, K) on the candidates, masked repeats 0,
        coverage (n,) = share of the vertex's weight the candidates can express)."""
        Wn = self.gather(W_in)
        t = np.take_along_axis(Wn, self.candidates, axis=1) * self.mask
        return t, t.sum(axis=1)

    def to_input(self, Wn) -> np.ndarray:
        """Welded per-vertex rows (n, ...) -> the caller's vertices (V_in, ...)."""
        return np.asarray(Wn)[self.vmap]


def tied_argsort(values, gap: float, keys=None):
    """Row-wise argsort of (n, m) `values` in which runs of sorted values less than `gap`
    apart are tied and ordered by `keys` (n, m) (default: the column), so a sub-micro
    move of the mesh does not swap bones at the same distance (a parent and child at
    their shared joint; docs/auto_skin.md#frame-invariance)."""
    n, m = values.shape
    keys = np.broadcast_to(np.arange(m), (n, m)) if keys is None else keys
    o = np.argsort(values, axis=1, kind="stable")
    v = np.take_along_axis(values, o, axis=1)
    run = np.concatenate([np.zeros((n, 1), np.int64), np.cumsum(np.diff(v, axis=1) >= gap, axis=1)], axis=1)
    k = np.take_along_axis(keys, o, axis=1).astype(np.int64)
    key = run * (int(k.max(initial=0)) + 1) + k          # run first, then the key
    return np.take_along_axis(o, np.argsort(key, axis=1, kind="stable"), axis=1)


def tied_smallest(values, k: int, gap: float):
    """tied_argsort(values, gap)[:, :k], without sorting whole rows: the k + 2 smallest of
    each row are ordered, and the rows where a run of ties could reach past them (no gap
    after the k-th of them) are sorted whole."""
    n, m = values.shape
    if k + 2 >= m:
        return tied_argsort(values, gap)[:, :k]
    part = np.argpartition(values, k + 1, axis=1)[:, :k + 2]
    o = np.argsort(np.take_along_axis(values, part, axis=1), axis=1)
    cols = np.take_along_axis(part, o, axis=1)
    v = np.take_along_axis(values, cols, axis=1)
    step = np.diff(v, axis=1) >= gap
    run = np.concatenate([np.zeros((n, 1), np.int64), np.cumsum(step, axis=1)], axis=1)
    out = np.take_along_axis(cols, np.argsort(run * m + cols, axis=1), axis=1)[:, :k]
    open_rows = np.flatnonzero(~step[:, k - 1:].any(axis=1))    # no run ends within the part
    if len(open_rows):
        out[open_rows] = tied_argsort(values[open_rows], gap)[:, :k]
    return out


def _one_ring_neighbours(V, F, h):
    """5 nearest one-ring neighbours per vertex as (offsets (n,5,3)/h, inverse distances h/d)."""
    n = len(V)
    E = unique_edges(F)
    a = np.concatenate([E[:, 0], E[:, 1]])
    b = np.concatenate([E[:, 1], E[:, 0]])
    d = np.linalg.norm(V[a] - V[b], axis=1)
    # Nearly equal lengths (regular meshes; runs of gaps below TIE_GAP x h) are ordered by
    # neighbour index (the input's order), not by rounding noise or a sub-micro jitter, so
    # the features do not depend on the mesh's placement (docs/auto_skin.md#frame-invariance).
    order = np.lexsort((d, a))
    a, b, d = a[order], b[order], d[order]
    start = np.ones(len(a), bool)
    start[1:] = (a[1:] != a[:-1]) | (np.diff(d) >= TIE_GAP * h)
    order = np.lexsort((b, np.cumsum(start)))
    a, b, d = a[order], b[order], d[order]
    start = np.searchsorted(a, np.arange(n))
    cnt = np.bincount(a, minlength=n)
    k = np.arange(5)[None, :]
    pos = start[:, None] + np.minimum(k, np.maximum(cnt[:, None] - 1, 0))
    has = cnt > 0
    pos = np.where(has[:, None], pos, 0)
    nb = np.where(has[:, None], b[np.minimum(pos, len(b) - 1)], np.arange(n)[:, None])
    off = (V[nb] - V[:, None, :]) / h
    dist = np.linalg.norm(off, axis=2)
    inv = np.where(dist > 0, 1.0 / np.maximum(dist, INV_FLOOR), 0.0)
    return off, inv


def compute_features(mesh: SkinMesh, bones: Bones, heat_opt: HeatOptions | None = None,
                     heat: HeatResult | None = None) -> FeatureSet:
    """Features on an already prepared mesh and bones (see vertex_features)."""
    import time
    t0 = time.perf_counter()
    heat = heat or bone_heat(mesh, bones, heat_opt)
    V, J, n = mesh.V, bones.J, mesh.n
    dist = heat.dist
    # seeds: nearest visible bones (ties included) = where bone heat put its sources
    seeds = heat.seeds
    t1 = time.perf_counter()
    geo = bone_geodesics(mesh, dist, seeds)
    t_geo = time.perf_counter() - t1

    kk = min(K, J)
    cand = tied_smallest(geo, kk, GEO_TIE)
    # bones with real prior weight must be candidates
    W = heat.W
    top_prior = np.argsort(-W, axis=1, kind="stable")[:, :kk]
    for r in range(kk):
        b = top_prior[:, r]
        need = (W[np.arange(n), b] >= PRIOR_KEEP) & ~(cand == b[:, None]).any(axis=1)
        if need.any():
            # replace the farthest candidate that is not itself a kept prior bone
            rows = np.flatnonzero(need)
            wc = W[rows[:, None], cand[rows]]
            free = wc < PRIOR_KEEP
            # last free slot (farthest geodesically)
            slot = kk - 1 - np.argmax(free[:, ::-1], axis=1)
            can = free.any(axis=1)
            cand[rows[can], slot[can]] = b[rows[can]]
    # keep candidates sorted by geodesic distance
    g = np.take_along_axis(geo, cand, axis=1)
    cand = np.take_along_axis(cand, tied_argsort(g, GEO_TIE, cand), axis=1)
    mask = np.ones((n, K), bool)
    if kk < K:
        cand = np.concatenate([cand, np.repeat(cand[:, -1:], K - kk, axis=1)], axis=1)
        mask[:, kk:] = False
    g = np.take_along_axis(geo, cand, axis=1)
    prior = np.take_along_axis(W, cand, axis=1) * mask

    # vertex block
    N = heat.normals
    E = unique_edges(mesh.F)
    h = float(np.linalg.norm(V[E[:, 0]] - V[E[:, 1]], axis=1).mean()) or 1.0
    off, inv_nb = _one_ring_neighbours(V, mesh.F, h)
    xv = np.concatenate([V, N, off.reshape(n, 15), inv_nb], axis=1)

    # bone blocks
    Hc = bones.heads[cand] - V[:, None, :]
    Tc = bones.tails[cand] - V[:, None, :]
    dc = np.take_along_axis(dist, cand, axis=1)
    sc = np.take_along_axis(seeds, cand, axis=1)
    # direction bone -> vertex at the closest point
    Dv = bones.tails[cand] - bones.heads[cand]
    dd = np.einsum("nkj,nkj->nk", Dv, Dv)
    t = np.clip(np.einsum("nkj,nkj->nk", -Hc, Dv) / np.maximum(dd, 1e-30), 0, 1)
    r = -Hc - t[..., None] * Dv
    rl = np.linalg.norm(r, axis=2)
    cos = np.where(rl > 0, np.einsum("nkj,nj->nk", r, N) / np.maximum(rl, 1e-300), 1.0)
    # where along and how far across each bone (what a rigid or a smooth style depends on),
    # and the candidate's place in the tree relative to the prior's heaviest bone
    length = np.sqrt(dd)
    along = np.clip(np.einsum("nkj,nkj->nk", -Hc, Dv) / np.maximum(dd, 1e-30), *ALONG_RANGE)
    across = np.minimum(dc / np.maximum(length, 1e-3), ACROSS_MAX)
    top = W.argmax(axis=1)
    parents = bones.parents
    is_parent = cand == np.where(parents[top] >= 0, parents[top], -2)[:, None]
    is_child = parents[cand] == top[:, None]
    xb = np.concatenate([Hc, Tc, (1.0 / np.maximum(g, INV_FLOOR))[..., None],
                         (1.0 / np.maximum(dc, INV_FLOOR))[..., None], prior[..., None],
                         sc[..., None].astype(float), cos[..., None], along[..., None],
                         across[..., None], length[..., None], is_parent[..., None].astype(float),
                         is_child[..., None].astype(float)], axis=2)
    xb = xb * mask[..., None]
    x = np.concatenate([xv, xb.reshape(n, K * BONE_DIM)], axis=1).astype(np.float32)
    info = dict(heat.info)
    info.update(t_geodesic=t_geo, t_features=time.perf_counter() - t0)
    return FeatureSet(cand.astype(np.int64), mask, x, prior.astype(np.float32), g.astype(np.float32),
                      W, J, mesh.vmap, mesh.source_index, mesh, bones, info)


def _vector_columns(axis: int) -> np.ndarray:
    """Columns of `x` that hold the `axis` component of a position or direction."""
    starts = [0, 3] + [6 + 3 * i for i in range(5)]
    starts += [VERTEX_DIM + k * BONE_DIM + s for k in range(K) for s in (0, 3)]
    return np.array(starts) + axis


def mirrored(fs: FeatureSet, signs) -> FeatureSet:
    """The features of the character mirrored or turned by diag(signs) (each +-1): the
    vector columns' components multiplied, the rest as it is (distances, weights,
    cosines do not change). What the network sees of the moved character, without
    computing it again (docs/auto_skin.md#frame-invariance)."""
    x = fs.x.copy()
    x[:, flipped_columns(signs)] *= -1
    return replace(fs, x=x)


def flipped_columns(signs) -> np.ndarray:
    """Columns of `x` whose sign the move diag(signs) flips (see mirrored)."""
    parts = [_vector_columns(axis) for axis, s in enumerate(signs) if s < 0]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def vertex_features(vertices, faces, joints, parents, tails=None, *,
                    heat_options: HeatOptions | None = None) -> FeatureSet:
    """Features of a character for the skin-weight network.

    vertices (V,3) float, faces (F,3) int (triangles), joints (J,3) bone heads,
    parents (J,) int (-1 = root), tails (J,3) bone tails (None: from the children).
    Any units and position. Raises InvalidMeshError / InvalidArmatureError.

    Returns a FeatureSet on the welded mesh (n <= V vertices): `candidates (n,5)`,
    `mask (n,5)`, `x (n,106)` (layout in the module docstring), `prior (n,5)` heat
    weights of the candidates, `geodesic (n,5)`, `heat (n,J)`, `vmap (V,)` to map rows
    back to the caller's vertices (`fs.to_input(rows)`), `gather(W)` / `candidate_targets(W)`
    to bring the caller's (V,J) artist weights onto the welded mesh for training.
    """
    mesh, bones = prepare(vertices, faces, joints, parents, tails)
    return compute_features(mesh, bones, heat_options)
