# SPDX-License-Identifier: GPL-3.0-or-later
"""Geometry kernels for skinning: bone distances, cotangent Laplacian with mixed Voronoi
areas, consistent face orientation and vertex normals (the segment visibility tests are
core/rays.py's). All on numpy/scipy; inputs are in the normalised frame of prep.SkinMesh."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_CHUNK = 2_000_000   # entries of an (points x bones) work array


def bone_distances(P, heads, tails):
    """Distance (N, J) from every point to every bone segment, and the parameter t (N, J)
    of the closest point head + t (tail - head). Zero-length bones are points."""
    D = tails - heads
    dd = np.einsum("ij,ij->i", D, D)
    inv = np.divide(1.0, dd, out=np.zeros_like(dd), where=dd > 1e-30)
    N, J = len(P), len(heads)
    dist = np.empty((N, J))
    tpar = np.empty((N, J))
    step = max(1, _CHUNK // max(1, J))
    for s in range(0, N, step):
        ap = P[s:s + step, None, :] - heads[None]
        t = np.clip(np.einsum("nkj,kj->nk", ap, D) * inv, 0.0, 1.0)
        r = ap - t[..., None] * D[None]
        dist[s:s + step] = np.sqrt(np.einsum("nkj,nkj->nk", r, r))
        tpar[s:s + step] = t
    return dist, tpar


def cotangent_laplacian(V, F, max_cot: float = 1e3, edge_count: bool = True):
    """Cotangent stiffness C (n x n, symmetric PSD, C = -L: positive diagonal) and mixed
    Voronoi vertex areas M (n,) (Meyer et al. 2003).

    A degenerate (needle or cap) triangle has huge cotangents; its three cotangents are
    scaled down together so that the largest is `max_cot`, which keeps that triangle's
    stiffness positive semi-definite (clipping one alone would not)."""
    n = len(V)
    i0, i1, i2 = F[:, 0], F[:, 1], F[:, 2]
    e0 = V[i2] - V[i1]      # opposite vertex 0
    e1 = V[i0] - V[i2]      # opposite vertex 1
    e2 = V[i1] - V[i0]      # opposite vertex 2
    cr = np.cross(e2, -e1)
    dbl = np.linalg.norm(cr, axis=1)                 # 2 * area
    area = 0.5 * dbl
    den = np.maximum(dbl, 1e-300)
    cot0 = np.einsum("ij,ij->i", -e2, e1) / den      # angle at vertex 0: between e2 and -e1
    cot1 = np.einsum("ij,ij->i", -e0, e2) / den
    cot2 = np.einsum("ij,ij->i", -e1, e0) / den
    cots = np.stack([cot0, cot1, cot2], axis=1)
    big = np.abs(cots).max(axis=1)
    s = np.where(big > max_cot, max_cot / np.maximum(big, 1e-300), 1.0)
    cots *= s[:, None]
    # edge opposite vertex k joins the other two
    rows = np.concatenate([i1, i2, i0])
    cols = np.concatenate([i2, i0, i1])
    if edge_count:
        # Blender's variant: a face's cotangent over the number of faces on the edge
        # (1/2 on manifold edges, 1 on boundary edges, 1/3 on a three-face fin...)
        key = np.minimum(rows, cols) * n + np.maximum(rows, cols)
        _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        share = 1.0 / cnt[inv.reshape(-1)]
    else:
        share = 0.5
    w = share * np.concatenate([cots[:, 0], cots[:, 1], cots[:, 2]])
    Wm = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
                       shape=(n, n)).tocsr()
    C = sp.diags(np.asarray(Wm.sum(axis=1)).ravel()) - Wm

    # mixed Voronoi areas
    l2 = np.stack([np.einsum("ij,ij->i", e, e) for e in (e0, e1, e2)], axis=1)  # squared length opposite k
    obtuse = cots < 0                               # angle at vertex k > 90 degrees (scaled cots keep sign)
    any_obt = obtuse.any(axis=1)
    # Voronoi part at vertex k: (|e_{k+1}|^2 cot_{k+1} + |e_{k+2}|^2 cot_{k+2}) / 8 on the edges at k
    vor = np.empty_like(l2)
    for k in range(3):
        a, b = (k + 1) % 3, (k + 2) % 3
        vor[:, k] = (l2[:, a] * cots[:, a] + l2[:, b] * cots[:, b]) / 8.0
    mixed = np.where(any_obt[:, None], np.where(obtuse, area[:, None] / 2, area[:, None] / 4), vor)
    mixed = np.where(s[:, None] < 1.0, area[:, None] / 3.0, mixed)   # degenerate: barycentric
    mixed = np.maximum(mixed, 0.0)
    M = np.bincount(F.ravel(), weights=mixed.ravel(), minlength=n)
    floor = 1e-3 * max(float(area.sum()) / max(n, 1), 1e-300)
    return C.tocsc(), np.maximum(M, floor)


def vertex_normals(V, F, area_weighted: bool = False):
    """Vertex normals (unit; zero where undefined): sum of the unit normals of the
    faces around (as Blender's bone heat), or area-weighted."""
    fn = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    if not area_weighted:
        ln = np.linalg.norm(fn, axis=1, keepdims=True)
        fn = np.divide(fn, ln, out=np.zeros_like(fn), where=ln > 0)
    N = np.zeros_like(V)
    for k in range(3):
        np.add.at(N, F[:, k], fn)
    ln = np.linalg.norm(N, axis=1, keepdims=True)
    return np.divide(N, ln, out=np.zeros_like(N), where=ln > 0)
