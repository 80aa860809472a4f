# SPDX-License-Identifier: GPL-3.0-or-later
"""Naming: readable, mirror-friendly bone names (root, spine_01, arm_02.L, leg_01.R ...)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..limbs import labelled_chains
from ..symmetry import MIRROR

# Chains with the same label are numbered by depth, then height, then distance from the
# plane, each rounded to this many decimals (normalised frame) so that float noise
# between mirror images or equal heights does not decide the order.
ORDER_DECIMALS = 3


def bone_names(heads, tails, parents, side_tolerance: float, limbs: dict | None = None):
    """Readable, mirror-friendly names: root, spine_01, neck_01, tail_01, arm_01.L, leg_02.R ...

    Chains (runs of single-child bones) get a label from their direction and where
    they start, and a side suffix from their position relative to the x = 0 plane;
    `limbs` (bone -> "arm" or "leg", humanoid.limb_bones) labels a humanoid's side chains
    by the limb they belong to or that hangs from them instead (an arm hanging in A-pose
    is no leg), its other side chains "extra" (ears, a flap, a sword), and numbers its
    limb chains first (arm_01 is the arm, not the bone it hangs from).
    Right-side chains take the name of their mirror image on the left, so that
    Blender's mirror tools pair them.

    Parameters
    ----------
    heads, tails : (K, 3) float
    parents : (K,) int
        Parent bone, -1 for the root bone.
    side_tolerance : float
        Chains whose mean x is within this of the plane are centre chains.

    Returns
    -------
    list of K unique str
    """
    K = len(heads)
    names = [None] * K
    names[int(np.flatnonzero(np.asarray(parents) < 0)[0])] = "root"
    key = _chain_order(heads, parents, limbs)
    groups = defaultdict(list)
    for chain, label in labelled_chains(heads, tails, parents, side_tolerance, limbs):
        groups[label].append(chain)
    for (label, side), group in groups.items():
        if side != ".R":
            for g, chain in enumerate(sorted(group, key=key)):
                _assign(names, chain, label if g == 0 else f"{label}{g + 1}", side)
    for (label, side), group in groups.items():
        if side == ".R":
            _name_right(names, heads, tails, group, groups.get((label, ".L"), []), label, key)
    for b in range(K):          # root-level extras without a chain (should not happen)
        if names[b] is None:
            names[b] = f"bone_{b:02d}"
    return _unique(names)


def _chain_order(heads, parents, limbs=None):
    """Sort key for chains with the same label: a humanoid's limb chains before the bones
    its limbs hang from (`limbs`: the thigh is leg_01, the bone from the pelvis out to the
    hip socket leg2_01), then shallow first, then high, then central."""
    limbs = limbs or {}
    depth = np.zeros(len(parents), int)
    for b in range(len(parents)):
        p = parents[b]
        while p >= 0:
            depth[b] += 1
            p = parents[p]

    def key(ch):
        route = bool(limbs) and not any(c in limbs for c in ch)
        return (route, depth[ch[0]], -round(heads[ch[0]][2], ORDER_DECIMALS),
                round(abs(heads[ch[0]][0]), ORDER_DECIMALS))
    return key


def _assign(names, chain, base, side):
    """Name a chain's bones base_01, base_02 ... with the side suffix."""
    for k, b in enumerate(chain):
        names[b] = f"{base}_{k + 1:02d}{side}"


def _name_right(names, heads, tails, group, left_group, label, key):
    """Right-side chains take the base name of the nearest mirror image among the left
    chains with the same label (each once); the others get the next free number."""
    mirrors = {names[ch[0]].rsplit("_", 1)[0]: ch for ch in left_group}
    used = set()
    for chain in sorted(group, key=key):
        a, b = heads[chain[0]] * MIRROR, tails[chain[-1]] * MIRROR
        free = [(np.linalg.norm(heads[m[0]] - a) + np.linalg.norm(tails[m[-1]] - b), base)
                for base, m in mirrors.items() if base not in used]
        if free:
            base = min(free)[1]
        else:
            n = len(mirrors) + len(used) + 1
            base = label if n == 1 else f"{label}{n}"
        used.add(base)
        _assign(names, chain, base, ".R")


def _unique(names):
    """Names made unique Blender-style: a repeat gets .001, .002 ..."""
    seen, out = defaultdict(int), []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}.{seen[n] - 1:03d}")
    return out


def centre_off_sides(names, parents) -> np.ndarray:
    """parents with every centre bone (a name without .L / .R) that hangs from a side
    bone hung from the nearest centre bone above it instead. The greedy tree can run
    spine -> left clavicle -> neck: the head then turned with a clavicle (every MPFB body,
    Quaternius' skeleton, bat and fish; docs/auto_skeleton.md#bones). Positions, and so
    the benchmarks, do not change."""
    sided = [n.endswith((".L", ".R")) for n in names]
    parents = np.array(parents)
    for b, p in enumerate(parents):
        if p >= 0 and not sided[b] and sided[p]:
            while p >= 0 and sided[p]:
                p = parents[p]
            if p >= 0:                 # (a rig whose root has a side keeps its tree)
                parents[b] = p
    return parents
