# SPDX-License-Identifier: GPL-3.0-or-later
"""Multi-part meshes: one connected skeleton graph out of one graph per mesh part.

A character is often several loose meshes (body, head, eyes, clothes, hair). The
heaviest solid part is the body; small parts and rings get no bones, nor (on a character
without a humanoid's landmarks) rigid pieces at the ends such as a fish's eyes or a
puffer's spikes; parts overlapping the body are absorbed by it, the rest hang off the
nearest node of the part whose surface they meet. A convex part (a box) cannot bend: its
graph is straightened onto its axis first.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree
from scipy.spatial import ConvexHull, QhullError, cKDTree

from .graph import adjacency, edge_list, node_components
from .polyline import off_axis

# volume / area^1.5 below this: an open sheet, not a body part (a sphere has 0.094,
# a limb 100 radii long about 0.02).
SOLID_RATIO = 0.005
# A sheet's mass is scaled by this when choosing the body, so that any solid part
# outweighs every sheet while sheets still rank among themselves by mass.
SHEET_WEIGHT = 1e-6
# A part is convex when this share of its vertices lies on its convex hull (within
# HULL_TOLERANCE of its extent): a box, a low-poly limb; it cannot bend, so its skeleton
# is a straight segment.
CONVEX_SHARE = 0.95
HULL_TOLERANCE = 0.02
# A convex part whose second principal spread is at least this share of its first has
# no axis of its own (a cube head): its segment points away from the body's centre.
ISOTROPIC = 0.8
# A ring (a rib, a bracelet, a jaw's horseshoe) winds around empty space: seen from its
# centre of mass in its own plane, no gap between its vertices is wider than
# RING_GAP_DEGREES, no face crosses the line through that centre normal to the plane, and
# no vertex is nearer the centre than RING_HOLLOW x its extent.
RING_GAP_DEGREES = 180.0
RING_HOLLOW = 0.2
# A separate part at an end of the tree of parts that is shorter than SLENDER x its
# breadth is rigid: it follows the bone it sits on (characters without a humanoid's
# landmarks; chosen per studio: docs/auto_skeleton.md#joint-budget).
SLENDER = 2.5
# ... or thinner than THIN x and shorter than REACH x the thickness of the part it sits
# on: a spike or a horn within the body's girth (limbs measured 0.44-0.57 of it, spikes
# and fins 0.06-0.32; chosen per studio: docs/auto_skeleton.md#joint-budget).
REACH = 1.0
THIN = 1 / 3
# Parts whose surfaces come this close (longest side = 1) touch: with `nearest_first`
# they are joined heaviest first, before any part that hangs apart.
TOUCH_GAP = 0.01


def solid_parts(V, F, part, area, min_ratio: float = SOLID_RATIO):
    """Per part: does it enclose volume?

    Parameters
    ----------
    V : (V, 3) float
    F : (F, 3) int
    part : (V,) int
        Part label of each vertex.
    area : (P,) float
        Surface area of each part.
    min_ratio : float
        volume / area^1.5 above which a part is solid.

    Returns
    -------
    (P,) bool
    """
    fp = part[F[:, 0]]
    n = len(area)
    count = np.maximum(np.bincount(fp, minlength=n), 1)[:, None]
    centre = np.stack([np.bincount(fp, V[F].mean(axis=1)[:, k], n) for k in range(3)], 1) / count
    a, b, c = (V[F[:, k]] - centre[fp] for k in range(3))
    volume = np.abs(np.bincount(fp, np.einsum("ij,ij->i", a, np.cross(b, c)), n)) / 6
    return volume > min_ratio * np.maximum(area, 1e-30) ** 1.5


def ring_parts(V, F, part, vertex_area) -> np.ndarray:
    """Per part: does it wind around empty space (docs/auto_skeleton.md#parts)?

    A rib, a jaw, a collar or a bracelet bends nowhere of its own: its chain would cross
    the plane of symmetry and hang whatever comes next off it. A solid part (its centre
    inside it), a sheet (a wing: the normal line meets it) and an L-shaped limb (a wide
    gap around its centre) are no rings.

    V (V, 3), F (F, 3); part (V,) part label of each vertex (0..P-1); vertex_area (V,)
    the weight of each vertex in the centre of mass. Returns (P,) bool.
    """
    from ..rays import ray_hits
    n = int(part.max()) + 1
    out = np.zeros(n, bool)
    face_part = part[F[:, 0]]
    for c in range(n):
        idx = np.flatnonzero(part == c)
        if len(idx) < 4:
            continue
        P, w = V[idx], vertex_area[idx] + 1e-30
        centre = (w[:, None] * P).sum(axis=0) / w.sum()
        extent = np.ptp(P, axis=0).max()
        if extent <= 0 or np.linalg.norm(P - centre, axis=1).min() < RING_HOLLOW * extent:
            continue
        _, vec = np.linalg.eigh(np.cov((P - centre).T, aweights=w))
        Q = (P - centre) @ vec[:, 1:]
        angle = np.sort(np.arctan2(Q[:, 1], Q[:, 0]))
        if np.diff(np.r_[angle, angle[0] + 2 * np.pi]).max() > np.radians(RING_GAP_DEGREES):
            continue
        T = V[F[face_part == c]]
        normal = vec[:, 0]
        hits = ray_hits(centre, np.array([normal, -normal]), T[:, 0], T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
        out[c] = not np.isfinite(hits).any()
    return out


def rigid_leaf_parts(V, part, body: int, skip, thickness, slender: float = SLENDER,
                     reach: float = REACH, thin: float = THIN) -> np.ndarray:
    """Per part: a rigid piece sitting at an end of the body's tree of parts (an eye, a
    fin, a plate, a stub, a spike), which follows the bone it sits on
    (docs/auto_skeleton.md#parts)?

    A part is rigid when it is stubby or a spike, and carries nothing:
    - stubby: its extent along its main axis is less than `slender` x its breadth, the
      smaller of its extent along the second axis and its thickness (a bent leg spreads
      along the second axis but is thin). An eye or a fin is stubby, an antenna is not;
    - a spike: thinner than `thin` x the thickness of the part it sits on (the thickest
      part within its own thickness of its nearest neighbour) and shorter than `reach` x
      that thickness (a puffer's spikes, a cow's horns stay within the body's girth;
      legs, tails and antennae reach out of it, a chibi's or a robot's short legs are
      thick);
    - carries nothing: no part but rigid spikes hangs off it in the tree that joins the
      parts by their shortest gaps, rooted at the body (a mech's thigh carries its shin;
      its foot and a fish's eyes carry nothing; a spike carries at most spikes; a knob
      with a pin that carries an arm carries the arm).

    V (V, 3) proxy vertices; part (V,) part label of each vertex (0..P-1); body: the
    body's label; skip (P,) bool: parts left out of the tree (too small, rings);
    thickness (P,): per part, twice its largest node radius (part_thickness). Returns (P,) bool.
    """
    n = len(skip)
    use = np.array([c for c in range(n) if c == body or not skip[c]])
    if len(use) < 2:
        return np.zeros(n, bool)
    gap = _gaps(V, part, use)
    length = np.zeros(n)
    stubby = np.zeros(n, bool)
    for c in use:
        P = V[part == c]
        if len(P) >= 4:
            extent = _principal_extents(P)
            length[c] = extent[2]
            stubby[c] = length[c] < slender * min(extent[1], thickness[c])
    spike = np.zeros(n, bool)
    for i, c in enumerate(use):
        g = np.delete(gap[i], i)
        near = np.delete(use, i)[g <= g.min() + thickness[c]]
        carrier = thickness[near].max()
        spike[c] = 0 < length[c] < reach * carrier and thickness[c] < thin * carrier
    spike[body] = False
    return _rigid_bottom_up(gap, use, body, stubby | spike, spike)


def part_thickness(radius, comp, n: int) -> np.ndarray:
    """(n,) per part, twice the largest of its graph nodes' radii (refine_nodes: the mean
    distance from a node to the vertices merged into it); radius, comp (k,) per node."""
    thickness = np.zeros(n)
    np.maximum.at(thickness, comp, 2 * np.asarray(radius, dtype=np.float64))
    return thickness


def _gaps(V, part, use) -> np.ndarray:
    """(u, u) shortest distance between the vertices of each two parts of `use`."""
    gap = np.full((len(use), int(part.max()) + 1), np.inf)
    for i, c in enumerate(use):
        d, _ = cKDTree(V[part == c]).query(V)
        np.minimum.at(gap[i], part, d)
    G = gap[:, use]
    return np.minimum(G, G.T)


def _rigid_bottom_up(gap, use, body, candidate, spike) -> np.ndarray:
    """Per part: a `candidate` (stubby or spike) that carries nothing but rigid spikes, in
    the minimum spanning tree of the parts `use` by their shortest gaps (gap: _gaps),
    rooted at the body, decided from the leaves up (a spike carrying a hand carries it).
    candidate, spike (P,) bool. Returns (P,) bool."""
    G = gap + 1e-12              # touching parts: a tiny gap, still an edge
    np.fill_diagonal(G, 0.0)
    tree = minimum_spanning_tree(csr_matrix(G))
    order, pred = breadth_first_order(tree + tree.T, int(np.flatnonzero(use == body)[0]), directed=False)
    rigid = candidate[use] & (use != body)
    spike = spike[use]
    for i in order[::-1]:            # children before their parent
        if pred[i] >= 0 and not (rigid[i] and spike[i]):
            rigid[pred[i]] = False
    out = np.zeros(len(candidate), bool)
    out[use] = rigid
    return out


def part_extents(V, members, comp):
    """Longest bounding-box side of the vertices merged into each graph component.

    Parameters
    ----------
    V : (V, 3) float
    members : list of k int arrays
        Vertices merged into each graph node.
    comp : (k,) int
        Component label of each node (0..C-1).

    Returns
    -------
    (C,) float
    """
    extent = np.zeros(comp.max() + 1)
    for c in range(len(extent)):
        pts = V[np.concatenate([members[k] for k in np.flatnonzero(comp == c)])]
        extent[c] = np.ptp(pts, axis=0).max()
    return extent


def body_weights(mass, solid):
    """Per part, the weight that ranks it for being the body: the biggest solid part wins."""
    return mass * np.where(solid, 1.0, SHEET_WEIGHT)


def parts_by_mass(comp, mass) -> list:
    """Part labels, heaviest first (the first is the body); comp, mass (k,) per node."""
    return sorted(set(np.asarray(comp).tolist()), key=lambda c: -mass[comp == c].sum())


def join_parts(X, edges, radius, mass, extent, node_points, *, min_part: float, min_branch: float,
               inside_body=None, absorb: float = 1.0, boneless=None, nearest_first: bool = False,
               end_pieces: bool = False, mirror: bool = False):
    """Make one connected graph out of the per-part skeleton graphs.

    Parameters
    ----------
    X : (k, 3) float
        Node positions.
    edges : (E, 2) int
        Graph edges (one connected component per mesh part).
    radius : (k,) float
        Body radius at each node.
    mass, extent : (k,) float
        Per node, the weight (parts are joined heaviest first, the heaviest is the
        body) and bounding-box size of the graph component it belongs to.
    node_points : list of k (m, 3) arrays
        Per node, the surface points merged into it.
    min_part : float
        Parts smaller than this get no bones.
    min_branch : float
        A piece of a part is kept only if its surface reaches this far from the body's.
    inside_body : callable(points (n, 3), kept nodes) -> (n,) bool, optional
        Whether points lie inside the surface of the parts kept so far.
    absorb : float
        A node is absorbed by the body if it is inside it, or within this many body
        radii of a body node.
    boneless : (k,) bool, optional
        Per node, whether its part gets no bones unless it is the body (a ring:
        ring_parts; a rigid leaf part: rigid_leaf_parts).
    nearest_first : bool
        Parts touching those kept so far (within TOUCH_GAP) are joined first, heaviest
        first (a ragdoll's pelvis before its thighs, though lighter: a thigh would hang
        from the other thigh); when none touches, the heaviest of the rest (on a `mirror`
        character, of a limb's segments the first that no other segment of that side lies
        between it and them: a chibi's shin before its heavier foot), or with nearest_first
        the part whose surface lies nearest to theirs (a segmented leg: thigh, shin, foot in
        turn; a foot heavier than its shin would hang from the other foot).
        docs/auto_skeleton.md#parts
    end_pieces : bool
        A part smaller than min_part beyond the end of a limb kept so far (_beyond_limb_end)
        is kept all the same: a wooden mannequin's hand past its wrist's ball ends the arm.
    mirror : bool
        The character is its own mirror image in x = 0 (its parts wholly on one side of
        it are limb segments).

    Returns
    -------
    kept : (m,) int
        Kept node indices, sorted.
    edges : list of (int, int)
        Edges among them, in the original numbering.
    """
    n = len(X)
    surface = list(node_points)         # per node, with the points of parts sunk into it (_attach_part)
    comp = node_components(n, edges)
    order = parts_by_mass(comp, mass)
    adj = adjacency(n, edges)
    kept = list(np.flatnonzero(comp == order[0]))
    new_edges = [(a, b) for a, b in edge_list(adj) if comp[a] == order[0]]
    gaps = _Gaps(surface, comp, order[1:], kept, _sides(node_points, comp) if mirror else None)
    remaining = list(order[1:])
    while remaining:
        c = gaps.take_next(remaining, nearest=nearest_first)
        remaining.remove(c)
        idx = np.flatnonzero(comp == c)
        if boneless is not None and boneless[idx[0]]:
            continue                       # ribs, a fish's eyes: follow the nearest bone
        small = extent[idx[0]] < min_part
        if small and not (end_pieces and _beyond_limb_end(X, radius, surface, idx, kept, new_edges, comp)):
            continue                       # buttons, crumbs
        before = len(kept)
        grown = _attach_part(X, adj, radius, node_points, surface, idx, kept, new_edges, min_branch=min_branch,
                             inside_body=inside_body, absorb=absorb, comp=comp)
        gaps.add(kept[before:] + grown)
    return np.array(sorted(kept)), new_edges


def _beyond_limb_end(X, radius, surface, idx, kept, edges, comp) -> bool:
    """Whether the part with nodes idx lies beyond a kept limb's end: the kept node nearest
    to its centre is a leaf, the centre lies within 45 degrees of the leaf's direction
    beyond it and farther from the body (the first kept part) than the leaf, and the
    part's surface within twice the limb's thickness (twice its part's largest node
    radius) of the limb's part (an eye on a face, a button on a coat lie beside their
    nodes; a shoulder's ball lies before the upper arm's inner end)."""
    centre = X[idx].mean(axis=0)
    K = np.array(kept)
    leaf = K[np.linalg.norm(X[K] - centre, axis=1).argmin()]
    beside = [b for a, b in edges if a == leaf] + [a for a, b in edges if b == leaf]
    if len(beside) != 1:
        return False
    u = X[leaf] - X[beside[0]]
    u = u / max(np.linalg.norm(u), 1e-12)
    along = (centre - X[leaf]) @ u
    if along <= 0 or np.linalg.norm(centre - X[leaf] - along * u) > along:
        return False
    body = X[K[comp[K] == comp[K[0]]]]          # the first kept part is the body
    if np.linalg.norm(body - centre, axis=1).min() <= np.linalg.norm(body - X[leaf], axis=1).min():
        return False                            # a limb's end leads away from the body
    limb = K[comp[K] == comp[leaf]]
    gap = cKDTree(np.vstack([surface[k] for k in limb])).query(np.vstack([surface[k] for k in idx]))[0].min()
    return bool(gap <= 4 * radius[limb].max())


def _sides(node_points, comp) -> dict:
    """Per part, +1 or -1 when its surface points lie wholly on that side of x = 0, else 0."""
    x = {}
    for k, c in enumerate(comp.tolist()):
        x.setdefault(c, []).append(np.asarray(node_points[k]).reshape(-1, 3)[:, 0])
    x = {c: np.concatenate(v) for c, v in x.items()}
    return {c: 0 if not len(v) else 1 if v.min() > 0 else -1 if v.max() < 0 else 0 for c, v in x.items()}


class _Gaps:
    """Per part not yet joined, the shortest distance from its surface points to those
    of the nodes kept so far, with the points of the parts sunk into them (join_parts'
    order). `sides`: per part, its side of a mirror character's plane (_sides), or None."""

    def __init__(self, surface, comp, parts, kept, sides=None):
        self.surface, self.sides = surface, sides
        self.points = {c: np.vstack([surface[k] for k in np.flatnonzero(comp == c)]) for c in parts}
        self.gap = dict.fromkeys(parts, np.inf)
        self.trees, self.pairs = {}, {}
        self.add(kept)

    def add(self, nodes):
        """Count the newly kept `nodes` in the gaps."""
        if len(nodes) == 0:
            return
        tree = cKDTree(np.vstack([self.surface[k] for k in nodes]))
        for c in self.gap:
            self.gap[c] = min(self.gap[c], tree.query(self.points[c])[0].min())

    def take_next(self, remaining, nearest=True):
        """The part to join next, no longer tracked: the first (heaviest) of `remaining`
        touching the kept ones, else the nearest (ties to the heavier) or, not `nearest`,
        the first that no other part of its side lies between it and the kept ones
        (_bridged: a mirror character's limb segments)."""
        touching = [c for c in remaining if self.gap[c] <= TOUCH_GAP]
        if touching:
            choice = touching[0]
        elif nearest:
            choice = min(remaining, key=lambda c: self.gap[c])
        else:
            choice = next(c for c in remaining if not self._bridged(c, remaining))
        del self.gap[choice]
        return choice

    def _bridged(self, c, remaining) -> bool:
        """Whether part c is a limb segment (wholly on one side of a mirror character's
        plane) and another of `remaining` on its side lies between it and the kept ones,
        nearer to both than they are to each other (a chibi's shin between its heavier
        foot and the body: the foot would hang from the pelvis or from the other foot)."""
        side = 0 if self.sides is None else self.sides.get(c, 0)
        return side != 0 and any(b != c and self.sides.get(b, 0) == side and self.gap[b] < self.gap[c]
                                 and self._pair(c, b) < self.gap[c] for b in remaining)

    def _pair(self, a, b) -> float:
        """The shortest distance between the surface points of parts a and b."""
        key = (min(a, b), max(a, b))
        if key not in self.pairs:
            if b not in self.trees:
                self.trees[b] = cKDTree(self.points[b])
            self.pairs[key] = self.trees[b].query(self.points[a])[0].min()
        return self.pairs[key]


