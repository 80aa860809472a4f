# SPDX-License-Identifier: GPL-3.0-or-later
"""From a skeleton graph to a rig an animator can use (docs/auto_skeleton.md, sections
Refinement to Bones).

refine_nodes     move nodes back to the centre of their surface region
                 (docs/auto_skeleton.md#refinement).
join_parts       one graph for a multi-part mesh: small parts get no bones, parts
                 overlapping the body are absorbed, the rest hang off the nearest node.
build_tree       spanning tree, root near the centre of mass, spurs pruned.
simplify_chains  chains between junctions resampled to a sensible joint count.
to_bones         bones (head, tail, parent), names and roll vectors.
Every length here is in the normalised frame (longest bounding-box side = 1).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial import cKDTree

SPUR_RADIUS_FACTOR = 1.2   # a leaf branch shorter than this many junction radii is noise
MIRROR = np.array([-1.0, 1.0, 1.0])   # left <-> right (x = 0 is the plane of symmetry)


# ---------------------------------------------------------------- refinement
# docs/auto_skeleton.md#refinement

def refine_nodes(V_orig, V_contracted, nodes, members):
    """Node position x_i - d_i, d_i = mean displacement of its merged vertices."""
    X = np.empty((len(nodes), 3))
    radius = np.empty(len(nodes))
    for k, (i, m) in enumerate(zip(nodes, members)):
        d = (V_contracted[m] - V_orig[m]).mean(axis=0)
        X[k] = V_contracted[i] - d
        radius[k] = np.linalg.norm(V_orig[m] - X[k], axis=1).mean()
    return X, radius


# ---------------------------------------------------------------- graph helpers

def adjacency(n, edges):
    adj = defaultdict(set)
    for a, b in np.asarray(edges).reshape(-1, 2).tolist():
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    for i in range(n):
        adj[i]
    return adj


def edge_list(adj):
    return sorted({(min(a, b), max(a, b)) for a in adj for b in adj[a]})


def _components(n, edges):
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return connected_components(A, directed=False)[1]


# ---------------------------------------------------------------- multi-part meshes

def join_parts(X, edges, radius, mass, extent, node_points, *, min_part: float, min_branch: float,
               inside_body=None, absorb: float = 1.0):
    """Make one connected graph out of the per-part skeleton graphs.

    mass, extent: per node, the weight (parts are joined heaviest first, the
    heaviest is the body) and bounding-box size of the graph component it belongs
    to (computed by the caller from merged vertices);
    node_points: per node, the surface points merged into it.
    inside_body(points, kept) -> bool: whether points lie inside the surface of the
    parts kept so far; a node is absorbed by the body if it is inside it, or within
    `absorb` body radii of a body node.
    Returns (kept node indices, edges among them in original numbering).
    """
    n = len(X)
    comp = _components(n, edges)
    order = sorted(set(comp.tolist()), key=lambda c: -mass[comp == c].sum())
    adj = adjacency(n, edges)
    kept = list(np.flatnonzero(comp == order[0]))
    new_edges = [(a, b) for a, b in edge_list(adj) if comp[a] == order[0]]
    for c in order[1:]:
        idx = np.flatnonzero(comp == c)
        if extent[idx[0]] < min_part:
            continue                       # eyes, buttons: follow the nearest bone
        K = np.array(kept)
        body = cKDTree(np.vstack([node_points[k] for k in K]))
        d = np.linalg.norm(X[idx, None] - X[None, K], axis=2)
        near = K[d.argmin(axis=1)]
        absorbed = d.min(axis=1) < absorb * radius[near]
        if inside_body is not None:
            absorbed |= inside_body(X[idx], K)
        target = dict(zip(idx[absorbed].tolist(), near[absorbed].tolist()))
        free = idx[~absorbed]
        if len(free) == 0:
            continue                       # a shell around the body (clothes, helmet)
        sub = [(a, b) for a in free for b in adj[a] if b in set(free.tolist()) and a < b]
        local = {v: k for k, v in enumerate(free.tolist())}
        labels = _components(len(free), [(local[a], local[b]) for a, b in sub])
        for lab in set(labels.tolist()):
            piece = free[labels == lab]
            piece_set = set(piece.tolist())
            # Keep only pieces whose surface reaches well away from the body's surface
            # (a head, a ponytail, a separate limb); hair caps, clothes and armour hug
            # it and get no bones.
            reach = body.query(np.vstack([node_points[k] for k in piece]))[0]
            if reach.max() < min_branch:
                continue
            dd = np.linalg.norm(X[piece, None] - X[None, K], axis=2)
            links = [(a, target[b]) for a in piece for b in adj[a] if b in target]
            if not links:
                p, q = np.unravel_index(dd.argmin(), dd.shape)
                links = [(piece[p], K[q])]
            best = min(links, key=lambda l: np.linalg.norm(X[l[0]] - X[l[1]]))
            kept.extend(piece.tolist())
            new_edges.extend((a, b) for a, b in sub if a in piece_set)
            new_edges.append(best)
    return np.array(sorted(kept)), new_edges


# ---------------------------------------------------------------- tree

def spanning_tree(X, nodes, edges):
    """Minimum spanning tree (by edge length) over the given nodes: breaks cycles."""
    index = {v: k for k, v in enumerate(nodes.tolist())}
    e = np.array([(index[a], index[b]) for a, b in edges], dtype=np.int64).reshape(-1, 2)
    w = np.linalg.norm(X[nodes[e[:, 0]]] - X[nodes[e[:, 1]]], axis=1) + 1e-9
    G = sp.coo_matrix((w, (e[:, 0], e[:, 1])), shape=(len(nodes), len(nodes)))
    T = minimum_spanning_tree(G).tocoo()
    return [(int(nodes[a]), int(nodes[b])) for a, b in zip(T.row, T.col)]


def choose_root(X, adj, centroid):
    """Junction nearest the centre of mass (the pelvis of a biped), else nearest node."""
    nodes = np.array(sorted(adj))
    dist = np.linalg.norm(X[nodes] - centroid, axis=1)
    nearest = nodes[dist.argmin()]
    junctions = [v for v in nodes if len(adj[v]) >= 3]
    if junctions:
        dj = np.linalg.norm(X[junctions] - centroid, axis=1)
        if dj.min() < dist.min() + 0.1:
            return int(junctions[int(dj.argmin())])
    return int(nearest)


def _walk_to_junction(adj, leaf):
    """Path from a leaf to the first node whose degree is not 2."""
    path, prev, cur = [leaf], None, leaf
    while True:
        nxt = [v for v in adj[cur] if v != prev]
        if len(nxt) != 1:
            return path
        prev, cur = cur, nxt[0]
        path.append(cur)
        if len(adj[cur]) != 2:
            return path


def prune_spurs(X, adj, radius, min_length: float):
    """Remove short leaf branches (collapse noise) until none is left."""
    changed = True
    while changed:
        changed = False
        for leaf in [v for v in list(adj) if len(adj[v]) == 1]:
            if leaf not in adj or len(adj[leaf]) != 1:
                continue
            path = _walk_to_junction(adj, leaf)
            junction = path[-1]
            if len(adj[junction]) < 3:
                continue
            length = np.linalg.norm(np.diff(X[path], axis=0), axis=1).sum()
            if length < max(min_length, SPUR_RADIUS_FACTOR * radius[junction]):
                for v in path[:-1]:
                    for u in adj.pop(v):
                        if u in adj:
                            adj[u].discard(v)
                changed = True
    return adj


def orient(adj, root):
    """parent[node] for a tree given as adjacency; breadth-first order."""
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


# ---------------------------------------------------------------- chain simplification

def _chains(adj, parent, order):
    """Split the rooted tree into chains between key nodes (root, junctions, leaves)."""
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


BEND_DEGREES = 10.0   # a chain turning this much is bent at a joint (knee, hock, elbow)


def _bend_angles(P, s, reach):
    """Turning angle (degrees) at each polyline node, between the points `reach`
    before and after it along the arc: a bend, not collapse noise, at that scale."""
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
    """Pick n_segments-1 interior joints along a polyline near even spacing: at a bend
    if the chain bends nearby (knees, hocks: where artists put joints), else at a thin
    place (elbow, wrist)."""
    seg = np.linalg.norm(np.diff(P, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    unit = s[-1] / n_segments
    bend = _bend_angles(P, s, 0.3 * unit)
    interior = np.arange(len(P))[1:-1]
    out = []
    for k in range(1, n_segments):
        goal = unit * k
        near = interior[np.abs(s[interior] - goal) < 0.5 * unit]
        narrow = interior[np.abs(s[interior] - goal) < 0.25 * unit]
        if len(near) and bend[near].max() >= BEND_DEGREES:
            out.append(P[near[np.argmax(bend[near])]])
        elif len(narrow):
            out.append(P[narrow[np.argmin(radius[narrow])]])
        else:
            i = int(np.clip(np.searchsorted(s, goal) - 1, 0, len(seg) - 1))
            t = (goal - s[i]) / max(seg[i], 1e-12)
            out.append(P[i] + t * (P[i + 1] - P[i]))
    return out


def simplify_chains(X, radius, adj, root, *, bone_length: float, merge_length: float):
    """Rebuild the tree with chains resampled to about one joint per bone_length.

    Returns (positions (k,3), parent (k,), radius (k,), is_socket (k,)) of the
    simplified tree, node 0 = root.
    """
    parent, order = orient(adj, root)
    branching = {v for v in adj if len(adj[v]) >= 3} | {root}
    plans = []              # per chain: (start node, socket point or None, polyline, radii, end node)
    for chain in _chains(adj, parent, order):
        P, R, h = X[chain], radius[chain], None
        if chain[0] in branching:
            socket = _socket(P, radius[chain[0]], merge_length)
            if socket is not None:
                h, e = socket        # joint h, then the limb continues from node e
                P, R = np.vstack([h, P[e:]]), np.concatenate([[radius[chain[0]]], R[e:]])
        plans.append((chain[0], h, P, R, chain[-1]))
    counts = _mirrored_counts([_segment_count(P, R, bone_length) for _, _, P, R, _ in plans],
                              [P for _, _, P, _, _ in plans], tolerance=2 * merge_length)

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
    pos, par, rad = np.array(pos), np.array(par), np.array(rad)
    keep, par = _merge_short_internal(pos, par, merge_length)
    return pos[keep], par, rad[keep], np.isin(keep, list(sockets))


def _segment_count(P, R, bone_length):
    """Bones for a chain: one per bone_length; slender chains (fingers) up to three."""
    length = np.linalg.norm(np.diff(P, axis=0), axis=1).sum()
    slender = min(3, int(round(length / (2.0 * max(R.mean(), 1e-9)))))
    return max(1, int(np.ceil(length / bone_length - 0.25)), slender)


def _mirrored_counts(counts, polylines, tolerance):
    """Give a chain and its mirror image (x -> -x) the same bone count, so a symmetric
    character gets a symmetric rig even where rounding would split them differently."""
    counts = list(counts)
    ends = np.array([np.concatenate([P[0], P[-1]]) for P in polylines])
    mirrored = ends * np.tile(MIRROR, 2)
    for i in range(len(counts)):
        if abs(ends[i, 0]) + abs(ends[i, 3]) < tolerance:
            continue                      # a centre chain is its own mirror
        d = np.abs(mirrored - ends[i]).max(axis=1)
        d[i] = np.inf
        j = int(d.argmin())
        if d[j] < tolerance:
            counts[i] = counts[j] = max(counts[i], counts[j])
    return counts


def _socket(P, r_junction, merge_length):
    """Where a limb meets the body (hip, shoulder): the junction projected onto the limb's line.

    The collapse graph joins a limb to the body's junction node by a diagonal that
    cuts through the crotch or armpit. Artists put a joint on the limb's own axis
    instead (the hip socket), with a short bone from the body to it. P: chain
    polyline starting at the junction. Returns (socket point, index of the first
    limb node kept after it) or None when the limb already points at the junction.
    """
    d = np.linalg.norm(P - P[0], axis=1)
    out = np.flatnonzero(d > r_junction)
    if len(out) == 0 or out[0] >= len(P) - 1:
        return None
    e = int(out[0])
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(P, axis=0), axis=1))])
    far = np.flatnonzero(s >= s[e] + max(r_junction, 0.25 * (s[-1] - s[e])))
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

    Returns (indices of the nodes kept, their parents in the new numbering)."""
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


