# SPDX-License-Identifier: GPL-3.0-or-later
"""Bones: the tree of joints turned into bones (head, tail, parent) and their roll."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .parts import ISOTROPIC

# A bone whose direction has |z| above this (within about 45° of vertical) takes
# forward (-Y) as its roll reference, others take up (+Z).
VERTICAL_Z = 0.7
# An end bone spans this fraction of the way to its tip near the skin (measured).
END_REACH = 0.5
# single_bone: the bone spans this fraction of the mesh's extent along its main axis on
# each side of the centre (70 % in all); tuned.
SINGLE_BONE_HALF = 0.35
# single_bone: a main axis with |z| at least this (30° or more off horizontal) points up.
SINGLE_BONE_STEEP_Z = 0.5


def to_bones(pos, par, floating=None):
    """Tree of joints -> bones (head, tail, parent bone). K+1 joints give K bones.

    Each tree edge is a bone. The root bone is the root's edge with the largest
    subtree (the spine of a biped); the root's other edges become its children.

    Parameters
    ----------
    pos : (n, 3) float
        Joint positions, parents first, joint 0 = root.
    par : (n,) int
        Parent joint, -1 for the root.
    floating : (n,) bool, optional
        Nodes (hips, shoulders) whose edge from their parent gets no bone; the bones
        out of them hang, unconnected, off the bone their parent ends or starts (as in
        artists' rigs: a thigh is a child of the pelvis, not of a pelvis-to-hip bone).

    Returns
    -------
    heads, tails : (K, 3) float
    parents : (K,) int
        Parent bone, -1 for the root bone.
    """
    n = len(pos)
    floating = np.zeros(n, bool) if floating is None else np.asarray(floating, bool)
    children = defaultdict(list)
    for v in range(1, n):
        children[par[v]].append(v)
    first = _root_bone_joint(pos, par, children, floating)
    bone_of = {}            # node -> bone ending there (for a floating node: the bone its children hang off)
    heads, tails, parents = [], [], []

    def add(v, c, parent_bone):
        if floating[c] and children[c] and c != first:
            bone_of[c] = parent_bone
            return
        bone_of[c] = len(heads)
        heads.append(pos[v])
        tails.append(pos[c])
        parents.append(parent_bone)

    add(0, first, -1)
    for c in children[0]:
        if c != first:
            add(0, c, 0)
    stack = [first] + [c for c in children[0] if c != first]
    while stack:
        v = stack.pop(0)
        for c in children[v]:
            add(v, c, bone_of[v])
            stack.append(c)
    return np.array(heads), np.array(tails), np.array(parents)


def _root_bone_joint(pos, par, children, floating):
    """The child of the root whose edge becomes the root bone: the largest subtree
    (total bone length), a floating node with children only when nothing else is left."""
    size = np.zeros(len(pos))
    for v in range(len(pos) - 1, 0, -1):      # nodes are numbered parents-first
        size[par[v]] += size[v] + np.linalg.norm(pos[v] - pos[par[v]])
    return max(children[0], key=lambda c: (not floating[c] or not children[c],
                                           size[c] + np.linalg.norm(pos[c] - pos[0])))


def default_up(heads, tails):
    """Roll reference per bone: forward (-Y) for vertical bones, else up (+Z).

    heads, tails: (K, 3). Returns (K, 3) unit vectors perpendicular to the bones.
    """
    d = np.asarray(tails, float) - np.asarray(heads, float)
    d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
    vertical = np.abs(d[:, 2]) > VERTICAL_Z
    ref = np.where(vertical[:, None], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0])
    up = ref - (ref * d).sum(axis=1, keepdims=True) * d
    n = np.linalg.norm(up, axis=1, keepdims=True)
    fallback = np.cross(d, [1.0, 0.0, 0.0])
    up = np.where(n > 1e-6, up / np.maximum(n, 1e-12), fallback)
    return up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-12)


def shorten_end_bones(heads, tails, parents, reach: float = END_REACH):
    """End bones (head, hand, foot, tail tip) stop inside their part, as artists' do.

    The leaf node was pushed most of the way to the skin so that the chain gets its
    joints, but the bone itself ends at `reach` of that length.
    heads, tails: (K, 3); parents: (K,). Returns new tails (K, 3).
    """
    leaf = np.ones(len(heads), bool)
    leaf[parents[parents >= 0]] = False
    tails = tails.copy()
    tails[leaf] = heads[leaf] + reach * (tails[leaf] - heads[leaf])
    return tails


def main_axis(V, weight):
    """(centre (3,), axis (3,)): the weighted centre of the points V (n, 3) and their first
    principal direction (unit; its sign as the SVD gives it)."""
    c = (weight[:, None] * V).sum(axis=0) / weight.sum()
    _, _, vt = np.linalg.svd((V - c) * np.sqrt(weight)[:, None], full_matrices=False)
    return c, vt[0]


def single_bone(V, vertex_area):
    """Blob-like meshes (a slime, a fruit) contract to a point: one bone along the main axis.

    V: (n, 3); vertex_area: (n,) area weights. Returns (joints (2, 3), parents [-1, 0]).
    """
    c, axis = main_axis(V, vertex_area)
    spread = np.linalg.eigvalsh(np.cov((V - c).T, aweights=vertex_area + 1e-30))
    if spread[1] >= ISOTROPIC * spread[2]:     # no main axis (a cube, a ball): any the solver
        axis = np.array([0.0, 0.0, 1.0])       # gives would do, so the bone stands up
    steep_down = not (abs(axis[2]) < SINGLE_BONE_STEEP_Z or axis[2] > 0)
    axis = -axis if steep_down else axis
    half = SINGLE_BONE_HALF * np.ptp((V - c) @ axis)
    return np.array([c - half * axis, c + half * axis]), np.array([-1, 0])