def _attach_part(X, adj, radius, node_points, surface, idx, kept, new_edges, *, min_branch, inside_body, absorb,
                 comp):
    """Join the part with nodes idx to the body (kept); appends to kept and new_edges.
    comp: (k,) the part (graph component) of each node. `surface`: per node, the surface
    points the links and join_parts' order measure gaps to: its own (`node_points`) and
    those of the nodes of parts sunk into the body (none of their pieces kept) merged
    into it; updated here. A ragdoll's thigh sunk into its pelvis is still the surface
    its shin meets across the knee's gap, so the shin hangs from the pelvis, not from the
    other shin (docs/auto_skeleton.md#parts). Returns the kept nodes whose surface grew."""
    K = np.array(kept)
    body = cKDTree(np.vstack([node_points[k] for k in K]))
    shell = None                           # the kept nodes' surface points, when a piece needs a link
    target, free = _absorbed(X, radius, idx, K, inside_body, absorb)
    before = len(kept)
    sub = [(a, b) for a in free for b in adj[a] if b in set(free.tolist()) and a < b]
    local = {v: k for k, v in enumerate(free.tolist())}
    labels = node_components(len(free), [(local[a], local[b]) for a, b in sub])
    for lab in set(labels.tolist()):          # none left: a shell around the body (clothes, helmet)
        piece = free[labels == lab]
        piece_set = set(piece.tolist())
        # Keep only pieces whose surface reaches well away from the body's surface
        # (a head, a ponytail, a separate limb); hair caps, clothes and armour hug
        # it and get no bones.
        reach = body.query(np.vstack([node_points[k] for k in piece]))[0]
        if reach.max() < min_branch:
            continue
        if shell is None:
            shell = cKDTree(np.vstack([surface[k] for k in K]))
            owner = np.repeat(K, [len(surface[k]) for k in K])      # of each of shell's points
        kept.extend(piece.tolist())
        new_edges.extend((a, b) for a, b in sub if a in piece_set)
        new_edges.append(_link(X, adj, radius, piece, target, K, _surface_gaps(shell, owner, comp, node_points, piece),
                               comp))
    if len(kept) > before:
        return []
    return _merge_points(surface, {**_nearest_kept(X, free, K), **target})   # sunk into the body