def mirror_tree(pos, par, rad, socket, *, centre: float, tolerance: float):
    """One side of a symmetric character's tree, mirrored onto the other.

    The collapse is greedy, so a symmetric mesh can still give left and right limbs
    different parents or joint counts (an arm off the neck on one side, off the chest on
    the other). When the two sides already match as point sets (every joint more than
    `centre` off the plane has a mirror image within `tolerance` on the other side),
    the side with more joints is kept and mirrored, centre joints move onto the plane
    and a socket that only carried a dropped limb goes.
    Returns (pos, par, rad, socket), unchanged when the sides do not match (a character
    holding a sword in one hand) or a branch crosses the plane.
    """
    pos, par = np.asarray(pos, dtype=np.float64), np.asarray(par)
    side = np.where(pos[:, 0] > centre, 1, np.where(pos[:, 0] < -centre, -1, 0))
    left, right = np.flatnonzero(side > 0), np.flatnonzero(side < 0)
    unchanged = pos, par, rad, socket
    if side[0] != 0 or len(left) == 0 or len(right) == 0:
        return unchanged
    for a, b in ((left, right), (right, left)):
        if cKDTree(pos[b]).query(pos[a] * MIRROR)[0].max() > tolerance:
            return unchanged
    if any(side[v] * side[par[v]] < 0 or (side[v] == 0 and side[par[v]] != 0) for v in range(1, len(pos))):
        return unchanged
    keep_side = 1 if len(left) >= len(right) else -1
    had_child = np.zeros(len(pos), bool)
    had_child[par[1:]] = True
    kept = side != -keep_side
    while True:                 # drop sockets left without the limb they carried
        has_child = np.zeros(len(pos), bool)
        has_child[par[1:][kept[1:]]] = True
        orphan = kept & had_child & ~has_child & np.asarray(socket, bool)
        if not orphan.any():
            break
        kept &= ~orphan
    index = np.full(len(pos), -1)
    order = np.flatnonzero(kept)
    index[order] = np.arange(len(order))
    mirror_of = {}
    new_pos = [p * [0.0, 1.0, 1.0] if side[v] == 0 else p for v, p in zip(order, pos[order])]
    new_par = [-1 if v == 0 else index[par[v]] for v in order]
    new_rad, new_socket = list(rad[order]), list(socket[order])
    for v in order:
        if side[v] == keep_side:
            p = par[v]
            mirror_of[v] = len(new_pos)
            new_pos.append(pos[v] * MIRROR)
            new_par.append(mirror_of[p] if side[p] == keep_side else index[p])
            new_rad.append(rad[v])
            new_socket.append(socket[v])
    return np.array(new_pos), np.array(new_par), np.array(new_rad), np.array(new_socket, bool)


