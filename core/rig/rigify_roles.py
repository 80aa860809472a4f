# SPDX-License-Identifier: GPL-3.0-or-later
"""A Rigify metarig for any character that is not a humanoid (docs/auto_skeleton.md#rigify-metarig-for-any-character):
each chain of the generic rig gets the Rigify rig type of its role, found from the rig's
own structure: its place in the tree, its side, what it ends in, and whether it reaches
the ground. The humanoid metarig is presets.RIGIFY_TYPES'.

Works in the upright frame of core/skeleton.py (up +Z, front -Y, left +X).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..limbs import AHEAD_FRACTION

# The ground: the mesh's points within this fraction of its height of the lowest one;
# a chain reaches it when its end is within GROUND_REACH of its length from one.
GROUND_FRACTION = 0.1
GROUND_REACH = 0.5
# A bone continues its parent's chain when its head is this close to the parent's tail
# (fraction of the rig's size); else it starts a rig of its own.
CONNECT_FRACTION = 1e-4
# Mirror partners: chain ends this close (fraction of the rig's size) to the mirrored ends
MIRROR_FRACTION = 0.05
# Rigify's rig types and the bone counts they take (Rigify's rigs/limbs/*.py, spines/*.py)
PAW_BONES = 4          # limbs.front_paw / rear_paw: 4 or 5 connected bones
LIMB_BONES = 3         # limbs.arm: exactly 3
SPINE_MIN = 3          # spines.basic_spine: 3 or more (pivot_pos 2 lies inside)
CHAIN_MIN = 2          # basic.copy_chain, limbs.simple_tentacle, spines.basic_tail: 2 or more
# The metarig bone "root" would become Rigify's own root control (no deforming bone)
ROOT_NAME = "body"


@dataclass
class Metarig:
    """Per bone: Rigify type ("" continues the chain of its parent), parameters
    ({name: value} of PoseBone.rigify_parameters), role and bone collection."""
    types: list
    params: list
    roles: list
    collections: list
    summary: dict = field(default_factory=dict)   # {rigify type: chains}
    legs: int = 0                                  # chains standing on the ground

    def as_info(self) -> dict:
        return {"types": self.types, "params": self.params, "roles": self.roles,
                "collections": self.collections, "summary": self.summary, "legs": self.legs}


def creature_metarig(heads, tails, parents, ground=None, up=(0.0, 0.0, 1.0),
                     side_tolerance: float = 0.02) -> Metarig:
    """Rigify types for the generic rig's bones (upright frame).

    ground: (k, 3) the mesh's points it stands on (ground_points; None: no chain reaches
    the ground); up: the caller's up axis (Blender's +Z) in this frame, which says what
    "lowest" means (the upright frame is Auto Skeleton's guess, wrong on a spider).
    Chains (runs of single connected children) are cut where a rig type wants fewer
    bones: an IK leg's last 4 (paw) or 3 (limbs.arm) bones start a limb rig, the
    bones above them an FK chain."""
    heads, tails = np.asarray(heads, float), np.asarray(tails, float)
    parents = np.asarray(parents, int)
    K = len(parents)
    types, params, roles, colls = [""] * K, [{} for _ in range(K)], [""] * K, [""] * K
    chains = _chains(heads, tails, parents)
    front = float(np.mean(heads[:, 1]))            # legs ahead of the middle are front legs
    kinds = {id(c): _kind(c, heads, tails, parents, ground, np.asarray(up, float), side_tolerance)
             for c in chains}
    _pair_legs(chains, kinds, heads, tails)
    body = next(c for c in chains if kinds[id(c)][0] == "body")
    spine = body if len(body) >= SPINE_MIN else _pick(chains, kinds, "spine", lambda c: len(c) >= SPINE_MIN, key=len)
    head = _pick(chains, kinds, "head", lambda c: True, key=lambda c: tails[c[-1], 2] - tails[c[-1], 1])
    for chain in chains:
        kind, side = kinds[id(chain)]
        for start, rig_type, p, role in _rigs(chain, kind, chain is spine, chain is head, heads, front):
            types[start], params[start] = rig_type, p
            for b in chain[chain.index(start):]:
                roles[b] = role
        for b in chain:
            colls[b] = _collection(roles[b], side)
    summary = defaultdict(int)
    for t in types:
        if t:
            summary[t] += 1
    legs = sum(kind == "leg" for kind, _ in kinds.values())
    return Metarig(types, params, roles, colls, dict(sorted(summary.items())), legs)


def group_metarig(n_members: int) -> Metarig:
    """A group (a shoal): the root and one bone per member, each its own control."""
    K = n_members + 1
    return Metarig(["basic.super_copy"] * K, [{}] * K, ["body"] + ["member"] * n_members,
                   ["Torso"] * K, {"basic.super_copy": K})


def _size(heads, tails) -> float:
    """The rig's bounding-box diagonal (1 for a rig of one point)."""
    return float(np.linalg.norm(np.ptp(np.vstack([heads, tails]), axis=0))) or 1.0


def _chains(heads, tails, parents):
    """Runs of bones each the only child of the one before and connected to its tail."""
    size = _size(heads, tails)
    children = defaultdict(list)
    for b, p in enumerate(parents):
        children[int(p)].append(b)

    def continues(b):
        p = parents[b]
        return p >= 0 and len(children[p]) == 1 and np.linalg.norm(heads[b] - tails[p]) <= CONNECT_FRACTION * size
    chains = []
    for s in range(len(parents)):
        if continues(s):
            continue
        chain = [s]
        while len(children[chain[-1]]) == 1 and continues(children[chain[-1]][0]):
            chain.append(children[chain[-1]][0])
        chains.append(chain)
    return chains


def ground_points(vertices, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """The mesh points a leg stands on: those within GROUND_FRACTION of the height (along
    `up`) above the lowest one."""
    z = np.asarray(vertices, float) @ np.asarray(up, float)
    return np.asarray(vertices, float)[z <= z.min() + GROUND_FRACTION * np.ptp(z)]


def _kind(chain, heads, tails, parents, ground, up, side_tolerance):
    """(kind, side): kind "body" (the root's chain), "leg" (a side chain ending on the
    ground), "limb" (other side chains: wings, fins, ears, antennae), "spine" (a centre
    chain going on, ahead, into another centre chain), "head" (a centre chain ahead that
    no centre chain goes on from), "tail" (a centre chain behind)."""
    mid_x = np.mean((heads[chain, 0] + tails[chain, 0]) / 2)
    side = ".L" if mid_x > side_tolerance else ".R" if mid_x < -side_tolerance else ""
    if parents[chain[0]] < 0:
        return "body", ""
    if side:
        return ("leg" if _grounded(chain, heads @ up, tails @ up, tails[chain[-1]], ground) else "limb"), side
    d = tails[chain[-1]] - heads[chain[0]]
    n = np.linalg.norm(d) + 1e-12
    ahead = d[2] > AHEAD_FRACTION * n or d[1] < -AHEAD_FRACTION * n
    # the body goes on past a spine; a head ends it (ears, antennae, horns may hang from it)
    centre_child = any(abs(heads[c, 0] + tails[c, 0]) / 2 <= side_tolerance for c in np.flatnonzero(parents == chain[-1]))
    if ahead:
        return ("spine" if centre_child else "head"), ""
    return "tail", ""


def _grounded(chain, head_z, tail_z, end, ground):
    """A chain stands on the ground when it ends at its lowest point (heights head_z,
    tail_z along the up axis), below its start, with ground points within GROUND_REACH
    of its length from that end (a leg's end bone stops short of the tip:
    rig.shorten_end_bones)."""
    if ground is None or not len(ground):
        return False
    low = min(head_z[chain].min(), tail_z[chain].min())
    length = np.sum(np.abs(tail_z[chain] - head_z[chain]))     # how far it climbs and drops
    reach = np.linalg.norm(ground - end, axis=1).min()
    return bool(tail_z[chain[-1]] <= low + 1e-9 and tail_z[chain[-1]] < head_z[chain[0]]
                and reach <= GROUND_REACH * max(length, 1e-9))


def _pair_legs(chains, kinds, heads, tails):
    """Mirror partners share their kind: a side chain whose mirror image (same bone count,
    ends within MIRROR_FRACTION of the rig's size of the mirrored ends) is a leg is a leg
    too, so that IK legs come in pairs on a character posed a little off its symmetry."""
    size = _size(heads, tails)
    flip = np.array([-1.0, 1.0, 1.0])
    sides = [c for c in chains if kinds[id(c)][0] in ("leg", "limb")]
    for c in sides:
        if kinds[id(c)][0] != "leg":
            continue
        for m in sides:
            if (kinds[id(m)][0] == "limb" and len(m) == len(c)
                    and np.linalg.norm(heads[m[0]] - heads[c[0]] * flip) <= MIRROR_FRACTION * size
                    and np.linalg.norm(tails[m[-1]] - tails[c[-1]] * flip) <= MIRROR_FRACTION * size):
                kinds[id(m)] = ("leg", kinds[id(m)][1])


def _pick(chains, kinds, kind, fits, key):
    """The one chain of `kind` that gets a rig Rigify allows once (the torso, the head
    controls): the largest by `key` among those that fit."""
    found = [c for c in chains if kinds[id(c)][0] == kind and fits(c)]
    return max(found, key=key) if found else None


def _rigs(chain, kind, is_spine, is_head, heads, front):
    """[(start bone, rigify type, parameters, role)] for the rigs that cover `chain`."""
    n = len(chain)
    if kind == "leg" and n >= LIMB_BONES:
        k = PAW_BONES if n >= PAW_BONES else LIMB_BONES
        limb = chain[n - k]
        rig_type = "limbs.arm" if k == LIMB_BONES else (
            "limbs.front_paw" if heads[chain[0], 1] < front else "limbs.rear_paw")
        # one deforming bone per metarig bone (Rigify's default cuts the upper two in 2)
        return _fk(chain[:n - k], "leg") + [(limb, rig_type, {"segments": 1}, "leg")]
    if kind == "body" or (kind == "spine" and is_spine):
        if is_spine:
            return [(chain[0], "spines.basic_spine", {}, "spine")]
        return _fk(chain, "body" if kind == "body" else "spine")
    if kind == "head" and is_head:
        return [(chain[0], "spines.super_head", {}, "head")]
    if kind == "tail" and n >= CHAIN_MIN:
        return [(chain[0], "spines.basic_tail", {}, "tail")]
    if kind == "limb" and n >= LIMB_BONES:
        return [(chain[0], "limbs.simple_tentacle", {}, "limb")]
    return _fk(chain, kind)


def _fk(chain, role):
    """An FK chain: basic.copy_chain, or basic.super_copy on a single bone."""
    if not chain:
        return []
    return [(chain[0], "basic.copy_chain" if len(chain) >= CHAIN_MIN else "basic.super_copy", {}, role)]


def _collection(role, side):
    """The metarig bone collection (a row of Rigify's rig UI) of a role."""
    if role in ("leg", "limb"):
        return ("Leg" if role == "leg" else "Limb") + side
    return {"head": "Head", "tail": "Tail"}.get(role, "Torso")