def _merge_points(surface, into: dict) -> list:
    """Add each node's surface points to those of the kept node it merges `into`
    (node -> kept node); the kept nodes that grew."""
    for a, b in into.items():
        surface[b] = np.vstack([surface[b], surface[a]])
    return sorted(set(into.values()))


def _nearest_kept(X, piece, K) -> dict:
    """Each node of the piece -> the kept node (of K) nearest to it."""
    d = np.linalg.norm(X[piece, None] - X[None, K], axis=2)
    return dict(zip(piece.tolist(), K[d.argmin(axis=1)].tolist()))


def _absorbed(X, radius, idx, K, inside_body, absorb):
    """Nodes of a part that the body absorbs.

    Returns (dict absorbed node -> body node it merges into, (f,) the other nodes)."""
    d = np.linalg.norm(X[idx, None] - X[None, K], axis=2)
    near = K[d.argmin(axis=1)]
    absorbed = d.min(axis=1) < absorb * radius[near]
    if inside_body is not None:
        absorbed |= inside_body(X[idx], K)
    return dict(zip(idx[absorbed].tolist(), near[absorbed].tolist())), idx[~absorbed]


def _surface_gaps(shell, owner, comp, node_points, piece) -> dict:
    """Per kept part (component), the shortest distance from the piece's surface points
    to its own (`shell`: a cKDTree of the kept nodes' surface points, `owner`: their nodes)."""
    dist, nearest = shell.query(np.vstack([node_points[k] for k in piece]))
    gaps = {}
    for d, c in zip(dist, comp[owner[nearest]]):
        gaps[c] = min(gaps.get(c, np.inf), d)
    return gaps


