# SPDX-License-Identifier: GPL-3.0-or-later
"""Tree: spanning tree of the joined graph, leaves pushed to the tips, a flat body's spine
centred, spurs pruned, root chosen, a head made one chain.

Trees here are adjacency dicts (see graph.py); `orient` turns one into parent links.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree

from ..rays import ray_hits

# Added to every edge length: scipy's sparse graphs take a zero weight for "no edge",
# so two coincident nodes would lose the edge between them.
EDGE_WEIGHT_FLOOR = 1e-9
# choose_root takes the junction nearest the centre of mass unless it is more than this
# (normalised frame) farther from it than the nearest node of all; tuned.
ROOT_JUNCTION_SLACK = 0.1
# A leaf branch shorter than this many junction radii is noise.
SPUR_RADIUS_FACTOR = 1.2
# extend_leaves moves a leaf this fraction of the way to the surface: most of the way,
# so the chain gets its joints, without putting the joint on the skin; tuned.
LEAF_REACH = 0.85
# extend_leaves ignores surface hits farther than this (normalised frame) from the leaf;
# tuned.
LEAF_MAX_GAP = 0.5
# prune_plane_sheets: a branch in the plane of symmetry is a sheet (a fin) when its
# vertices spread less than this across the plane as in it, across the branch; tuned.
SHEET_FLATNESS = 0.3
# centre_flat_body: a body whose joints on the plane of symmetry spread their vertices
# less than this across the plane as in it (a flat fish seen from the side) is a sheet;
# its joints move to the thick middle of slabs this share of its length wide; tuned.
FLAT_BODY = 0.5
FLAT_BODY_SLAB = 0.03


def spanning_tree(X, nodes, edges):
    """Minimum spanning tree (by edge length) over `nodes` (m,) of the graph with node
    positions X (k, 3) and `edges` among those nodes, a list of (int, int): breaks cycles.
    Returns the tree's edges, a list of (int, int) in the nodes' numbering."""
    index = {v: k for k, v in enumerate(nodes.tolist())}
    e = np.array([(index[a], index[b]) for a, b in edges], dtype=np.int64).reshape(-1, 2)
    w = np.linalg.norm(X[nodes[e[:, 0]]] - X[nodes[e[:, 1]]], axis=1) + EDGE_WEIGHT_FLOOR
    G = sp.coo_matrix((w, (e[:, 0], e[:, 1])), shape=(len(nodes), len(nodes)))
    T = minimum_spanning_tree(G).tocoo()
    return [(int(nodes[a]), int(nodes[b])) for a, b in zip(T.row, T.col)]


def choose_root(X, adj, centroid):
    """Junction nearest the centre of mass (the pelvis of a biped), else nearest node.

    X: (k, 3) node positions; adj: the tree; centroid: (3,). Returns the root node.
    """
    nodes = np.array(sorted(adj))
    dist = np.linalg.norm(X[nodes] - centroid, axis=1)
    nearest = nodes[dist.argmin()]
    junctions = [v for v in nodes if len(adj[v]) >= 3]
    if junctions:
        dj = np.linalg.norm(X[junctions] - centroid, axis=1)
        if dj.min() < dist.min() + ROOT_JUNCTION_SLACK:
            return int(junctions[int(dj.argmin())])
    return int(nearest)


def walk_to_junction(adj, leaf):
    """Path (list of nodes) from a leaf to the first node whose degree is not 2, both included."""
    path, prev, cur = [leaf], None, leaf
    while True:
        nxt = [v for v in adj[cur] if v != prev]
        if len(nxt) != 1:
            return path
        prev, cur = cur, nxt[0]
        path.append(cur)
        if len(adj[cur]) != 2:
            return path


def extend_leaves(X, adj, V, F, reach: float = LEAF_REACH):
    """Push each leaf node out along its branch, most of the way to the surface.

    Contraction pulls limb ends back from the tips (fingertips, snouts, tails).

    Parameters
    ----------
    X : (k, 3) float
        Node positions.
    adj : dict
        The tree.
    V, F : (V, 3) float, (F, 3) int
        The surface.
    reach : float
        Fraction of the way to the surface.

    Returns
    -------
    (k, 3) float
        A copy of X with the leaves moved.
    """
    X = X.copy()
    T0 = V[F[:, 0]]
    E1, E2 = V[F[:, 1]] - T0, V[F[:, 2]] - T0
    for leaf in [v for v in adj if len(adj[v]) == 1]:
        path = walk_to_junction(adj, leaf)
        if len(path) < 2:
            continue
        u = X[path[0]] - X[path[-1]]      # the whole branch's direction: a head grows up, not into the nose
        n = np.linalg.norm(u)
        if n < 1e-9:
            continue
        u /= n
        t = ray_hits(X[leaf], u[None], T0, E1, E2)[0]
        if np.isfinite(t) and t < LEAF_MAX_GAP:
            X[leaf] = X[leaf] + reach * t * u
    return X


def prune_spurs(X, adj, radius, min_length: float):
    """Remove short leaf branches (collapse noise) until none is left.

    A leaf branch goes when it is shorter than min_length or than SPUR_RADIUS_FACTOR
    radii of the junction it grows from. adj is changed in place and returned.
    """
    changed = True
    while changed:
        changed = False
        for leaf in [v for v in list(adj) if len(adj[v]) == 1]:
            if leaf not in adj or len(adj[leaf]) != 1:
                continue
            path = walk_to_junction(adj, leaf)
            junction = path[-1]
            if len(adj[junction]) < 3:
                continue
            length = np.linalg.norm(np.diff(X[path], axis=0), axis=1).sum()
            if length < max(min_length, SPUR_RADIUS_FACTOR * radius[junction]):
                _remove(adj, path[:-1])
                changed = True
    return adj


def prune_plane_sheets(X, adj, V, members, *, centre: float, flat: float = SHEET_FLATNESS):
    """A sheet in the plane of symmetry that branches off a chain running on in that
    plane is no limb: a dorsal or belly fin, a crest, a mane, and the branches a flat
    fish's body gets all over its medial sheet. Such leaf branches go, shortest first,
    until none is left; the junction keeps the two longest ways on in the plane.

    A branch counts when all its nodes are on the plane (|x| <= centre), its vertices
    spread less than `flat` as much across the plane (x) as in it across the branch
    (_plane_spread), and its junction has two other neighbours on the plane. Ears, fins
    and wings in pairs are off the plane; a tail or a head is the only other way on
    from its junction. X: (k, 3) nodes, in the frame whose plane of symmetry is x = 0;
    V, members: the proxy's vertices and those merged into each node. adj is changed in
    place and returned. docs/auto_skeleton.md#tree
    """
    def on_plane(v):
        return abs(X[v, 0]) <= centre

    while True:
        found = []
        for leaf in [v for v in adj if len(adj[v]) == 1]:
            path = walk_to_junction(adj, leaf)
            junction = path[-1]
            if len(path) < 2 or len(adj[junction]) < 3 or not all(on_plane(v) for v in path):
                continue
            if sum(on_plane(u) for u in adj[junction] if u != path[-2]) < 2:
                continue
            if _plane_spread(X, V, members, path) < flat:
                found.append((float(np.linalg.norm(np.diff(X[path], axis=0), axis=1).sum()), path))
        if not found:
            return adj
        _remove(adj, min(found, key=lambda f: f[0])[1][:-1])


def centre_flat_body(X, adj, V, members, *, centre: float) -> np.ndarray:
    """Nodes of a flat body in the plane of symmetry (a disc-shaped fish seen from the
    side) moved to the middle of its thickness. The contraction takes such a body to the
    medial axis of its outline, which runs out into every fin: the chain from head to
    tail zig-zags up through the dorsal fin and down again. The spine an artist puts in
    it runs through the thick middle: each node on the plane (|x| <= centre) moves,
    across the body's long axis, to the mean of the vertices in its slab (FLAT_BODY_SLAB
    of the length wide) weighted by their squared distance from the plane (the fins
    are thin, x ~ 0). Only when the on-plane nodes' vertices spread less than FLAT_BODY
    as much across the plane (x) as across the long axis in it. X: (k, 3); returns X
    (a new array when moved). docs/auto_skeleton.md#tree"""
    on = np.array([v for v in adj if abs(X[v, 0]) <= centre], dtype=np.int64)
    if len(on) < 3:
        return X
    c = X[on, 1:].mean(axis=0)
    axis, across = np.linalg.svd(X[on, 1:] - c, full_matrices=False)[2]
    offsets = np.vstack([V[members[k]] - X[k] for k in on])
    if np.sqrt(np.mean(offsets[:, 0] ** 2)) >= FLAT_BODY * np.sqrt(np.mean((offsets[:, 1:] @ across) ** 2)):
        return X
    along, side, weight = (V[:, 1:] - c) @ axis, (V[:, 1:] - c) @ across, V[:, 0] ** 2
    half = FLAT_BODY_SLAB * np.ptp(along)
    X = X.copy()
    for v in on:
        t = (X[v, 1:] - c) @ axis
        w = weight * (np.abs(along - t) < half)
        if w.sum() > 0:
            X[v] = [0.0, *(c + t * axis + (w @ side) / w.sum() * across)]
    return X


