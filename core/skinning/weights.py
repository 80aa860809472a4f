# SPDX-License-Identifier: GPL-3.0-or-later
"""Weight post-processing: scatter candidate weights to all bones, prune to the
engine's influence limit, renormalise; every row sums to 1 and none is empty."""
from __future__ import annotations

import numpy as np

from ..meshprep import group_members, members_are_small
from ..proximity import nearest_segments


def scatter(candidates, probs, n_bones: int) -> np.ndarray:
    """Candidate weights to dense bone weights.

    Parameters
    ----------
    candidates : (V, K) int array
        Bone index of each candidate; < 0: no bone (its weight is dropped).
    probs : (V, K) float array
        Weight of each candidate.
    n_bones : int
        J.

    Returns
    -------
    (V, J) float64 array
        Repeated candidates (characters with fewer than K bones) add up.
    """
    c = np.asarray(candidates, dtype=np.int64)
    p = np.asarray(probs, dtype=np.float64)
    W = np.zeros((len(c), int(n_bones)))
    ok = c >= 0
    rows = np.broadcast_to(np.arange(len(c))[:, None], c.shape)
    np.add.at(W, (rows[ok], c[ok]), p[ok])
    return W


def tree_distance(parents) -> np.ndarray:
    """(J, J) number of bone-tree edges between bones (large between separate trees)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path
    p = np.asarray(parents, dtype=np.int64)
    J = len(p)
    ch = np.flatnonzero((p >= 0) & (p < J) & (p != np.arange(J)))
    G = sp.coo_matrix((np.ones(len(ch)), (ch, p[ch])), shape=(J, J))
    D = shortest_path(G, directed=False, unweighted=True)
    return np.where(np.isfinite(D), D, 1e6)


def prune(W, max_influences: int = 4, min_weight: float = 0.0, fallback=None, parents=None,
          columns=None) -> np.ndarray:
    """Keep each row's `max_influences` largest weights (and those >= min_weight of the
    row's total) and make the row sum to 1. Rows that are empty or not finite get
    weight 1 on `fallback[i]` (a bone index per row; bone 0 if not given).

    `columns` (V, m) int: W holds each row's few entries, W[i, c] being the weight of bone
    columns[i, c] (each bone at most once per row, see `merge_entries`); the result is in
    the same compact form. None: W is (V, J), column = bone.

    Without `parents` the kept weights are scaled up. With `parents` each dropped
    weight goes to the kept bone nearest to it in the bone tree (ties: the heavier), so
    the vertex follows the dropped bone's neighbour instead of the whole mix: the same
    L1 distance to any target (every kept weight only grows), less deformation error."""
    W = np.nan_to_num(np.asarray(W, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    W = np.maximum(W, 0.0)
    V, J = W.shape
    if max_influences is None or max_influences <= 0:
        raise ValueError("max_influences must be a positive integer")
    k = int(min(max_influences, J))
    out = np.zeros_like(W)
    if k < J:
        idx = np.argpartition(-W, k - 1, axis=1)[:, :k]
    else:
        idx = np.broadcast_to(np.arange(J), (V, J))
    rows = np.arange(V)[:, None]
    top = W[rows, idx]
    if min_weight > 0:
        tot = top.sum(axis=1, keepdims=True)
        top = np.where(top >= min_weight * tot, top, 0.0)
    out[rows, idx] = top
    if parents is not None and k < J:
        D = tree_distance(parents)                       # (bones, bones), also for compact rows
        drop = W - out                                   # (V, J) weights that were cut
        dr, db = np.nonzero(drop > 0)
        if len(dr):
            kept = idx[dr]                               # (m, k) candidates for each cut weight
            kw = out[dr[:, None], kept]
            cut_bone, kept_bone = (db, kept) if columns is None else (columns[dr, db], columns[dr[:, None], kept])
            cost = D[cut_bone[:, None], kept_bone] - 1e-3 * kw   # nearest in the tree, then heavier
            cost = np.where(kw > 0, cost, np.inf)
            has = np.isfinite(cost).any(axis=1)
            tgt = kept[np.arange(len(dr)), np.argmin(np.where(np.isfinite(cost), cost, 1e12), axis=1)]
            np.add.at(out, (dr[has], tgt[has]), drop[dr[has], db[has]])
    s = out.sum(axis=1)
    bad = ~(s > 0)
    if bad.any():
        if columns is not None:
            raise ValueError("compact rows (columns) must not be empty")
        fb = np.zeros(V, np.int64) if fallback is None else np.asarray(fallback, dtype=np.int64)
        out[bad] = 0.0
        out[np.flatnonzero(bad), fb[bad]] = 1.0
        s = out.sum(axis=1)
    out /= s[:, None]
    return out


def merge_entries(bones, values):
    """Rows of (bone, weight) entries, a bone possibly repeated: (bones, values) of the
    same shape with each bone once per row (weights added; freed slots weight 0, bone of
    the row's first entry)."""
    n, m = bones.shape
    order = np.argsort(bones, axis=1, kind="stable")
    b = np.take_along_axis(bones, order, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    start = np.ones((n, m), bool)
    start[:, 1:] = b[:, 1:] != b[:, :-1]
    slot = np.cumsum(start, axis=1) - 1                       # run index within the row
    key = (np.arange(n)[:, None] * m + slot).ravel()
    merged = np.bincount(key, v.ravel(), minlength=n * m).reshape(n, m)
    merged_bones = np.repeat(b[:, :1], m, axis=1)
    merged_bones.ravel()[key[start.ravel()]] = b[start]
    return merged_bones, merged


def to_compact(W):
    """Dense rows (n, J) as compact ones (bones, values), each (n, m) with m the most
    non-zero entries in a row, padded with weight 0 (the inverse of to_dense)."""
    m = max(int((W > 0).sum(axis=1).max()), 1)
    bones = (np.argpartition(-W, m - 1, axis=1)[:, :m] if m < W.shape[1]
             else np.tile(np.arange(W.shape[1]), (len(W), 1)))
    return bones, np.take_along_axis(W, bones, axis=1)


def to_dense(bones, values, n_bones: int) -> np.ndarray:
    """Compact rows (bones, values) (n, m) as a dense (n, n_bones) matrix (repeats add)."""
    n = len(bones)
    key = (np.arange(n)[:, None] * n_bones + bones).ravel()
    return np.bincount(key, values.ravel(), minlength=n * n_bones).reshape(n, n_bones)


def rigid_members(W, V, F, heads, tails) -> np.ndarray:
    """W with each member of a group of small separate things (meshprep.group_members: a
    shoal of fish) moved rigidly by one bone, the one nearest its centre
    (docs/auto_skin.md#post-processing): a fish's tail fin sat nearer the bone of the fish
    behind it than its own, which starts at the fish's centre. W unchanged when the
    mesh has a body or its members are characters side by side (meshprep.members_are_small),
    which bend. V, F: the welded mesh W weights; heads, tails (J, 3) the bones.
    """
    members = group_members(V, F)
    if members is None or not members_are_small(V, members):
        return W
    W = np.array(W, dtype=np.float64)
    segments = np.stack([heads, tails], axis=1)
    for idx in members:
        bone = int(nearest_segments(V[idx].mean(axis=0)[None], segments)[1][0])
        W[idx] = 0.0
        W[idx, bone] = 1.0
    return W