def _link(X, adj, radius, piece, target, K, gaps, comp):
    """The edge that hangs a piece off the body: the shortest of its edges into absorbed
    nodes (redirected to their body node), else from its end to the kept part its axis
    points to (_in_line), else from its node nearest to a kept node, whose part must meet
    the piece within TOUCH_GAP of the nearest part's gap (`gaps`: per kept part, its
    surface's distance from the piece's; `comp`: each node's part), else the nearest node
    of the nearest part: a shin hangs from its own thigh across the knee's gap, not from
    the other shin, whose node can lie nearer."""
    links = [(a, target[b]) for a in piece for b in adj[a] if b in target]
    if links:
        return min(links, key=lambda l: np.linalg.norm(X[l[0]] - X[l[1]]))
    link = _nearest_pair(X, piece, K)
    nearest = min(gaps, key=gaps.get)
    if gaps.get(comp[link[1]], np.inf) > gaps[nearest] + TOUCH_GAP:
        link = _nearest_pair(X, piece, K[comp[K] == nearest])
    return _in_line(X, radius, piece, K, gaps, comp, nearest) or link


def _in_line(X, radius, piece, K, gaps, comp, nearest):
    """(piece's end node, kept node) where an elongated piece's axis, beyond one of its
    ends, meets a kept node within half the piece's thickness (twice its largest node
    radius) of the axis, that node's part no more than the thickness farther from the
    piece's surface than the `nearest` part is; the nearest such node along the axis. A
    wooden mannequin's shin points up to its own thigh across the knee's ball, though the
    other shin lies nearer (docs/auto_skeleton.md#parts). None for a piece no longer than
    it is thick, or when the nearest part lies in line too (an upper arm pointing into the
    chest keeps its link)."""
    if len(piece) < 2:
        return None
    P = X[piece]
    axis = np.linalg.svd(P - P.mean(axis=0), full_matrices=False)[2][0]
    along = (P - P.mean(axis=0)) @ axis
    thick = 2 * radius[piece].max()
    if np.ptp(along) < thick:
        return None
    close = np.array([gaps.get(c, np.inf) for c in comp[K]]) <= min(gaps.values()) + thick
    best = None
    for end, direction in ((piece[along.argmax()], axis), (piece[along.argmin()], -axis)):
        d = X[K] - X[end]
        ahead = d @ direction
        ok = close & (ahead > 0) & (off_axis(d, direction) <= thick / 2)
        if (comp[K[ok]] == nearest).any():
            return None
        if ok.any():
            k = np.flatnonzero(ok)[ahead[ok].argmin()]
            if best is None or ahead[k] < best[0]:
                best = (ahead[k], end, K[k])
    return None if best is None else (best[1], best[2])


