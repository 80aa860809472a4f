# SPDX-License-Identifier: GPL-3.0-or-later
"""Recognition of a humanoid on the generic rig (docs/auto_skeleton.md#humanoids): the
Humanoid paths (pelvis -> chest, chest -> head tip, chest -> hands, hip sockets -> feet).

The generic tree is read as an undirected graph of joints; its leaves are grouped into
extremities (a hand's fingers are one), and a humanoid has two feet on the floor (the
pair farthest apart along the tree: a hem hanging from the pelvis is none), a head on top
and two hands, with nothing else longer than a short appendage. Its pelvis is where the
paths between the feet and the head meet (the tree median of the three), its chest where
the paths between the hands and the head meet. Under a robe the hips are lifted by
proportion (_lift_hidden_hips); a mirror-symmetric mesh gets symmetric paths.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.csgraph import shortest_path

from ...rays import inflated_corners, ray_hits
from ..bones import END_REACH
from ..graph import length_graph
from ..polyline import length as path_length
from ..polyline import point_at
from ...symmetry import MIRROR

# Leaves that branch apart this close to both of them (tree distance, fraction of the
# height) are one extremity: the fingers of a hand, a foot's toe and heel, a head's parts.
EXTREMITY_SPAN = 0.15
FOOT_LEVEL = 0.15          # a foot ends this close to the floor (fraction of the height)
HEAD_CENTRE = 0.15         # the head ends this close to the plane of symmetry (fraction of the width)
APPENDAGE = 0.25           # any other extremity must branch off shorter than this (a tail, wings: not humanoid)
HEADGEAR = 0.3             # ... unless above the chest and this close to the head's tip (share of the height): a crown, a helmet, ears
ON_BODY = 0.15             # ... or its tip this close to the spine and head paths (share of the height): a flap, a backpack
UPRIGHT = 0.6              # pelvis -> chest points up at least this much (cosine)
DOWN = 0.7                 # a leg segment pointing down at least this much (cosine) is below the hip
HIP_SEARCH = 0.35          # the hip socket is within this share of the pelvis -> foot path
HIP_FRACTION = 0.14        # ... else at this share (the artists' median)
# The head's and neck's mesh lies within this share of the height of the head path
# sideways (_top_on_plane; the neck's cross-sections, skeleton.py).
NECK_REACH = 0.2
ROBE_PELVIS = 0.2          # a pelvis this low (share of the height) is a robe's hem: the legs are hidden
HIDDEN_HIP = 0.47          # ... and the hips go up to this share of the height (the CC0 artists' median)
CROTCH_DROP = 0.02         # hip sockets this far (share of the height) below the crotch go up to it (_hips_to_crotch)
CROTCH_GAP = (0.01, 0.03, 0.06)   # ... the crotch's gap looked through this far below it (share of the height)
CROTCH_GROW = 1e-6         # ... the rays' triangles grown this much (share of the height): none slips between two


@dataclass
class Humanoid:
    """The paths of a recognised humanoid, (k, 3) polylines in the upright frame."""
    paths: dict          # "spine", "head", "arm.L", "arm.R", "leg.L", "leg.R"
    hidden_legs: bool = False   # under a robe: the hips were placed by proportion (_lift_hidden_hips)
    hips_at_crotch: bool = False   # the hip sockets were below the crotch and went up to it (_hips_to_crotch)
    symmetric: bool = False     # the mesh is its own mirror image in x = 0
    vertices: np.ndarray | None = None   # the mesh, upright frame (for the spine's depth)
    faces: np.ndarray | None = None      # its welded faces (for the fingers)
    inside: object = None    # callable(points (n, 3)) -> (n,) bool: inside the mesh (upright frame)
    joints: dict | None = field(default=None, repr=False)   # standard_joints, once computed
    markers: dict | None = None   # marker name -> point placed by the user (markers.py; upright frame)
    cues: dict = field(default_factory=dict)   # role -> the cue that placed its joint (landmark_cues.py)
    outline: bool = False    # recognised on the front outline's medial axis (outline.py), not the generic tree


def recognise(heads, tails, parents, vertices, symmetric: bool = False, inside=None,
              faces=None, hip_search: float = HIP_SEARCH, legs_seen: bool = False) -> Humanoid | None:
    """The humanoid paths of a generic rig (upright frame), or None if it is not one.
    symmetric: the mesh is its own mirror image in x = 0 (core.symmetry.is_mirror_symmetric); its
    paths are then made symmetric (_symmetric). inside: optional callable(points) ->
    bool array; a spine joint moved to SPINE_DEPTH must stay inside (a dress's slab
    is not the body's). faces: the mesh's welded faces; the hands then get fingers
    where they have separable ones (standard_joints). hip_search: the share of a
    pelvis -> foot path searched for the hip socket (_from_hip). legs_seen: the legs part
    at a gap seen between them (the front outline's crotch), so a low pelvis is no
    robe's hem (_lift_hidden_hips) but a short-legged body's."""
    points, edges = _joint_graph(heads, tails, parents)
    if len(points) < 6:
        return None
    V = np.asarray(vertices, dtype=np.float64)
    F = None if faces is None else np.asarray(faces)
    height, width = np.ptp(V[:, 2]), max(np.ptp(V[:, 0]), 1e-12)
    floor = V[:, 2].min()
    foot_level = floor + FOOT_LEVEL * height
    dist, pred = _tree_distances(points, edges)
    tips = _extremities(points, edges, dist, height, HEAD_CENTRE * width, foot_level)
    feet = _feet([t for t in tips if points[t, 2] < foot_level], points, dist)
    if feet is None:
        return None
    rest = [t for t in tips if t not in feet]
    if not rest:
        return None
    head, top = max(rest, key=lambda t: points[t, 2]), None
    if abs(points[head, 0]) > HEAD_CENTRE * width:     # a hand raised above the head, or no head
        head, top = _top_on_plane(points, V, HEAD_CENTRE * width, height)
        if head is None:
            return None
    pelvis = _median(feet[0], feet[1], head, dist)
    # hands do not hang from the pelvis (a skirt's hem does): the pelvis is not on their way to the head
    upper = [t for t in rest if t != head and dist[head, t] < dist[head, pelvis] + dist[pelvis, t] - 1e-9]
    hands = _hands(upper, points, dist, head)
    if hands is None:
        return None
    chest = _median(hands[0], hands[1], head, dist)
    spine = points[chest] - points[pelvis]
    if np.linalg.norm(spine) < 0.05 * height or spine[2] < UPRIGHT * np.linalg.norm(spine):
        return None
    main = set()
    for a, b in ((pelvis, feet[0]), (pelvis, feet[1]), (pelvis, chest), (chest, head),
                 (chest, hands[0]), (chest, hands[1])):
        main.update(_path(pred, a, b))
    others = [t for t in tips if t not in (*feet, head, *hands) and not _headgear(t, head, chest, points, height)]
    torso = _path(pred, pelvis, chest) + _path(pred, chest, head)
    if any(min(dist[t, m] for m in main) > APPENDAGE * height and not _on_torso(t, torso, points, height)
           for t in others):
        return None                       # a tail, wings or extra limbs
    left = lambda pair: sorted(pair, key=lambda t: -points[t, 0])  # noqa: E731
    (hand_l, hand_r), (foot_l, foot_r) = left(hands), left(feet)
    neck = _polyline(pred, points, chest, head)
    if top is not None:
        neck = np.vstack([neck, top])
    paths = {"spine": _polyline(pred, points, pelvis, chest), "head": neck,
             "arm.L": _polyline(pred, points, chest, hand_l), "arm.R": _polyline(pred, points, chest, hand_r),
             "leg.L": _from_hip(_polyline(pred, points, pelvis, foot_l), hip_search),
             "leg.R": _from_hip(_polyline(pred, points, pelvis, foot_r), hip_search)}
    between = (point_at(paths["leg.L"], 0.5) + point_at(paths["leg.R"], 0.5)) / 2
    hip_z = None if F is None else _crotch(V, F, between, height)
    # the legs part above the tree's pelvis: seen, however short, so no robe's hem
    legs_seen = legs_seen or (hip_z is not None and hip_z > paths["spine"][0, 2])
    # no gap seen between the legs: a skirt or a tunic may hide their tops at any height
    hem = HIDDEN_HIP if F is not None and hip_z is None else ROBE_PELVIS
    lifted = paths if legs_seen else _lift_hidden_hips(paths, floor, height, hem)
    crotch = lifted if lifted is not paths or hip_z is None else _hips_to_crotch(paths, hip_z, height)
    return Humanoid(_symmetric(crotch) if symmetric else crotch, hidden_legs=lifted is not paths,
                    hips_at_crotch=crotch is not lifted, symmetric=symmetric, vertices=V, inside=inside, faces=F)


def _top_on_plane(points, V, centre_band, height):
    """(joint, top point) for a body whose highest extremity is off the plane of symmetry:
    the highest joint on the plane (a head's, below a raised hand; or the top of the torso
    of armour modelled for a separate head mesh, whose neck rim and shoulders end in
    extremities beside the plane) and the top of the mesh above it (within NECK_REACH
    of it sideways), where the head path then ends; (None, None) without such a joint."""
    on = np.flatnonzero(np.abs(points[:, 0]) <= centre_band)
    if not len(on):
        return None, None
    j = int(on[np.argmax(points[on, 2])])
    near = V[np.hypot(V[:, 0] - points[j, 0], V[:, 1] - points[j, 1]) < NECK_REACH * height]
    top = np.array([points[j, 0], points[j, 1], near[:, 2].max() if len(near) else points[j, 2]])
    return j, (top if top[2] > points[j, 2] else None)


def _headgear(tip, head, chest, points, height) -> bool:
    """A tip above the chest within HEADGEAR x height of the head's tip or of its mirror
    image (the tip may be one of a pair: ears, horns, antennae): a crown's points, a
    helmet's parts, animal ears, not a limb (arms end farther, wings and tails lower)."""
    near = min(np.linalg.norm(points[tip] - points[head] * m) for m in (1.0, MIRROR))
    return bool(points[tip, 2] > points[chest, 2] and near < HEADGEAR * height)


def _on_torso(tip, torso, points, height) -> bool:
    """An extremity whose tip lies within ON_BODY x height of the spine and head paths'
    joints (`torso`), however long its way along the tree: a tunic's flap, a strap, a
    backpack, not a tail or a wing, which stand off the body, nor a part hanging by an
    arm (a mech's shoulder plates)."""
    return bool(np.linalg.norm(points[torso] - points[tip], axis=1).min() < ON_BODY * height)


def _lift_hidden_hips(paths: dict, floor: float, height: float, hem: float = ROBE_PELVIS) -> dict:
    """A robe, a dress or a skirt hides the legs: the generic tree's legs branch at its
    hem, and the pelvis found there lies below `hem` of the height (ROBE_PELVIS: near
    the floor; HIDDEN_HIP where no gap between the legs is seen, so a skirt or a tunic
    may end at any height). The pelvis then goes up the spine path to HIDDEN_HIP of the
    height, and each leg path starts at that height above where the leg leaves the hem."""
    spine = paths["spine"]
    hip_z = floor + HIDDEN_HIP * height
    if spine[0, 2] >= floor + hem * height or spine[-1, 2] <= hip_z:
        return paths
    out = dict(paths, spine=spine_from(spine, hip_z))
    for side in (".L", ".R"):
        leg = paths["leg" + side]
        out["leg" + side] = np.vstack([[leg[0, 0], out["spine"][0, 1], hip_z], leg])
    return out


def spine_from(spine, z: float) -> np.ndarray:
    """The pelvis -> chest path from height z on (its pelvis moved up the path to z);
    z lies between the path's first and last heights."""
    k = int(np.argmax(spine[:, 2] >= z))            # the first spine point at or above it
    a, b = spine[k - 1], spine[k]
    return np.vstack([a + (z - a[2]) / max(b[2] - a[2], 1e-12) * (b - a), spine[k:]])


def _hips_to_crotch(paths: dict, hip_z: float, height: float) -> dict:
    """The generic tree can join the legs below the crotch (overalls, a space suit: its
    pelvis 0.08 of the height under the gap between the legs, or on one thigh; an A-posed
    body's tree can run from the pelvis straight down into a thigh), and the hip sockets
    found on the paths then lie on the thighs. A thigh reaches at least up to the crotch:
    a socket more than CROTCH_DROP of the height below it goes up to it, the pelvis too
    when lower (as in _lift_hidden_hips). The crotch: the first surface straight above the
    floor between the legs (halfway down each), where the gap below is open to the front
    or the back (inside a skirt or a tunic it is not: the legs' tops are hidden), at
    hip_z (_crotch)."""
    low = [side for side in (".L", ".R") if paths["leg" + side][0, 2] < hip_z - CROTCH_DROP * height]
    if not low:
        return paths
    out = dict(paths)
    for side in low:
        leg = paths["leg" + side]
        out["leg" + side] = np.vstack([[leg[0, 0], leg[0, 1], hip_z], leg])
    spine = paths["spine"]
    if spine[0, 2] < hip_z < spine[-1, 2]:
        out["spine"] = spine_from(spine, hip_z)
    return out


def _crotch(V, F, between, height):
    """Height of the first surface straight above the floor at `between` (x, y), or None
    when nothing is there or the gap below it is closed to the front and the back at each
    of the CROTCH_GAP depths (thighs touching just under the crotch close the first;
    a skirt closes them all). The triangles are grown by CROTCH_GROW x the height: a ray
    up through a vertex (a ragdoll's round pelvis piece has one right between the legs)
    slipped between the triangles around it and hit the chest."""
    T0, T1, T2 = inflated_corners(V, F, CROTCH_GROW * height)
    E1, E2 = T1 - T0, T2 - T0
    start = np.array([between[0], between[1], V[:, 2].min() - 0.01 * height])
    t = ray_hits(start, np.array([[0.0, 0.0, 1.0]]), T0, E1, E2)[0]
    if not np.isfinite(t):
        return None
    for drop in CROTCH_GAP:
        below = start + [0.0, 0.0, t - drop * height]
        ahead = ray_hits(below, np.array([[0.0, -1.0, 0.0], [0.0, 1.0, 0.0]]), T0, E1, E2)
        if not np.isfinite(ahead).all():
            return float(start[2] + t)
    return None


def _symmetric(paths: dict) -> dict:
    """Paths of a mirror-symmetric character made symmetric. A generic tree can hang one
    arm off a lower spine joint than the other; that side's chest -> hand path then runs
    down the spine first and is the longer one: each limb takes the shorter side's path
    and its mirror image, and the centre paths lie on the plane of symmetry."""
    out = dict(paths)
    for limb in ("arm", "leg"):
        left, right = paths[limb + ".L"], paths[limb + ".R"]
        if path_length(right) < path_length(left):
            left = right * MIRROR
        out[limb + ".L"], out[limb + ".R"] = left, left * MIRROR
    for centre in ("spine", "head"):
        out[centre] = paths[centre] * np.array([0.0, 1.0, 1.0])
    return out


def _from_hip(path, search: float = HIP_SEARCH) -> np.ndarray:
    """The part of a pelvis -> foot path below the hip socket: where the path, after
    leaving the pelvis sideways, turns down (within the first `search` of its length);
    else at HIP_FRACTION of it."""
    seg = np.diff(path, axis=0)
    length = np.linalg.norm(seg, axis=1)
    arc = np.concatenate([[0.0], np.cumsum(length)])
    for k in range(1, len(path) - 1):
        if arc[k] > search * arc[-1]:
            break
        if seg[k, 2] < -DOWN * length[k]:
            return path[k:]
    start = point_at(path, HIP_FRACTION)
    return np.vstack([start, path[arc > HIP_FRACTION * arc[-1]]])


# -- the joint graph --------------------------------------------------------------------------

def _joint_graph(heads, tails, parents):
    """Unique joint points and the bones between them (a tree). Leaf bones' tails are put
    back where their node was (rig.bones.shorten_end_bones stopped them short)."""
    heads, tails = np.asarray(heads, float), np.asarray(tails, float).copy()
    parents = np.asarray(parents)
    leaf = np.ones(len(heads), bool)
    leaf[parents[parents >= 0]] = False
    tails[leaf] = heads[leaf] + (tails[leaf] - heads[leaf]) / END_REACH
    ends = np.vstack([heads, tails])
    scale = max(np.ptp(ends, axis=0).max(), 1e-12)
    keys = np.round(ends / scale * 1e6).astype(np.int64)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    points = ends[first]
    K = len(heads)
    edges = np.stack([inverse[:K], inverse[K:]], axis=1)
    # a child whose head floats off its parent's tail (a socket: hips, shoulders) hangs from it
    child = np.flatnonzero(parents >= 0)
    links = np.stack([inverse[K + parents[child]], inverse[child]], axis=1)
    edges = np.vstack([edges, links])
    edges = np.unique(np.sort(edges, axis=1), axis=0)
    return points, edges[edges[:, 0] != edges[:, 1]]


def _tree_distances(points, edges):
    return shortest_path(length_graph(points, edges), directed=False, return_predecessors=True)


def _extremities(points, edges, dist, height, centre_band, foot_level) -> list:
    """One tip per extremity (leaves that branch apart within EXTREMITY_SPAN of both, on
    the same side: within `centre_band` of the plane x = 0, left or right of it): the leaf
    farthest from the tree's centre (the node nearest to every leaf). A head is not one
    extremity with the shoulder pads beside it; below `foot_level` the plane itself parts
    the sides: a short-legged body's two feet are two extremities, however close."""
    degree = np.bincount(edges.ravel(), minlength=len(points))
    leaves = np.flatnonzero(degree == 1)
    finite = np.where(np.isfinite(dist), dist, np.inf)
    centre = int(np.argmin(finite[:, leaves].max(axis=1)))
    span = EXTREMITY_SPAN * height
    band = np.where(points[:, 0] > centre_band, 1, np.where(points[:, 0] < -centre_band, -1, 0))
    low = points[:, 2] < foot_level
    band[low] = np.sign(points[low, 0])
    groups = []
    for leaf in sorted(leaves, key=lambda t: -finite[centre, t]):
        for g in groups:
            if band[leaf] != band[g[0]]:
                continue
            fork = _median(leaf, g[0], centre, finite)
            if finite[fork, leaf] < span and finite[fork, g[0]] < span:
                g.append(leaf)
                break
        else:
            groups.append([leaf])
    return [g[0] for g in groups]


def _feet(candidates, points, dist):
    """The two feet among the extremities at floor level: the pair, one each side,
    farthest apart along the tree (a trouser or tunic hem hangs from the pelvis, nearer
    than the foot). None without one on each side."""
    left = [t for t in candidates if points[t, 0] > 0]
    right = [t for t in candidates if points[t, 0] < 0]
    if not left or not right:
        return None
    pairs = [(dist[a, b], a, b) for a in left for b in right]
    _, a, b = max(pairs)
    return [a, b]


def _hands(candidates, points, dist, head):
    """The two extremities, one each side, farthest (along the tree) from the head."""
    left = [t for t in candidates if points[t, 0] > 0]
    right = [t for t in candidates if points[t, 0] < 0]
    if not left or not right:
        return None
    return (max(left, key=lambda t: dist[head, t]), max(right, key=lambda t: dist[head, t]))


def _median(a, b, c, dist) -> int:
    """The tree node on the paths between each pair of a, b, c."""
    total = dist[a] + dist[b] + dist[c]
    return int(np.argmin(np.where(np.isfinite(total), total, np.inf)))


def _path(pred, a, b) -> list:
    """Nodes on the tree path a -> b."""
    out = [b]
    while out[-1] != a:
        nxt = pred[a, out[-1]]
        if nxt < 0:
            return []
        out.append(int(nxt))
    return out[::-1]


def _polyline(pred, points, a, b) -> np.ndarray:
    """The polyline of the tree path a -> b."""
    return points[_path(pred, a, b)]
