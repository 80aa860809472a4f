# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint budget: a bone exists only where it has vertices to move, and, on a character
without the humanoid's landmarks, a joint only where its chain bends or narrows
(docs/auto_skeleton.md#bone-support, #straight-chains).

Chains are resampled by length, and slender chains (fingers, fins) get up to two
bones, whatever the mesh's resolution. On a low-poly mesh that leaves bones with two or
three vertices nearest them, or none: noise for an animator, and weights that cannot
follow them. Here every bone needs `min_support` vertices of the mesh nearest to it; the
least supported bone is merged into the neighbour that continues it most straightly
(or, at the end of a chain, dropped) until every bone has enough or cannot be merged.
"""
from __future__ import annotations

import numpy as np

from ..proximity import nearest_segments
from .graph import compact_parents
from .symmetry import mirror_partners

# A chain joint turning less than this between its two bones is no bend
# (straighten_chains; docs/auto_skeleton.md#straight-chains).
STRAIGHT_DEGREES = 10.0
# A chain joint whose body radius is below this share of both neighbours' is a narrowing
# (an elbow, a wrist, a waist): it stays.
NARROWING = 0.85


def bone_support(points, pos, par, floating) -> np.ndarray:
    """(n,) number of `points` nearest to each joint's bone (the edge from its parent);
    0 for the root and for floating joints, whose edge is no bone."""
    bones = np.flatnonzero((par >= 0) & ~floating)
    out = np.zeros(len(pos), np.int64)
    if len(bones) == 0 or len(points) == 0:
        return out
    _, nearest = nearest_segments(points, np.stack([pos[par[bones]], pos[bones]], axis=1))
    out[bones] = np.bincount(nearest, minlength=len(bones))
    return out


def prune_unsupported(pos, par, rad, socket, points, min_support: int, pair_tolerance: float | None = None):
    """The joint tree without bones that have fewer than `min_support` of `points`
    (the mesh's vertices) nearest to them.

    Repeatedly, the least supported bone (edge parent -> j) under the limit goes:
    - j ends a chain (no children): its parent p is removed if it is an ordinary chain
      joint (one child, not the root, not a socket), so the end bone still reaches the
      tip; else the bone is dropped with j (and a socket left without children with it);
    - j continues a chain (one child): j is removed and its bone merges with the child's,
      or, if that turns more, the parent p is removed (when p is an ordinary chain joint)
      and it merges with the parent's bone;
    - j is a junction: its parent goes if it is an ordinary chain joint, else it stays.
    The root, junctions and sockets are never removed for their own bone.
    pair_tolerance: on a mirror-symmetric character, joints within it of each other's
    mirror image (x -> -x) are a pair; a pair's support is the smaller of the two and
    both go together, so the rig stays symmetric.

    Parameters: pos (n, 3), par (n,) parents first with joint 0 the root, rad (n,),
    socket (n,) bool (as from simplify_chains); points (m, 3), same frame.
    Returns (pos, par, rad, socket) renumbered, parents first.
    """
    pos, par = np.asarray(pos, dtype=np.float64), np.asarray(par, dtype=np.int64).copy()
    rad, socket = np.asarray(rad), np.asarray(socket, bool)
    points = np.asarray(points, dtype=np.float64)
    partner = _partners(pos, pair_tolerance)
    alive = np.ones(len(pos), bool)
    stuck = np.zeros(len(pos), bool)
    while True:
        support = np.zeros(len(pos), np.int64)
        support[alive] = bone_support(points, pos[alive], compact_parents(par, alive), socket[alive])
        paired = partner >= 0
        paired[paired] = alive[partner[paired]]
        support[paired] = np.minimum(support[paired], support[partner[paired]])
        weak = [(support[j], j) for j in np.flatnonzero(alive)
                if par[j] >= 0 and not socket[j] and not stuck[j] and support[j] < min_support]
        if not weak:
            break
        _, j = min(weak)
        for k in {j, partner[j]} - {-1}:
            if alive[k] and not _prune(k, pos, par, socket, alive):
                stuck[k] = True
    keep = np.flatnonzero(alive)
    return pos[keep], compact_parents(par, alive), rad[keep], socket[keep]


def straighten_chains(pos, par, rad, socket, max_length: float, pair_tolerance: float | None = None):
    """The joint tree without chain joints that neither bend nor narrow.

    Repeatedly the straightest ordinary chain joint j (one child, not the root, not a
    socket) goes while it turns less than STRAIGHT_DEGREES between its bones, its radius
    is at least NARROWING x both neighbours' and the bone it leaves (parent -> child) is at
    most `max_length` long. A joint there would only cut a straight limb, fin or tail
    into shorter pieces. pair_tolerance: as in prune_unsupported, mirror partners go together.

    Parameters and result as prune_unsupported (pos, par, rad, socket), renumbered.
    """
    pos, par = np.asarray(pos, dtype=np.float64), np.asarray(par, dtype=np.int64).copy()
    rad, socket = np.asarray(rad), np.asarray(socket, bool)
    partner = _partners(pos, pair_tolerance)
    alive = np.ones(len(pos), bool)
    limit = np.radians(STRAIGHT_DEGREES)
    while True:
        children = np.bincount(par[alive & (par >= 0)], minlength=len(pos))
        straight = []
        for j in np.flatnonzero(alive & (par >= 0) & ~socket & (children == 1)):
            p, c = par[j], int(np.flatnonzero(alive & (par == j))[0])
            turn = _turn(pos, p, j, c)
            if turn < limit and rad[j] >= NARROWING * min(rad[p], rad[c]) \
                    and np.linalg.norm(pos[c] - pos[p]) <= max_length:
                straight.append((turn, j))
        if not straight:
            break
        _, j = min(straight)
        for k in {j, partner[j]} - {-1}:
            if alive[k] and par[k] >= 0 and not socket[k] and children[k] == 1:
                _remove(k, par, alive)
    keep = np.flatnonzero(alive)
    return pos[keep], compact_parents(par, alive), rad[keep], socket[keep]


def _prune(j, pos, par, socket, alive) -> bool:
    """Remove bone parent -> j by removing a joint (prune_unsupported); False if none can go."""
    children = np.bincount(par[alive][1:], minlength=len(par))
    p = par[j]
    if children[j] == 0 and _ordinary(p, par, socket, children):
        _remove(p, par, alive)           # an end bone reaching the tip, not a shorter chain
    elif children[j] == 0:
        alive[j] = False
        if socket[p] and children[p] == 1:
            _remove(p, par, alive)
    elif children[j] == 1:
        c = int(np.flatnonzero(alive & (par == j))[0])
        parent_goes = _ordinary(p, par, socket, children) and _turn(pos, par[p], p, j) < _turn(pos, p, j, c)
        _remove(p if parent_goes else j, par, alive)
    elif _ordinary(p, par, socket, children):
        _remove(p, par, alive)
    else:
        return False
    return True


def _partners(pos, tolerance) -> np.ndarray:
    """(n,) each joint's mirror partner on the other side (symmetry.mirror_partners), or -1."""
    if tolerance is None:
        return np.full(len(pos), -1)
    partner = mirror_partners(pos, tolerance)
    return np.where(partner == np.arange(len(pos)), -1, partner)


def _ordinary(j, par, socket, children) -> bool:
    """A chain joint that may be removed: one child, not the root, not a socket."""
    return par[j] >= 0 and not socket[j] and children[j] == 1


def _remove(j, par, alive):
    """Joint j goes; its children hang from its parent."""
    par[alive & (par == j)] = par[j]
    alive[j] = False


def _turn(pos, a, b, c) -> float:
    """Angle (radians) between a -> b and b -> c: how much a chain bends at b."""
    u, v = pos[b] - pos[a], pos[c] - pos[b]
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return float(np.arccos(np.clip(u @ v / (nu * nv), -1.0, 1.0)))