def _nearest_pair(X, piece, K):
    dd = np.linalg.norm(X[piece, None] - X[None, K], axis=2)
    p, q = np.unravel_index(dd.argmin(), dd.shape)
    return piece[p], K[q]



def straighten_convex_parts(X, comp, members, V, body_centre):
    """Node positions with each convex part's nodes moved onto one straight line.

    The contraction of a box gives a cross with spurs to its corners, and each spur
    became a chain: a low-poly character of boxes got dozens of bones. A convex part
    (docs/auto_skeleton.md#parts) cannot bend, so its nodes are projected onto its main
    axis through its centroid (the axis from `body_centre` to the centroid when the part
    has no main axis); the chains then make it one straight limb.

    X (k, 3) node positions; comp (k,) part of each node; members: per node, its proxy
    vertices; V (p, 3) the proxy's vertices. Returns a new (k, 3) array.
    """
    X = np.array(X, dtype=np.float64)
    for c in np.unique(comp):
        nodes = np.flatnonzero(comp == c)
        if len(nodes) < 2:
            continue
        P = V[np.concatenate([members[k] for k in nodes])]
        if not _convex(P):
            continue
        centre = P.mean(axis=0)
        lam, vec = np.linalg.eigh(np.cov((P - centre).T))
        axis = vec[:, -1]
        if lam[-2] >= ISOTROPIC * lam[-1]:
            away = centre - np.asarray(body_centre, dtype=np.float64)
            if np.linalg.norm(away) < 1e-12:
                continue
            axis = away / np.linalg.norm(away)
        X[nodes] = centre + np.outer((X[nodes] - centre) @ axis, axis)
    return X


