# SPDX-License-Identifier: GPL-3.0-or-later
"""A group of small separate things (a shoal of fish, a swarm): one bone per member
under one root (docs/auto_skeleton.md#groups).

Joined into one skeleton graph, the members got bones across the gaps between them
(60 joints for a shoal of 13 fish of 27 vertices each). A member too small to be a
character of its own moves as a whole and turns about its centre of mass: its bone
starts there and runs along its main axis to its end; the root at the group's centre
moves them all.
"""
from __future__ import annotations

import numpy as np

from .bones import main_axis


def group_bones(V, vertex_area, members):
    """Bones of a group: the root, then one bone per member.

    V (n, 3); vertex_area (n,) area per vertex; members: list of (n_i,) vertex indices
    (meshprep.group_members). A member's bone goes from its centre of mass to its end
    along its main axis; every member bone points the same way along the group's common
    axis (towards + on the world axis nearest it), and the members are numbered along the
    group's longest side.

    Returns (heads (m + 1, 3), tails (m + 1, 3), parents (m + 1,)); the root bone points
    up (+Z) from the group's centre, as long as the median member bone.
    """
    V = np.asarray(V, dtype=np.float64)
    centres, axes = map(np.array, zip(*(main_axis(V[idx], vertex_area[idx] + 1e-30) for idx in members)))
    common = np.linalg.eigh(axes.T @ axes)[1][:, -1]       # the members' shared direction,
    common *= np.sign(common[np.argmax(np.abs(common))])  # towards + on its main axis (any LAPACK)
    axes *= np.where(axes @ common < 0, -1.0, 1.0)[:, None]
    reach = np.array([((V[idx] - c) @ a).max() for idx, c, a in zip(members, centres, axes)])
    order = np.argsort(centres[:, int(np.argmax(np.ptp(V, axis=0)))], kind="stable")
    every = np.concatenate(members)
    centre = vertex_area[every] @ V[every] / vertex_area[every].sum()
    heads = np.vstack([centre, centres[order]])
    tails = np.vstack([centre + [0.0, 0.0, float(np.median(reach))], (centres + reach[:, None] * axes)[order]])
    parents = np.r_[-1, np.zeros(len(members), np.int64)]
    return heads, tails, parents
