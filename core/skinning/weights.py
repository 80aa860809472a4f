# SPDX-License-Identifier: GPL-3.0-or-later
"""Weight post-processing: scatter candidate weights to all bones, prune to the
engine's influence limit, renormalise; every row sums to 1 and none is empty."""
from __future__ import annotations

import numpy as np


def scatter(candidates, probs, n_bones: int) -> np.ndarray:
    """(V, K) candidate bone indices + (V, K) weights -> dense (V, J). Repeated
    candidates (characters with fewer than K bones) add up."""
    c = np.asarray(candidates, dtype=np.int64)
    p = np.asarray(probs, dtype=np.float64)
    V, K = c.shape
    W = np.zeros((V, n_bones))
    np.add.at(W, (np.repeat(np.arange(V), K), c.ravel()), p.ravel())
    return W


def prune(W, max_influences: int = 4, min_weight: float = 0.0, fallback=None) -> np.ndarray:
    """Keep each row's `max_influences` largest weights (and those >= min_weight of the
    row's total), renormalise to sum 1. Rows that are empty or not finite get weight 1
    on `fallback[i]` (a bone index per row; bone 0 if not given)."""
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
    s = out.sum(axis=1)
    bad = ~(s > 0)
    if bad.any():
        fb = np.zeros(V, np.int64) if fallback is None else np.asarray(fallback, dtype=np.int64)
        out[bad] = 0.0
        out[np.flatnonzero(bad), fb[bad]] = 1.0
        s = out.sum(axis=1)
    out /= s[:, None]
    return out
