# SPDX-License-Identifier: GPL-3.0-or-later
"""What baking a corrective model onto a rigged character computes, before bridge/ writes
it into Blender (docs/correctives.md#bake): the refined weights limited for an engine,
bone tails for moved heads, and shape keys whose values stay within a slider's range."""
from __future__ import annotations

import numpy as np

from ..mesh import bbox_diagonal
from ..skinning.weights import prune
from .model import MONOMIALS, LiveKey


def limit_influences(weights, max_influences: int) -> np.ndarray:
    """core.skinning.weights.prune of the rows that have weight (0: keep every influence,
    rows renormalised); a row without weight stays empty, so that its vertex joins no
    vertex group rather than one chosen for it."""
    W = np.clip(np.nan_to_num(np.asarray(weights, dtype=np.float64)), 0.0, None)
    total = W.sum(axis=1)
    out = np.zeros_like(W)
    rows = total > 0
    if rows.any():
        out[rows] = prune(W[rows], max_influences if max_influences > 0 else W.shape[1])
    return out


def tails_from_heads(heads, old_heads, old_tails, parents) -> np.ndarray:
    """Tails for moved heads: a bone that ended on a child's head ends on that child's new
    head (chains stay connected); others keep their direction, scaled like the distance
    to their parent's head (roots: like the spread of all heads)."""
    heads, old_heads, old_tails = (np.asarray(a, dtype=np.float64) for a in (heads, old_heads, old_tails))
    size = bbox_diagonal(np.vstack([old_heads, old_tails]), 1.0)
    spread = np.linalg.norm(old_heads - old_heads.mean(axis=0))
    overall = np.linalg.norm(heads - heads.mean(axis=0)) / spread if spread > 1e-6 * size else 1.0
    tails = np.empty_like(heads)
    for j, p in enumerate(parents):
        children = np.flatnonzero(np.asarray(parents) == j)
        ends = [c for c in children if np.linalg.norm(old_heads[c] - old_tails[j]) <= 1e-4 * size]
        if ends:
            tails[j] = heads[ends[0]]
            continue
        scale = overall
        if p >= 0:
            before = np.linalg.norm(old_heads[j] - old_heads[p])
            if before > 1e-6 * size:
                scale = np.linalg.norm(heads[j] - heads[p]) / before
        tails[j] = heads[j] + scale * (old_tails[j] - old_heads[j])
    return tails


def bounded_key(key):
    """The same correction with its value scaled into [-1, 1] for every rotation (and the
    offsets scaled up to match): a shape key's value is clamped to its slider range (at most
    ±10 in Blender), which an unseen pose could otherwise exceed. The value is qᵀ·M·q for a
    unit quaternion q, so its extremes are M's eigenvalues."""
    M = np.zeros((4, 4))
    for c, m in zip(np.asarray(key.coeffs, dtype=np.float64), MONOMIALS):
        a, b = "wxyz".index(m[0]), "wxyz".index(m[1])
        M[a, b] += c / 2
        M[b, a] += c / 2
    scale = float(np.abs(np.linalg.eigvalsh(M)).max())
    if scale <= 0:
        return key
    return LiveKey(key.joint, key.name, np.asarray(key.offsets) * scale,
                               np.asarray(key.coeffs, dtype=np.float64) / scale)
