# SPDX-License-Identifier: GPL-3.0-or-later
"""A rig's chains labelled from their direction and where they start: leg, arm, spine,
neck, tail, with a side suffix. The bone names (rig/naming.py) and the orientation found
from the limbs (orientation.py) share them (docs/auto_skeleton.md#bones)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

# A side chain pointing down more steeply than this (z below -0.7 of its length, about
# 45°) is a leg, any other side chain an arm.
LEG_DOWN_Z = 0.7
# A centre chain rising (z) or pointing forward (-y) by more than this fraction of its
# length (30°) is a spine or neck; any other centre chain is a tail.
AHEAD_FRACTION = 0.5
# Chains whose mean x is this close to the plane of symmetry get no .L/.R suffix; tuned.
SIDE_TOLERANCE = 0.02


def labelled_chains(heads, tails, parents, side_tolerance: float, limbs: dict | None = None):
    """Every chain (a run of single-child bones, as a list of bone indices) with its
    (label, side suffix) as bone_names gives it: [(chain, ("leg", ".L")), ...]."""
    children = defaultdict(list)
    for b in range(len(parents)):
        children[parents[b]].append(b)
    roots = children[-1]
    limbs = _with_routes(children, limbs or {})
    return [(chain, _chain_label(heads, tails, parents, roots, chain, side_tolerance, limbs))
            for chain in _bone_chains(children, parents, roots)]


def _with_routes(children, limbs: dict) -> dict:
    """`limbs` plus every bone with a limb's bone hanging from it, by that limb (a bone
    from the spine to one clavicle, the arm hanging from it; the spine too, which
    _chain_label names by direction as a centre chain)."""
    out = dict(limbs)
    order, stack = [], list(children[-1])
    while stack:                     # parents before children
        b = stack.pop()
        order.append(b)
        stack.extend(children[b])
    for b in reversed(order):        # children before parents
        below = next((out[c] for c in children[b] if c in out), None)
        if below and b not in out:
            out[b] = below
    return out


def _bone_chains(children, parents, roots):
    """Runs of single-child bones, each from a bone that starts a branch (list of lists)."""
    starts = [b for b in range(len(parents)) if b not in roots and
              (parents[b] in roots or len(children[parents[b]]) != 1)]
    chains = []
    for s in starts:
        chain = [s]
        while len(children[chain[-1]]) == 1:
            chain.append(children[chain[-1]][0])
        chains.append(chain)
    return chains


def _chain_label(heads, tails, parents, roots, chain, side_tolerance, limbs):
    """(label, side suffix) of a chain from its limb, or its direction and where it starts."""
    a, b = heads[chain[0]], tails[chain[-1]]
    mid_x = np.mean([(heads[c][0] + tails[c][0]) / 2 for c in chain])
    side = ".L" if mid_x > side_tolerance else ".R" if mid_x < -side_tolerance else ""
    d = b - a
    n = np.linalg.norm(d) + 1e-12
    limb = next((limbs[c] for c in chain if c in limbs), None)
    if side and limb:        # a chain from the spine whose first bone is on its plane (a clavicle) too
        return limb, side
    if side and limbs:       # a humanoid's side chain off its arms and legs: an ear, hair, a flap, a sword
        return "extra", side
    if side:
        return ("leg" if d[2] < -LEG_DOWN_Z * n else "arm"), side
    ahead = d[2] > AHEAD_FRACTION * n or d[1] < -AHEAD_FRACTION * n      # up, or forward (-Y) for animals
    from_root = parents[chain[0]] in roots
    if ahead:
        return ("spine" if from_root else "neck"), ""
    if limb == "leg":        # a humanoid's centre chain down to where its legs hang: no tail
        return "pelvis", ""
    return "tail", ""