def mirror_pairs(pos, tolerance: float):
    """Joints of a mirror-symmetric character made exactly symmetric in x = 0.

    Two joints that are each other's nearest mirror image (within tolerance) move to
    the mean of one and the other's mirror image; a joint that is its own mirror image
    moves onto the plane. Joints without a partner stay where they are. The collapse
    graph and the decimated proxy are not symmetric even when the mesh is.
    """
    pos = np.asarray(pos, dtype=np.float64)
    dist, partner = cKDTree(pos).query(pos * MIRROR)
    out = pos.copy()
    for i, k in enumerate(partner):
        if dist[i] > tolerance or partner[k] != i:
            continue
        if k == i:
            out[i, 0] = 0.0
        else:
            out[i] = 0.5 * (pos[i] + pos[k] * MIRROR)
    return out


# ---------------------------------------------------------------- bones

def to_bones(pos, par, floating=None):
    """Tree of joints -> bones (head, tail, parent bone). K+1 joints give K bones.

    Each tree edge is a bone. The root bone is the root's edge with the largest
    subtree (the spine of a biped); the root's other edges become its children.
    floating: nodes (hips, shoulders) whose edge from their parent gets no bone; the
    bones out of them hang, unconnected, off the bone their parent ends or starts
    (as in artists' rigs: a thigh is a child of the pelvis, not of a pelvis-to-hip bone).
    """
    n = len(pos)
    floating = np.zeros(n, bool) if floating is None else np.asarray(floating, bool)
    children = defaultdict(list)
    for v in range(1, n):
        children[par[v]].append(v)
    size = np.zeros(n)
    for v in range(n - 1, 0, -1):      # nodes are numbered parents-first
        size[par[v]] += size[v] + np.linalg.norm(pos[v] - pos[par[v]])
    first = max(children[0], key=lambda c: (not floating[c] or not children[c],
                                            size[c] + np.linalg.norm(pos[c] - pos[0])))
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


