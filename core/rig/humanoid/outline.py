# SPDX-License-Identifier: GPL-3.0-or-later
"""The front outline's medial axis as a rig for recognition
(docs/auto_skeleton.md#front-outline).

A chibi or a toy built from interpenetrating pieces (a head box on a body box, arms
pushed into the chest) contracts into a generic tree whose ears and hair hang from the
arms: the tree shows no humanoid. Its front view does: two legs with a gap between them,
arms out to the sides, a head on top. The outline seen from the front (upright frame:
looking along +Y) is thinned to its medial axis; each axis pixel gets the depth halfway
through the mesh behind it, and the axis becomes a tree of short bones that
`recognition.recognise` reads like any generic rig, with the same checks.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ...mesh import surface_points
from ..bones import END_REACH
from ..graph import descendants, length_graph
from .recognition import FOOT_LEVEL, recognise

ROWS = 128                # outline resolution: pixels over the height
ARM_LEVEL = 0.05          # straight-out arms' outer quarters lie level within this share of the height
GAP = 0.03                # a gap between the legs at least this share of the height high
SOLE = 0.03               # floor contact: the surface this near the floor (share of the height)
SOLE_GAP = 0.05           # ... a gap in it this wide parts two feet (share of the height)
SMOOTH = 8                # rounds of averaging the axis depth along the tree
SPUR = 0.5                # a branch reaching less than this x its junction's half-width past it: a corner's spur


def outline_humanoid(vertices, faces, symmetric: bool = False, inside=None):
    """A humanoid recognised on the front outline's medial axis (upright frame), its chest
    on the arms' line (_on_arm_line), or None. The outline shows a body standing up
    only: one taller than it is deep, on one foot each side (_one_foot_a_side)."""
    V = np.asarray(vertices, dtype=np.float64)
    extent = np.ptp(V, axis=0)
    if extent[1] >= extent[2] or not _one_foot_a_side(V, np.asarray(faces)):
        return None                      # lying or long (a bird's tail, a fish), or four-legged
    bones = outline_bones(V, faces)
    # each leg hangs from the crotch by one sideways bone (_legs_from_crotch): its socket
    # is where the leg turns down, however short the leg, and no robe hides it
    human = None if bones is None else recognise(*bones, V, symmetric, inside=inside, faces=faces,
                                                 hip_search=1.0, legs_seen=True)
    if human is None:
        return None
    human.paths = _on_arm_line(human.paths, ARM_LEVEL * float(extent[2]))
    human.outline = True
    return human


def _one_foot_a_side(V, F) -> bool:
    """Whether the body stands on one foot each side: seen from above, the surface within
    SOLE of the height of the floor, on either side of the plane x = 0, has no gap from
    front to back wider than SOLE_GAP of the height and than the contacts either side of
    it (a four-legged animal's front and hind feet; its front outline shows two legs).
    Points over the surface, as a low-poly sole has vertices at its corners only."""
    height = float(np.ptp(V[:, 2]))
    P = surface_points(V, F, SOLE / 3 * height)
    P = P[P[:, 2] < V[:, 2].min() + SOLE * height]
    for side in (P[:, 0] > 0, P[:, 0] < 0):
        y = np.sort(P[side, 1])
        if len(y) < 2:
            continue
        gaps = np.diff(y)
        k = int(np.argmax(gaps))
        if gaps[k] > max(SOLE_GAP * height, y[k] - y[0], y[-1] - y[k + 1]):
            return False
    return True


def _on_arm_line(paths, tolerance):
    """Paths whose chest lies on the line of straight-out arms. Where the arms meet a
    wider head or shoulders above them, the medial axis runs up from each arm to meet
    the others there, above the arms: the chest then goes down the centre line to the
    arms' level (the mean height of the arms' outer quarters, when those are level within
    `tolerance`), the arms start there and leave out their climb."""
    outer = [p[3 * len(p) // 4:] for p in (paths["arm.L"], paths["arm.R"])]
    if any(np.ptp(p[:, 2]) > tolerance for p in outer):
        return paths                                    # arms hanging or raised: their own line
    level = float(np.mean([p[:, 2].mean() for p in outer]))
    spine, head = paths["spine"], paths["head"]
    if spine[-1, 2] < level + tolerance or spine[0, 2] > level - tolerance:
        return paths
    centre = np.vstack([spine, head[1:]])
    k = int(np.argmax(centre[:, 2] >= level))           # the first centre point at or above the arms
    a, b = centre[k - 1], centre[k]
    chest = a + (level - a[2]) / max(b[2] - a[2], 1e-12) * (b - a)
    out = dict(paths, spine=np.vstack([centre[:k], chest]), head=np.vstack([chest, centre[k:]]))
    for side in ("arm.L", "arm.R"):
        arm = paths[side]
        first = int(np.argmax(arm[:, 2] <= level + tolerance))   # where the climb ends
        out[side] = np.vstack([chest, arm[first:]])
    return out


def outline_bones(vertices, faces):
    """(heads (n, 3), tails (n, 3), parents (n,)) of the front outline's medial axis
    (upright frame), or None when the outline has no axis of a few pixels."""
    V = np.asarray(vertices, dtype=np.float64)
    lo, hi = V.min(axis=0), V.max(axis=0)
    pixel = max(hi[2] - lo[2], 1e-12) / ROWS
    filled, near, far = _raster(V, np.asarray(faces), lo, pixel)
    filled = ndimage.binary_fill_holes(filled)
    rows, cols = np.nonzero(_thin(filled))
    if len(rows) < 6:
        return None
    radius = ndimage.distance_transform_edt(filled)
    order, pred = _axis_tree(rows, cols, radius)
    kept = _prune(order, pred, rows, cols, radius)
    legs = _legs_from_crotch(filled, rows, cols, pred, kept, radius)
    if legs is None:
        return None
    rows, cols, pred, kept = legs
    child = kept[pred[kept] >= 0]
    depth = _smooth(_depth(near, far, rows, cols), child, pred[child])
    points = np.stack([lo[0] + (cols + 0.5) * pixel, depth, lo[2] + (rows + 0.5) * pixel], axis=1)
    bone_of = -np.ones(len(rows), dtype=int)
    bone_of[child] = np.arange(len(child))
    heads, tails, parents = points[pred[child]], points[child].copy(), bone_of[pred[child]]
    leaf = np.ones(len(child), bool)
    leaf[parents[parents >= 0]] = False
    tails[leaf] = heads[leaf] + (tails[leaf] - heads[leaf]) * END_REACH   # _joint_graph puts them back
    return heads, tails, parents


def _legs_from_crotch(filled, rows, cols, pred, kept, radius):
    """The axis tree with its legs hung from the crotch: (rows, cols, pred, kept) with one
    pixel more, at the top of the gap between the feet, or None without such a gap.

    The medial axis joins a short torso's legs where its arms join (a chibi's torso is
    as wide as it is high), so the tree would have no pelvis below the chest. The gap
    between the legs shows where the legs part: each leg's axis is cut where it rises
    above the gap's top, the rest of it up to its junction with the body goes
    (_old_leg_top), and both hang from a new pixel there, which hangs from the nearest
    axis pixel above it (in the middle where the axis has one). `radius`: the outline's
    distance transform (the legs' half-width)."""
    pred = pred.copy()
    alive = np.zeros(len(rows), bool)
    alive[kept] = True
    children = np.bincount(pred[alive & (pred >= 0)], minlength=len(rows))
    tips = np.flatnonzero(alive & (children == 0))
    low = tips[rows[tips] < FOOT_LEVEL * filled.shape[0]]
    middle = 0.5 * (cols[low].min() + cols[low].max()) if len(low) else 0.0
    left, right = low[cols[low] > middle], low[cols[low] < middle]
    if not len(left) or not len(right):
        return None
    feet = [left[np.argmin(rows[left])], right[np.argmin(rows[right])]]
    column = int(round(0.5 * (cols[feet[0]] + cols[feet[1]])))
    crotch = int(np.argmax(filled[:, column]))        # the first filled row above the gap
    if crotch < GAP * filled.shape[0]:
        return None
    tops = []
    for foot in feet:
        node = foot
        while pred[node] >= 0 and rows[pred[node]] < crotch:
            node = pred[node]
        if pred[node] < 0:                              # the leg holds the tree's root: no body above
            return None
        tops.append((pred[node], crotch + radius[rows[node], cols[node]]))
        pred[node] = len(rows)
    legs = np.zeros(len(rows), bool)
    legs[[top for top, _ in tops]] = True
    alive &= ~np.any([_old_leg_top(top, pred, rows, alive, crotch, reach, legs) for top, reach in tops], axis=0)
    rows, cols = np.append(rows, crotch), np.append(cols, column)
    body = np.flatnonzero(alive & (rows[:-1] >= crotch))
    above = body[np.abs(cols[body] - column) <= 2]      # straight up the middle where the axis has a pixel
    body = above if len(above) else body
    pred = np.append(pred, body[np.argmin(np.hypot(rows[body] - crotch, cols[body] - column))])
    return rows, cols, pred, np.append(np.flatnonzero(alive), len(rows) - 1)


def _old_leg_top(node, pred, rows, alive, crotch, reach, legs):
    """Mask of a cut leg's old axis above the gap, from `node` up to its junction with
    the body or the other leg's old axis (`legs`: where each leg's cut axis went on up).
    A junction below `reach` (the gap's top plus the leg's half-width) whose other
    branches stay between the gap's top `crotch` and `reach` too is a hem's or a belt's
    corner on the leg (a coat flaring over the legs' tops): it goes with its branches.
    A branch reaching below the gap's top is a limb's (a foot's claws where a tail fills
    the gap)."""
    gone = np.zeros(len(pred), bool)
    while node >= 0:
        children = np.flatnonzero(alive & ~gone & (pred == node))
        if len(children):
            if rows[node] >= reach:
                break
            side = np.zeros(len(pred), bool)
            side[np.concatenate([children, *(descendants(pred, c) for c in children)])] = True
            side &= alive & ~gone
            if (rows[side] >= reach).any() or (rows[side] < crotch).any() or (side & legs).any():
                break
            gone |= side
        gone[node] = True
        node = pred[node]
    return gone


def _raster(V, F, lo, pixel):
    """The front outline (rows over z, columns over x) and, per pixel, the nearest and
    farthest depth (y) of the surface behind it: triangles sampled at under a pixel's
    spacing."""
    shape = (int(np.ceil((V[:, 2].max() - lo[2]) / pixel)) + 1, int(np.ceil((V[:, 0].max() - lo[0]) / pixel)) + 1)
    P = surface_points(V, F, 0.5 * pixel)
    r = np.clip(((P[:, 2] - lo[2]) / pixel).astype(int), 0, shape[0] - 1)
    c = np.clip(((P[:, 0] - lo[0]) / pixel).astype(int), 0, shape[1] - 1)
    flat = r * shape[1] + c
    near = np.full(shape[0] * shape[1], np.inf)
    far = np.full(shape[0] * shape[1], -np.inf)
    np.minimum.at(near, flat, P[:, 1])
    np.maximum.at(far, flat, P[:, 1])
    filled = np.isfinite(near).reshape(shape)
    return filled, near.reshape(shape), far.reshape(shape)


def _thin(image):
    """Zhang-Suen thinning: the one-pixel medial axis of a binary image."""
    img = np.pad(image.astype(np.uint8), 1)
    while True:
        changed = False
        for step in (0, 1):
            p = [np.roll(np.roll(img, -dr, 0), -dc, 1) for dr, dc in
                 ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))]
            count = sum(p)
            ring = p + [p[0]]
            transitions = sum(((ring[k] == 0) & (ring[k + 1] == 1)).astype(np.uint8) for k in range(8))
            if step == 0:
                a, b = p[0] * p[2] * p[4], p[2] * p[4] * p[6]
            else:
                a, b = p[0] * p[2] * p[6], p[0] * p[4] * p[6]
            remove = (img == 1) & (count >= 2) & (count <= 6) & (transitions == 1) & (a == 0) & (b == 0)
            if remove.any():
                img[remove] = 0
                changed = True
        if not changed:
            return img[1:-1, 1:-1].astype(bool)


