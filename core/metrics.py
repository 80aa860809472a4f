# SPDX-License-Identifier: GPL-3.0-or-later
"""Skeleton quality metrics (docs/metrics.md#skeleton-metrics): pure numpy/scipy, never bpy.

All functions take raw coordinates and return raw distances; the benchmark divides
them by `bbox_diagonal(rest vertices)` and reports percent.

Definitions (as in RigNet, Xu et al. 2020), for a predicted skeleton P and a
reference skeleton G:

- CD-J2J  = ½ [ mean_{p∈J_P} min_{g∈J_G} |p−g|  +  mean_{g∈J_G} min_{p∈J_P} |g−p| ]
  (J_* = joint positions).
- CD-J2B  = ½ [ mean_{p∈J_P} min_{b∈B_G} d(p,b)  +  mean_{g∈J_G} min_{b∈B_P} d(g,b) ]
  (B_* = bone segments, d = Euclidean distance from a point to a segment).
- CD-B2B  = ½ [ mean_{s∈S_P} min_{b∈B_G} d(s,b)  +  mean_{s∈S_G} min_{b∈B_P} d(s,b) ]
  where S_* are points sampled evenly along every bone of that skeleton, at most
  `spacing` apart, endpoints included. Every sample weighs the same, so a bone
  counts in proportion to its length.

Inside test (joints inside the mesh): `inside_mesh`, `winding_number` and
`mesh_components` are core/proximity.py's, as Auto Skeleton uses them.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from . import mesh
from .proximity import (InsideRule, inside_mesh, mesh_components, nearest_segments, points_array, segments_array,
                        winding_number)

__all__ = [
    "bbox_diagonal", "point_segment_distance", "sample_bones",
    "cd_j2j", "cd_j2b", "cd_b2b", "winding_number", "inside_mesh",
    "mesh_components", "InsideRule",
]


def bbox_diagonal(V) -> float:
    """Length of the diagonal of the axis-aligned bounding box of points V (N,3)."""
    return mesh.bbox_diagonal(points_array(V, "V"))


def point_segment_distance(points, segments) -> np.ndarray:
    """Distance from each point (N,3) to its nearest segment of (K,2,3): returns (N,).

    Zero-length segments count as points. Brute force in chunks (N·K work).
    """
    return nearest_segments(points, segments)[0]


def sample_bones(bones, spacing: float) -> np.ndarray:
    """Points evenly along each segment of (K,2,3), at most `spacing` apart, ends included.

    A segment of length L gets ceil(L/spacing)+1 samples (a zero-length one gets 1).
    """
    S = segments_array(bones, "bones")
    if not spacing > 0:
        raise ValueError("spacing must be > 0")
    lengths = np.linalg.norm(S[:, 1] - S[:, 0], axis=1)
    counts = np.where(lengths > 0, np.ceil(lengths / spacing).astype(np.int64) + 1, 1)
    seg = np.repeat(np.arange(len(S)), counts)
    first = np.cumsum(counts) - counts
    k = np.arange(len(seg)) - first[seg]
    denom = np.maximum(counts[seg] - 1, 1)
    t = (k / denom)[:, None]
    return S[seg, 0] * (1.0 - t) + S[seg, 1] * t


def cd_j2j(pred_joints, gt_joints) -> float:
    """Symmetric mean nearest-joint distance (CD-J2J, see module docstring)."""
    P = points_array(pred_joints, "pred_joints")
    G = points_array(gt_joints, "gt_joints")
    d_pg = cKDTree(G).query(P)[0]
    d_gp = cKDTree(P).query(G)[0]
    return 0.5 * (float(d_pg.mean()) + float(d_gp.mean()))


def cd_j2b(pred_joints, pred_bones, gt_joints, gt_bones) -> float:
    """Symmetric mean joint-to-nearest-bone distance (CD-J2B, see module docstring).

    Bones are (K,2,3) segments (head, tail).
    """
    d_pg = point_segment_distance(pred_joints, gt_bones)
    d_gp = point_segment_distance(gt_joints, pred_bones)
    return 0.5 * (float(d_pg.mean()) + float(d_gp.mean()))


def cd_b2b(pred_bones, gt_bones, *, spacing: float | None = None) -> float:
    """Symmetric mean bone-sample-to-nearest-bone distance (CD-B2B, see module docstring).

    spacing: the largest gap between samples along a bone, in input units. Default:
    1/200 of the bounding-box diagonal of all bone endpoints of both skeletons.
    """
    P = segments_array(pred_bones, "pred_bones")
    G = segments_array(gt_bones, "gt_bones")
    if spacing is None:
        ends = np.concatenate([P.reshape(-1, 3), G.reshape(-1, 3)])
        diag = bbox_diagonal(ends)
        spacing = diag / 200.0 if diag > 0 else 1.0
    d_pg = point_segment_distance(sample_bones(P, spacing), G)
    d_gp = point_segment_distance(sample_bones(G, spacing), P)
    return 0.5 * (float(d_pg.mean()) + float(d_gp.mean()))