def _plane_spread(X, V, members, path) -> float:
    """How thin a branch is across the plane x = 0 for its width in it: the rms offset of
    its vertices from their nodes in x over that in the plane across the branch. Near 0
    for a fin in the plane, about 1 for a round tail."""
    axis = X[path[0]] - X[path[-1]]
    across = np.cross(axis, [1.0, 0.0, 0.0])
    norm = np.linalg.norm(across)
    if norm < 1e-12:                         # a branch straight across the plane
        return np.inf
    across /= norm
    offsets = np.vstack([V[members[k]] - X[k] for k in path[:-1]])
    thick = float(np.sqrt(np.mean(offsets[:, 0] ** 2)))
    wide = float(np.sqrt(np.mean((offsets @ across) ** 2)))
    return thick / max(wide, 1e-12)


def merge_end_clusters(X, adj, root, *, max_span: float, centre: float):
    """A head (or a tail fork) is one chain.

    At a junction on the plane of symmetry (|x| <= centre) whose branches all end within
    max_span of it (nose, top of the head, ears, crest; two tail lobes), only the branch
    that goes on most straight from the chain leading in stays: the top of a biped's
    head, not its nose. Hands are off the plane and keep their fingers. X: (k, 3) node
    positions; adj: the tree, changed in place and returned. docs/auto_skeleton.md#tree
    """
    parent, order = orient(adj, root)
    reach = dict.fromkeys(order, 0.0)
    tip = {v: X[v] for v in order}              # the farthest end down each subtree
    for v in reversed(order[1:]):
        p = parent[v]
        r = reach[v] + float(np.linalg.norm(X[v] - X[p]))
        if r > reach[p]:
            reach[p], tip[p] = r, tip[v]
    for v in order:
        if v not in adj or v == root or abs(X[v, 0]) > centre:
            continue
        kids = [c for c in adj[v] if c != parent[v]]
        span = [reach[c] + float(np.linalg.norm(X[c] - X[v])) for c in kids]
        if len(kids) < 2 or max(span) > max_span:
            continue
        back = _walk_back(X, parent, v, max_span)
        incoming = X[v] - X[back]
        ahead = [float((tip[c] - X[v]) @ incoming) / max(float(np.linalg.norm(tip[c] - X[v])), 1e-12)
                 for c in kids]
        keep = kids[int(np.argmax(ahead))]
        for c in kids:
            if c != keep:
                _remove(adj, _subtree(adj, c, v))
    return adj


def _walk_back(X, parent, v, length):
    """The node `length` up the tree from v (or the root), for the direction leading in."""
    u = v
    while parent[u] >= 0 and np.linalg.norm(X[v] - X[u]) < length:
        u = parent[u]
    return u


def _subtree(adj, top, above):
    """Nodes of the branch that starts at `top`, away from its neighbour `above`."""
    out, stack = [], [(top, above)]
    while stack:
        v, p = stack.pop()
        out.append(v)
        stack.extend((u, v) for u in adj[v] if u != p)
    return out


def _remove(adj, nodes):
    """Delete nodes and their edges from adj."""
    for v in nodes:
        for u in adj.pop(v):
            if u in adj:
                adj[u].discard(v)


def orient(adj, root):
    """parent[node] for a tree given as adjacency, and the nodes in breadth-first order.

    Returns (dict node -> parent node, -1 for the root; list of nodes, root first).
    """
    parent, order, stack = {root: -1}, [root], [root]
    while stack:
        nxt = []
        for v in stack:
            for u in sorted(adj[v]):
                if u not in parent:
                    parent[u] = v
                    order.append(u)
                    nxt.append(u)
        stack = nxt
    return parent, order