def default_up(heads, tails):
    """Roll reference per bone: forward (-Y) for vertical bones, else up (+Z)."""
    d = np.asarray(tails, float) - np.asarray(heads, float)
    d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
    vertical = np.abs(d[:, 2]) > 0.7
    ref = np.where(vertical[:, None], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0])
    up = ref - (ref * d).sum(axis=1, keepdims=True) * d
    n = np.linalg.norm(up, axis=1, keepdims=True)
    fallback = np.cross(d, [1.0, 0.0, 0.0])
    up = np.where(n > 1e-6, up / np.maximum(n, 1e-12), fallback)
    return up / np.maximum(np.linalg.norm(up, axis=1, keepdims=True), 1e-12)


def bone_names(heads, tails, parents, side_tolerance: float):
    """Readable, mirror-friendly names: root, spine_01, neck_01, tail_01, arm_01.L, leg_02.R ...

    Chains (runs of single-child bones) get a label from their direction and where
    they start, and a side suffix from their position relative to the x = 0 plane.
    Right-side chains take the name of their mirror image on the left, so that
    Blender's mirror tools pair them.
    """
    K = len(heads)
    children = defaultdict(list)
    for b in range(K):
        children[parents[b]].append(b)
    names = [None] * K
    roots = children[-1]
    names[roots[0]] = "root"
    depth = np.zeros(K, int)
    for b in range(K):
        p = parents[b]
        while p >= 0:
            depth[b] += 1
            p = parents[p]
    starts = [b for b in range(K) if b not in roots and
              (parents[b] in roots or len(children[parents[b]]) != 1)]
    chains = []
    for s in starts:
        chain = [s]
        while len(children[chain[-1]]) == 1:
            chain.append(children[chain[-1]][0])
        chains.append(chain)
    groups = defaultdict(list)
    for chain in chains:
        groups[_chain_label(heads, tails, parents, roots, chain, side_tolerance)].append(chain)

    def key(ch):
        return (depth[ch[0]], -round(heads[ch[0]][2], 3), round(abs(heads[ch[0]][0]), 3))

    def assign(chain, base, side):
        for k, b in enumerate(chain):
            names[b] = f"{base}_{k + 1:02d}{side}"

    for (label, side), group in groups.items():
        if side == ".R":
            continue
        for g, chain in enumerate(sorted(group, key=key)):
            assign(chain, label if g == 0 else f"{label}{g + 1}", side)
    for (label, side), group in groups.items():
        if side != ".R":
            continue
        mirrors = {names[ch[0]].rsplit("_", 1)[0]: ch for ch in groups.get((label, ".L"), [])}
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
            assign(chain, base, side)
    for b in range(K):          # root-level extras without a chain (should not happen)
        if names[b] is None:
            names[b] = f"bone_{b:02d}"
    return _unique(names)


