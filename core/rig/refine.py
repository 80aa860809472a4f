# SPDX-License-Identifier: GPL-3.0-or-later
"""Embedding refinement (docs/auto_skeleton.md#refinement): graph nodes moved back to the
centre of their surface region.

Contraction pulls every vertex toward the medial axis, but not evenly: a node of the
collapse graph sits where its contracted vertices ended up, which can be off-centre.
"""
from __future__ import annotations

import numpy as np


def refine_nodes(V_orig, V_contracted, nodes, members):
    """Node position x_i - d_i, d_i = mean displacement of the vertices merged into node i.

    Parameters
    ----------
    V_orig, V_contracted : (V, 3) float
        Proxy vertices before and after contraction.
    nodes : (k,) int
        Surviving vertex of each graph node.
    members : list of k int arrays
        Vertices merged into each node.

    Returns
    -------
    X : (k, 3) float
        Refined node positions.
    radius : (k,) float
        Mean distance from each node to its merged vertices (the local body radius).
    """
    X = np.empty((len(nodes), 3))
    radius = np.empty(len(nodes))
    for k, (i, m) in enumerate(zip(nodes, members)):
        d = (V_contracted[m] - V_orig[m]).mean(axis=0)
        X[k] = V_contracted[i] - d
        radius[k] = np.linalg.norm(V_orig[m] - X[k], axis=1).mean()
    return X, radius