_FORWARD = ((0, 1), (1, -1), (1, 0), (1, 1))     # each 8-neighbour pair once


def _axis_tree(rows, cols, radius):
    """The 8-connected axis pixels as a tree: (the pixels' breadth-first order, each
    pixel's parent), from the widest pixel of the largest connected piece (the one-pixel
    loops where axis lines meet are broken; the other pieces are left out)."""
    index = -np.ones((rows.max() + 2, cols.max() + 2), dtype=int)
    index[rows, cols] = np.arange(len(rows))
    edges = []
    for dr, dc in _FORWARD:
        other = np.where(cols + dc >= 0, index[rows + dr, np.maximum(cols + dc, 0)], -1)
        edges.append(np.stack([np.flatnonzero(other >= 0), other[other >= 0]], axis=1))
    graph = length_graph(np.stack([rows, cols], axis=1).astype(float), np.vstack(edges))
    _, label = connected_components(graph, directed=False)
    main = np.flatnonzero(label == np.bincount(label).argmax())
    root = int(main[np.argmax(radius[rows[main], cols[main]])])
    return breadth_first_order(graph, root, directed=False)


def _prune(order, pred, rows, cols, radius):
    """The tree without the spurs that corners give: a branch from a leaf to its junction
    whose outline reaches less than SPUR x the junction's half-width past the junction's
    inscribed circle is removed, all such at once (a big head's corners leave its axis
    ending at the head's centre), until none is left; the two farthest reaching stay.
    Returns the kept pixel indices."""
    alive = np.zeros(len(pred), bool)
    alive[order] = True
    r = radius[rows, cols]
    root = order[0]
    while True:
        children = np.bincount(pred[alive & (pred >= 0)], minlength=len(pred))
        leaves = np.flatnonzero(alive & (children == 0))
        branches, reach = [], []
        for leaf in leaves:
            path, node, length = [leaf], leaf, 0.0
            while node != root and children[pred[node]] == 1:
                length += np.hypot(rows[node] - rows[pred[node]], cols[node] - cols[pred[node]])
                node = pred[node]
                path.append(node)
            junction = pred[node] if node != root else node
            branches.append(path)
            reach.append((length + r[leaf] - r[junction]) / max(r[junction], 1.0))
        reach = np.asarray(reach)
        cut = [k for k in np.flatnonzero(reach < SPUR) if k not in np.argsort(-reach)[:2]]
        if not cut:
            return np.flatnonzero(alive)
        for k in cut:
            alive[branches[k]] = False


def _smooth(depth, a, b, rounds: int = SMOOTH):
    """Depths averaged along the tree's edges a-b `rounds` times: where one piece stands
    in front of another (a belt, a hand), the axis does not jump back and forth."""
    n = len(depth)
    adjacency = coo_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr()
    count = np.asarray(adjacency.sum(axis=1)).ravel()
    for _ in range(rounds):
        depth = np.where(count > 0, 0.5 * depth + 0.5 * (adjacency @ depth) / np.maximum(count, 1), depth)
    return depth


def _depth(near, far, rows, cols):
    """The depth halfway through the mesh at each axis pixel (the nearest sampled pixel's
    where the pixel itself holds no sample: the fill between parts)."""
    sampled = np.isfinite(near)
    if not sampled[rows, cols].all():
        _, (ir, ic) = ndimage.distance_transform_edt(~sampled, return_indices=True)
        rows, cols = ir[rows, cols], ic[rows, cols]
    return 0.5 * (near[rows, cols] + far[rows, cols])
