# SPDX-License-Identifier: GPL-3.0-or-later
"""Chain simplification: the rooted tree's chains resampled to a sensible joint count.

A chain runs between key nodes (the root, junctions, leaves). Each is cut into about
one bone per `bone_length`, with joints moved to bends (knees, hocks) or thin places
(elbows, wrists); limbs get a socket joint (hip, shoulder) on their own axis; tiny
internal bones are merged away.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .symmetry import mirrored_counts
from .tree import orient

# A chain turning this much is bent at a joint (knee, hock, elbow).
BEND_DEGREES = 10.0
# Bend angles are measured between the points this many bone lengths before and after
# a node along the chain: the scale of a joint, not of collapse noise; tuned.
BEND_REACH = 0.3
# A joint moves to a bend at most this many bone lengths from its evenly spaced place
# (0.5: the search windows of neighbouring joints touch but do not overlap).
BEND_WINDOW = 0.5
# Without a bend, a joint moves to the thinnest node at most this many bone lengths
# from its evenly spaced place; tuned.
NARROW_WINDOW = 0.25
# A slender chain (a finger, a toe, a claw) gets one bone per body diameter of its length,
# up to this many, however short bone_length would make it. A humanoid's separable
# fingers get three bones each elsewhere (humanoid.limbs._standard_hands); 3 here cost 0.05 joints
# x artist on the benchmark for 0.01 CD-J2J (docs/auto_skeleton.md#joint-budget).
MAX_SLENDER_BONES = 2
# A chain whose cross-section is flatter than this (_flatness: a fin, an ear, a wing's
# membrane) gets no slender bones: it bends as a sheet, not at knuckles.
FLAT_SECTION = 0.5
# A chain gets another bone only once it is this many bone lengths longer than a whole
# number of them (up to 1.25 bone lengths: one bone); tuned.
SEGMENT_ROUNDING = 0.25
# A socket's limb axis runs from the limb's first node out of the junction to a node at
# least this fraction of the rest of the limb further on (and one junction radius);
# tuned.
SOCKET_AXIS_FRACTION = 0.25
# Chains whose ends are within this many merge lengths of each other's mirror image
# are a left/right pair and get the same bone count.
MIRROR_CHAIN_TOLERANCE = 2


def simplify_chains(X, radius, adj, root, *, bone_length: float, merge_length: float, sections=None,
                    flat_bone_length: float | None = None):
    """Rebuild the tree with chains resampled to about one joint per bone_length.

    Parameters
    ----------
    X : (k, 3) float
        Node positions.
    radius : (k,) float
        Body radius at each node.
    adj : dict
        The tree (see graph.py).
    root : int
        Root node.
    bone_length : float
        Target bone length.
    merge_length : float
        Internal bones shorter than this are merged; also the smallest socket offset.
    sections : (V (p, 3), members: list of k int arrays), optional
        The proxy's vertices and those merged into each node: a chain whose cross-section
        is flat (a fin, an ear) gets no extra slender bones (_flatness).
    flat_bone_length : float, optional
        Target bone length of flat chains (default bone_length).

    Returns
    -------
    pos : (m, 3) float
        Joint positions, parents first, joint 0 = root.
    par : (m,) int
        Parent joint, -1 for the root.
    rad : (m,) float
        Body radius at each joint.
    is_socket : (m,) bool
        Socket joints (hips, shoulders).
    """
    plans = _plan_chains(X, radius, adj, root, merge_length)
    flat = [False] * len(plans) if sections is None else \
        [_flatness(nodes, X, *sections) < FLAT_SECTION for nodes in _chains(adj, *orient(adj, root))]
    flat_bone_length = flat_bone_length or bone_length
    counts = mirrored_counts([_segment_count(P, R, flat_bone_length if f else bone_length, slender=not f)
                              for (_, _, P, R, _), f in zip(plans, flat)],
                             [P for _, _, P, _, _ in plans],
                             tolerance=MIRROR_CHAIN_TOLERANCE * merge_length)
    pos, par, rad, sockets = _resample(X, radius, root, plans, counts)
    keep, par = _merge_short_internal(pos, par, merge_length)
    return pos[keep], par, rad[keep], np.isin(keep, list(sockets))


def _plan_chains(X, radius, adj, root, merge_length):
    """Per chain: (start node, socket point or None, polyline (n, 3), radii (n,), end node).

    A chain that starts at a junction (or the root) starts at its socket point when it
    has one; the polyline then runs from the socket on.
    """
    parent, order = orient(adj, root)
    branching = {v for v in adj if len(adj[v]) >= 3} | {root}
    plans = []
    for chain in _chains(adj, parent, order):
        P, R, h = X[chain], radius[chain], None
        if chain[0] in branching:
            socket = _socket(P, radius[chain[0]], merge_length)
            if socket is not None:
                h, e = socket        # joint h, then the limb continues from node e
                P, R = np.vstack([h, P[e:]]), np.concatenate([[radius[chain[0]]], R[e:]])
        plans.append((chain[0], h, P, R, chain[-1]))
    return plans


def _resample(X, radius, root, plans, counts):
    """Joints of the planned chains, each cut into its count of bones.

    Returns (pos (m, 3), par (m,), rad (m,), set of socket joints); joint 0 = root.
    """
    pos, par, rad = [X[root]], [-1], [radius[root]]
    sockets = set()
    new_id = {root: 0}
    for (first, h, P, R, last), n_seg in zip(plans, counts):
        start = new_id[first]
        if h is not None:
            pos.append(h)
            par.append(start)
            rad.append(radius[first])
            start = len(pos) - 1
            sockets.add(start)
        for p in _split_points(P, R, n_seg):
            pos.append(p)
            par.append(start)
            rad.append(R[np.linalg.norm(P - p, axis=1).argmin()])
            start = len(pos) - 1
        pos.append(P[-1])
        par.append(start)
        rad.append(radius[last])
        new_id[last] = len(pos) - 1
    return np.array(pos), np.array(par), np.array(rad), sockets


def _chains(adj, parent, order):
    """Split the rooted tree into chains between key nodes (root, junctions, leaves).

    Returns a list of node lists, each from a key node to the next one down.
    """
    children = defaultdict(list)
    for v in order[1:]:
        children[parent[v]].append(v)
    key = {v for v in order if v == order[0] or len(children[v]) != 1}
    chains = []
    for k in order:
        if k not in key:
            continue
        for c in children[k]:
            chain = [k, c]
            while chain[-1] not in key:
                chain.append(children[chain[-1]][0])
            chains.append(chain)
    return chains


def _bend_angles(P, s, reach):
    """Turning angle (degrees) at each polyline node, between the points `reach`
    before and after it along the arc: a bend, not collapse noise, at that scale.

    P: (n, 3) polyline; s: (n,) arc length at each node. Returns (n,).
    """
    def at(arc):
        return np.stack([np.interp(arc, s, P[:, k]) for k in range(3)], axis=1)
    u = P - at(s - reach)
    v = at(s + reach) - P
    nu, nv = np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1)
    cos = (u * v).sum(axis=1) / np.maximum(nu * nv, 1e-18)
    ang = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    ang[(nu < 1e-9) | (nv < 1e-9)] = 0.0
    return ang


def _split_points(P, radius, n_segments):
    """Pick n_segments-1 interior joints along a polyline near even spacing.

    At a bend if the chain bends nearby (knees, hocks: where artists put joints), else
    at a thin place (elbow, wrist), else exactly at the even spacing.
    P: (n, 3) polyline; radius: (n,). Returns a list of (3,) points.
    """
    seg = np.linalg.norm(np.diff(P, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    unit = s[-1] / n_segments
    bend = _bend_angles(P, s, BEND_REACH * unit)
    interior = np.arange(len(P))[1:-1]
    out = []
    for k in range(1, n_segments):
        goal = unit * k
        near = interior[np.abs(s[interior] - goal) < BEND_WINDOW * unit]
        narrow = interior[np.abs(s[interior] - goal) < NARROW_WINDOW * unit]
        if len(near) and bend[near].max() >= BEND_DEGREES:
            out.append(P[near[np.argmax(bend[near])]])
        elif len(narrow):
            out.append(P[narrow[np.argmin(radius[narrow])]])
        else:
            i = int(np.clip(np.searchsorted(s, goal) - 1, 0, len(seg) - 1))
            t = (goal - s[i]) / max(seg[i], 1e-12)
            out.append(P[i] + t * (P[i + 1] - P[i]))
    return out


def _segment_count(P, R, bone_length, slender: bool = True):
    """Bones for a chain (polyline P (n, 3), radii R (n,)): one per bone_length;
    slender chains (fingers) up to MAX_SLENDER_BONES unless `slender` is False."""
    length = np.linalg.norm(np.diff(P, axis=0), axis=1).sum()
    diameter = 2.0 * max(R.mean(), 1e-9)
    extra = min(MAX_SLENDER_BONES, int(round(length / diameter))) if slender else 1
    return max(1, int(np.ceil(length / bone_length - SEGMENT_ROUNDING)), extra)


def _flatness(chain, X, V, members) -> float:
    """How round a chain's cross-section is: sqrt(λ2/λ1) of the vertices' offsets from
    their nodes across the chain (λ1 >= λ2 the two largest variances). About 1 for a
    tube (a finger), near 0 for a sheet (a fin, an ear)."""
    nodes = chain[1:-1] if len(chain) > 2 else chain
    axis = X[chain[-1]] - X[chain[0]]
    axis = axis / max(np.linalg.norm(axis), 1e-12)
    offsets = np.vstack([V[members[k]] - X[k] for k in nodes])
    offsets -= np.outer(offsets @ axis, axis)
    lam = np.sort(np.linalg.eigvalsh(offsets.T @ offsets))[::-1]
    return float(np.sqrt(max(lam[1], 0.0) / max(lam[0], 1e-30)))


def _socket(P, r_junction, merge_length):
    """Where a limb meets the body (hip, shoulder): the junction projected onto the limb's line.

    The collapse graph joins a limb to the body's junction node by a diagonal that
    cuts through the crotch or armpit. Artists put a joint on the limb's own axis
    instead (the hip socket), with a short bone from the body to it.

    Parameters
    ----------
    P : (n, 3) float
        Chain polyline starting at the junction.
    r_junction : float
        Body radius at the junction.
    merge_length : float
        A socket closer than this to the junction or the limb is not worth a joint.

    Returns
    -------
    (socket point (3,), index of the first limb node kept after it), or None when the
    limb already points at the junction.
    """
    d = np.linalg.norm(P - P[0], axis=1)
    out = np.flatnonzero(d > r_junction)
    if len(out) == 0 or out[0] >= len(P) - 1:
        return None
    e = int(out[0])
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(P, axis=0), axis=1))])
    far = np.flatnonzero(s >= s[e] + max(r_junction, SOCKET_AXIS_FRACTION * (s[-1] - s[e])))
    if len(far) == 0:
        return None
    u = P[e] - P[far[0]]
    u /= max(np.linalg.norm(u), 1e-12)
    back = float((P[0] - P[e]) @ u)
    if back <= 0:
        return None
    h = P[e] + back * u
    if np.linalg.norm(h - P[0]) < merge_length or np.linalg.norm(h - P[e]) < merge_length:
        return None
    return h, e


def _merge_short_internal(pos, par, merge_length):
    """Merge a node into its parent when the bone between them is tiny and not a leaf.

    pos: (n, 3); par: (n,), parents first. Returns (indices of the nodes kept (m,),
    their parents in the new numbering (m,)).
    """
    n = len(pos)
    children = defaultdict(list)
    for v in range(1, n):
        children[par[v]].append(v)
    target = np.arange(n)
    for v in range(1, n):
        p = par[v]
        if children[v] and np.linalg.norm(pos[v] - pos[target[p]]) < merge_length:
            target[v] = target[p]
    keep = np.flatnonzero(target == np.arange(n))
    index = np.full(n, -1)
    index[keep] = np.arange(len(keep))
    new_par = np.array([-1 if v == 0 else index[target[par[v]]] for v in keep])
    return keep, new_par