def _chain_label(heads, tails, parents, roots, chain, side_tolerance):
    """(label, side suffix) of a chain from its direction and where it starts."""
    a, b = heads[chain[0]], tails[chain[-1]]
    mid_x = np.mean([(heads[c][0] + tails[c][0]) / 2 for c in chain])
    side = ".L" if mid_x > side_tolerance else ".R" if mid_x < -side_tolerance else ""
    d = b - a
    n = np.linalg.norm(d) + 1e-12
    if side:
        return ("leg" if d[2] < -0.7 * n else "arm"), side
    ahead = d[2] > 0.5 * n or d[1] < -0.5 * n      # up, or forward (-Y) for animals
    from_root = parents[chain[0]] in roots
    if ahead:
        return ("spine" if from_root else "neck"), ""
    return "tail", ""


def _unique(names):
    seen, out = defaultdict(int), []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}.{seen[n] - 1:03d}")
    return out


def push_inside(pos, movable, candidates, inside_fn, k: int = 256):
    """Move joints that lie outside the surface to the nearest candidate point inside.

    candidates: points near the medial axis (contracted vertices, graph nodes).
    inside_fn(points) -> bool array. Joints with no inside candidate stay put.
    """
    pos = pos.copy()
    idx = np.flatnonzero(movable)
    if len(idx) == 0:
        return pos, 0
    out = idx[~inside_fn(pos[idx])]
    if len(out) == 0:
        return pos, 0
    tree = cKDTree(candidates)
    _, near = tree.query(pos[out], k=min(k, len(candidates)))
    near = np.atleast_2d(near)
    ok = inside_fn(candidates[near.ravel()]).reshape(near.shape)
    moved = 0
    for row, j in enumerate(out):
        hits = np.flatnonzero(ok[row])
        if len(hits):
            pos[j] = candidates[near[row, hits[0]]]   # query results are sorted by distance
            moved += 1
    return pos, moved
