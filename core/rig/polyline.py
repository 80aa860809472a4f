# SPDX-License-Identifier: GPL-3.0-or-later
"""Polylines ((k, 3) point arrays): length, the point at a share of the length, and the
share at which a point projects (humanoid paths, finger centre lines); points' distance
from a straight line (off_axis)."""
from __future__ import annotations

import numpy as np


def length(path) -> float:
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())


def point_at(path, fraction: float) -> np.ndarray:
    """The point at `fraction` of a polyline's length."""
    path = np.asarray(path, dtype=np.float64)
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    if arc[-1] <= 0:
        return path[0].copy()
    return np.array([np.interp(fraction * arc[-1], arc, path[:, k]) for k in range(3)])


def fraction_of(path, point) -> float:
    """Where `point` projects onto a polyline, as a fraction of its length (bench/humanoid.py
    measures the artists' proportions with it)."""
    path = np.asarray(path, dtype=np.float64)
    a, b = path[:-1], path[1:]
    d = b - a
    t = np.clip(np.einsum("ij,ij->i", point - a, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-30), 0, 1)
    near = a + t[:, None] * d
    k = int(np.argmin(np.linalg.norm(near - point, axis=1)))
    seg = np.linalg.norm(d, axis=1)
    total = seg.sum()
    return float((seg[:k].sum() + t[k] * seg[k]) / total) if total > 0 else 0.0


def off_axis(points, axis) -> np.ndarray:
    """Each point's distance from the line through the origin along the unit `axis`."""
    return np.linalg.norm(points - np.outer(points @ axis, axis), axis=1)