def rigid_solid(P) -> bool:
    """Is the point set P (n, 3) (a character in one part) a convex solid too stubby to
    bend: a cube, a ball, an egg, a slime? It cannot bend anywhere, so it gets the blob's
    one bone (single_bone); the contraction of such a body ends in spurs to its corners,
    and which of them survive the collapse varies with the last bits of the solver
    (docs/auto_skeleton.md#tree). Stubby as a rigid leaf part is (rigid_leaf_parts): its
    extent along its main axis under SLENDER x that along its second; a rod is bent."""
    if not _convex(P):
        return False
    extent = _principal_extents(P)
    return bool(extent[2] < SLENDER * extent[1])


def _principal_extents(P) -> np.ndarray:
    """(3,) the extents of the points P (n, 3) along their principal axes, smallest spread first."""
    return np.ptp((P - P.mean(axis=0)) @ np.linalg.eigh(np.cov(P.T))[1], axis=0)


def _convex(P) -> bool:
    """Do CONVEX_SHARE of the points lie on their convex hull?"""
    extent = np.ptp(P, axis=0).max()
    if len(P) < 4 or extent <= 0:
        return False
    try:
        hull = ConvexHull(P)
    except QhullError:
        return False              # flat or degenerate: a sheet, not a solid box
    depth = -(P @ hull.equations[:, :3].T + hull.equations[:, 3]).max(axis=1)
    return float(np.mean(depth <= HULL_TOLERANCE * extent)) >= CONVEX_SHARE
