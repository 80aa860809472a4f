# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoids: recognise two legs, two arms and a head on a generic rig, and lay a standard
humanoid skeleton along them (docs/auto_skeleton.md#humanoids).

Works in the upright frame of core/skeleton.py (up +Z, facing -Y, the character's left at
+X) on the generic rig's bones. The generic tree is read as an undirected graph of joints;
its leaves are grouped into extremities (a hand's fingers are one), and a humanoid has
two feet on the floor (the pair farthest apart along the tree: a hem hanging from the
pelvis is none), a head on top and two hands, with nothing else longer than a short
appendage. Its pelvis is where the paths between the feet and the head meet (the
tree median of the three), its chest where the paths between the hands and the head meet.
The standard joints are placed along the paths pelvis -> foot, chest -> hand, pelvis ->
chest and chest -> head tip at fractions of their length (LANDMARKS; the proportions of
the CC0 human rigs of the benchmark data, bench/humanoid.py), so the arm hangs from the
shoulder in A-pose as in T-pose whatever the hands touch; the pelvis, spine, neck and head
lie in the middle of the body's depth (SPINE_DEPTH). Hands whose fingers are modelled
apart get a thumb and fingers, three joints each (fingers.py).

With generic names the humanoid keeps its generic rig, bent at the limb landmarks
(snap_limbs), with the standard digits on hands with separable fingers, and its side
chains are named by limb (limb_bones) and its digits by finger (finger_names).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.csgraph import shortest_path

from . import fingers, landmark_cues, markers
from ..mesh import vertex_components
from .bones import END_REACH
from .graph import compact_parents, descendants, length_graph
from .polyline import length as path_length
from .polyline import point_at
from .symmetry import MIRROR

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
# The pelvis, spine, neck and head lie this share of the body's depth behind its front:
# its middle (the contraction's centre line wanders front and back). Artists differ:
# MPFB 0.66-0.74, Quaternius 0.5-0.6, 0 A.D. about 0.4 (measured in
# docs/auto_skeleton.md#spine-depth).
SPINE_DEPTH = 0.5
# The knees lie this share of the leg's depth behind its front: artists put them forward
# (their shares: MPFB 0.44, Quaternius' newer packs 0.27-0.4, its classics 0.14-0.2), so
# the kneecap leads the bend (docs/auto_skeleton.md#spine-depth).
KNEE_DEPTH = 0.4
# ... the depth measured on the vertices within these shares of the height (up and down,
# doubled up to three times until DEPTH_VERTICES are found: low-poly torsos) and of the
# width (sideways) of the point.
DEPTH_SLAB = (0.02, 0.05)
DEPTH_VERTICES = 4
# The skull base (the head joint) lies this share of the height above the narrowest
# cross-section of the neck with a head at least HEAD_WIDER as wide above it, searched
# within NECK_SEARCH of the chest -> head path (the crown narrows to nothing: no neck
# there; sections NECK_SLAB of the height thick, within NECK_REACH of the path sideways).
# The neck keeps its LANDMARKS proportion to the head (docs/auto_skeleton.md#humanoids).
SKULL_ABOVE_NECK = 0.02
NECK_SEARCH = (0.05, 0.85)
NECK_SLAB, NECK_REACH = 0.01, 0.2
HEAD_WIDER = 1.2
ROBE_PELVIS = 0.2          # a pelvis this low (share of the height) is a robe's hem: the legs are hidden
HIDDEN_HIP = 0.47          # ... and the hips go up to this share of the height (the CC0 artists' median)

# Standard joints: (role, path, fraction of the path's length). Paths: "spine" pelvis ->
# chest, "head" chest -> head tip, "arm" chest -> hand tip, "leg" hip socket -> foot tip.
# Limbs, neck and head: the median over the CC0 human rigs of ../shared/data
# (bench/humanoid.py --calibrate: 64 limbs, 32 heads, 24 toes; interquartile ranges
# 0.02-0.19 wide); the spine is spread evenly and the clavicle starts near the middle.
LANDMARKS = (
    ("spine", "spine", 0.30), ("spine1", "spine", 0.60), ("spine2", "spine", 0.85),
    ("neck", "head", 0.34), ("head", "head", 0.56),
    ("shoulder", "arm", 0.05), ("upper_arm", "arm", 0.21), ("forearm", "arm", 0.48),
    ("hand", "arm", 0.78),
    ("thigh", "leg", 0.02), ("shin", "leg", 0.37), ("foot", "leg", 0.80), ("toe", "leg", 0.93),
)
# The standard hierarchy: role -> parent role ("hips" is the root). Sides: ".L", ".R".
PARENTS = {
    "spine": "hips", "spine1": "spine", "spine2": "spine1", "neck": "spine2", "head": "neck",
    "shoulder": "spine2", "upper_arm": "shoulder", "forearm": "upper_arm", "hand": "forearm",
    "thigh": "hips", "shin": "thigh", "foot": "shin", "toe": "foot",
}
# Fingers (fingers.find_fingers, when the hands have separable fingers): three bones a
# digit from the hand ("index1.L" ...); a Rigify metarig adds palm bones between.
DIGIT_ROLES = tuple(f"{digit}{k}" for digit in fingers.NAMES for k in (1, 2, 3))
PARENTS.update({f"{digit}{k}": (f"{digit}{k - 1}" if k > 1 else "hand") for digit in fingers.NAMES for k in (1, 2, 3)})
PALMS = {"index": "palm1", "thumb": "palm1", "middle": "palm2", "ring": "palm3", "pinky": "palm4"}
SIDED = {"shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe", *DIGIT_ROLES}
# The generic rig of a humanoid gets a joint at these landmarks (snap_limbs): shoulder and
# hip sockets, elbows, wrists, knees, ankles; a joint farther than SNAP_REACH x the diagonal
# from one is left where it is.
SNAP_ROLES = ("upper_arm", "forearm", "hand", "thigh", "shin", "foot")
SNAP_REACH = 0.08
THIGH_AXIS = 0.2          # the hip socket lies on the line knee -> this share of the leg path (sideways)
TOE_REACH = 0.02           # a generic joint this close (share of the diagonal) to the ball of the foot: a toe bone
SIDE_SHARE = 0.5           # a joint moved to a landmark lies at least this share of its distance from x = 0
SPINE_MERGE = 0.005        # spine joints this close (share of the diagonal) to their parent are one
CENTRE_SHARE = 0.02        # a joint this close (share of the diagonal) to x = 0 is on the spine's plane
PATHS = {role: path for role, path, _ in LANDMARKS}


@dataclass
class Humanoid:
    """The paths of a recognised humanoid, (k, 3) polylines in the upright frame."""
    paths: dict          # "spine", "head", "arm.L", "arm.R", "leg.L", "leg.R"
    hidden_legs: bool = False   # under a robe: the hips were placed by proportion (_lift_hidden_hips)
    symmetric: bool = False     # the mesh is its own mirror image in x = 0
    vertices: np.ndarray | None = None   # the mesh, upright frame (for the spine's depth)
    faces: np.ndarray | None = None      # its welded faces (for the fingers)
    inside: object = None    # callable(points (n, 3)) -> (n,) bool: inside the mesh (upright frame)
    joints: dict | None = field(default=None, repr=False)   # standard_joints, once computed
    markers: dict | None = None   # marker name -> point placed by the user (markers.py; upright frame)
    cues: dict = field(default_factory=dict)   # role -> the cue that placed its joint (landmark_cues.py)


def recognise(heads, tails, parents, vertices, symmetric: bool = False, inside=None,
              faces=None) -> Humanoid | None:
    """The humanoid paths of a generic rig (upright frame), or None if it is not one.
    symmetric: the mesh is its own mirror image in x = 0 (rig.is_mirror_symmetric); its
    paths are then made symmetric (_symmetric). inside: optional callable(points) ->
    bool array; a spine joint moved to SPINE_DEPTH must stay inside (a dress's slab
    is not the body's). faces: the mesh's welded faces; the hands then get fingers
    where they have separable ones (standard_joints)."""
    points, edges = _joint_graph(heads, tails, parents)
    if len(points) < 6:
        return None
    V = np.asarray(vertices, dtype=np.float64)
    height, width = np.ptp(V[:, 2]), max(np.ptp(V[:, 0]), 1e-12)
    floor = V[:, 2].min()
    dist, pred = _tree_distances(points, edges)
    tips = _extremities(points, edges, dist, height, HEAD_CENTRE * width)
    feet = _feet([t for t in tips if points[t, 2] < floor + FOOT_LEVEL * height], points, dist)
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
             "leg.L": _from_hip(_polyline(pred, points, pelvis, foot_l)),
             "leg.R": _from_hip(_polyline(pred, points, pelvis, foot_r))}
    lifted = _lift_hidden_hips(paths, floor, height)
    return Humanoid(_symmetric(lifted) if symmetric else lifted, hidden_legs=lifted is not paths,
                    symmetric=symmetric, vertices=V, inside=inside,
                    faces=None if faces is None else np.asarray(faces))


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
    """A tip above the chest within HEADGEAR x height of the head's tip: a crown's points,
    a helmet's parts, animal ears, not a limb (arms end farther, wings and tails lower)."""
    return bool(points[tip, 2] > points[chest, 2]
                and np.linalg.norm(points[tip] - points[head]) < HEADGEAR * height)


def _on_torso(tip, torso, points, height) -> bool:
    """An extremity whose tip lies within ON_BODY x height of the spine and head paths'
    joints (`torso`), however long its way along the tree: a tunic's flap, a strap, a
    backpack, not a tail or a wing, which stand off the body, nor a part hanging by an
    arm (a mech's shoulder plates)."""
    return bool(np.linalg.norm(points[torso] - points[tip], axis=1).min() < ON_BODY * height)


def _at_spine_depth(points, V, inside=None, share=None) -> np.ndarray:
    """Points moved front-to-back (y; the front is -y) to `share` (default SPINE_DEPTH; one
    for all or one per point) of the body's depth there (the vertices in a DEPTH_SLAB
    around each point); points with too few vertices around them, or that `inside` says
    would leave the mesh, stay."""
    P = np.array(points, dtype=np.float64)
    start = P.copy()
    share = np.broadcast_to(SPINE_DEPTH if share is None else share, len(P))
    width, height = DEPTH_SLAB[1] * np.ptp(V[:, 0]), DEPTH_SLAB[0] * np.ptp(V[:, 2])
    for p, depth in zip(P, share):
        beside = np.abs(V[:, 0] - p[0]) < width
        for k in range(4):
            near = V[beside & (np.abs(V[:, 2] - p[2]) < height * 2 ** k), 1]
            if len(near) >= DEPTH_VERTICES:
                p[1] = near.min() + depth * np.ptp(near)
                break
    if inside is not None and len(P):
        out = ~np.asarray(inside(P), bool) & np.asarray(inside(start), bool)
        P[out] = start[out]
    return P


def _lift_hidden_hips(paths: dict, floor: float, height: float) -> dict:
    """A robe or a long dress hides the legs: the generic tree's legs branch at its hem,
    and the pelvis found there lies near the floor (below ROBE_PELVIS of the height).
    The pelvis then goes up the spine path to HIDDEN_HIP of the height, and each leg path
    starts at that height above where the leg leaves the hem."""
    spine = paths["spine"]
    hip_z = floor + HIDDEN_HIP * height
    if spine[0, 2] >= floor + ROBE_PELVIS * height or spine[-1, 2] <= hip_z:
        return paths
    k = int(np.argmax(spine[:, 2] >= hip_z))            # the first spine point at or above it
    a, b = spine[k - 1], spine[k]
    pelvis = a + (hip_z - a[2]) / max(b[2] - a[2], 1e-12) * (b - a)
    out = dict(paths, spine=np.vstack([pelvis, spine[k:]]))
    for side in (".L", ".R"):
        leg = paths["leg" + side]
        out["leg" + side] = np.vstack([[leg[0, 0], pelvis[1], hip_z], leg])
    return out


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


def _from_hip(path) -> np.ndarray:
    """The part of a pelvis -> foot path below the hip socket: where the path, after
    leaving the pelvis sideways, turns down (within the first HIP_SEARCH of its length);
    else at HIP_FRACTION of it."""
    seg = np.diff(path, axis=0)
    length = np.linalg.norm(seg, axis=1)
    arc = np.concatenate([[0.0], np.cumsum(length)])
    for k in range(1, len(path) - 1):
        if arc[k] > HIP_SEARCH * arc[-1]:
            break
        if seg[k, 2] < -DOWN * length[k]:
            return path[k:]
    start = point_at(path, HIP_FRACTION)
    return np.vstack([start, path[arc > HIP_FRACTION * arc[-1]]])


def standard_joints(humanoid: Humanoid) -> dict:
    """role (e.g. "forearm.L") -> joint position, and "hips", plus "head_top", "hand_tip.L",
    "toe_tip.L" ... for the end bones' tails. The hip sockets lie on the thighs' axes
    (_on_thigh_axis). The pelvis, spine, neck and head lie at SPINE_DEPTH of the body's
    depth, the knees at KNEE_DEPTH of the leg's (when the humanoid has its mesh). A hand with
    separable fingers (with the mesh's faces) adds its digits' joints, "index1.L" ...
    "index3.L" and "index_tip.L"."""
    if humanoid.joints is not None:
        return dict(humanoid.joints)
    out = {"hips": humanoid.paths["spine"][0], "head_top": humanoid.paths["head"][-1]}
    for role, path, fraction in LANDMARKS:
        for side in ((".L", ".R") if path in ("arm", "leg") else ("",)):
            out[role + side] = point_at(humanoid.paths[path + side], fraction)
    if humanoid.vertices is not None:
        out["neck"], out["head"], humanoid.cues["head"] = _neck_and_skull_base(humanoid.paths["head"], humanoid.vertices)
    if humanoid.vertices is not None and humanoid.faces is not None:
        _middle_joints(out, humanoid)
    for side in (".L", ".R"):
        humanoid.cues["thigh" + side] = "proportion" if humanoid.hidden_legs else "leg axis"
        out["hand_tip" + side] = humanoid.paths["arm" + side][-1]
        out["toe_tip" + side] = humanoid.paths["leg" + side][-1]
        if not humanoid.hidden_legs:
            out["thigh" + side] = _on_thigh_axis(out["thigh" + side], out["shin" + side],
                                                 point_at(humanoid.paths["leg" + side], THIGH_AXIS))
    if humanoid.vertices is not None:
        spine = ("hips", "spine", "spine1", "spine2", "neck", "head")
        for role, p in zip(spine, _at_spine_depth([out[r] for r in spine], humanoid.vertices, humanoid.inside)):
            out[role] = p
        if not humanoid.hidden_legs:
            knees = ["shin.L", "shin.R"]
            out.update({"knee_centre" + role[-2:]: out[role] for role in knees})   # for snap_limbs
            for role, p in zip(knees, _at_spine_depth([out[r] for r in knees], humanoid.vertices, humanoid.inside,
                                                      KNEE_DEPTH)):
                out[role] = p
    if humanoid.markers:
        out = markers.apply(out, markers.with_mirrors(humanoid.markers, humanoid.symmetric))
    if humanoid.vertices is not None and humanoid.faces is not None:
        for side in (".L", ".R"):
            digits = fingers.find_fingers(humanoid.vertices, humanoid.faces, out["hand" + side],
                                          out["forearm" + side], out["hand_tip" + side])
            for digit, joints in (digits or {}).items():
                for k, p in enumerate(joints):
                    out[f"{digit}{k + 1 if k < 3 else '_tip'}{side}"] = p
    humanoid.joints = out
    return dict(out)


def _middle_joints(out, humanoid):
    """Knees and elbows by the strongest cue the limb shows (landmark_cues.middle_joint);
    humanoid.cues records which one placed each."""
    fraction = {role: f for role, _, f in LANDMARKS}
    _, parts = vertex_components(len(humanoid.vertices), humanoid.faces)
    for role, limb in (("shin", "leg"), ("forearm", "arm")):
        if limb == "leg" and humanoid.hidden_legs:
            continue
        for side in (".L", ".R"):
            out[role + side], humanoid.cues[role + side] = landmark_cues.middle_joint(
                humanoid.vertices, humanoid.faces, parts, humanoid.paths[limb + side], limb, fraction[role])


def _neck_and_skull_base(path, V):
    """(neck, head, cue) joints on the chest -> head tip path: the head SKULL_ABOVE_NECK of the
    height above the neck's narrowest cross-section (the vertices' sideways extent in a
    thin horizontal slab around the path) below a wider head, the neck at the LANDMARKS
    ratio of the head's distance along the path; at the LANDMARKS fractions without one
    (cue "narrowing" or "proportion")."""
    fraction = dict((role, f) for role, _, f in LANDMARKS)
    height = float(np.ptp(V[:, 2]))
    length = path_length(path)
    fractions = np.arange(NECK_SEARCH[0], NECK_SEARCH[1] + 1e-9, 0.02)
    widths = np.full(len(fractions), np.inf)
    for k, f in enumerate(fractions):
        p = point_at(path, f)
        section = V[(np.abs(V[:, 2] - p[2]) < NECK_SLAB * height)
                    & (np.hypot(V[:, 0] - p[0], V[:, 1] - p[1]) < NECK_REACH * height)]
        if len(section) > 3:
            widths[k] = np.ptp(section[:, 0])
    # a neck has a wider head above it (the crown narrows to nothing: no neck there)
    above = np.array([np.max(np.where(np.isfinite(widths[k + 1:]), widths[k + 1:], 0), initial=0.0)
                      for k in range(len(widths))])
    neck = np.where(np.isfinite(widths) & (above >= HEAD_WIDER * widths), widths, np.inf)
    at = fractions[int(np.argmin(neck))] if np.isfinite(neck).any() else None
    if at is None or length <= 0:
        return point_at(path, fraction["neck"]), point_at(path, fraction["head"]), "proportion"
    head = min(at + SKULL_ABOVE_NECK * height / length, 0.95)
    return point_at(path, head * fraction["neck"] / fraction["head"]), point_at(path, head), "narrowing"


def _on_thigh_axis(hip, knee, thigh):
    """The hip socket moved sideways onto the thigh's axis (the line from the knee up
    through a point of the thigh), at its own height and depth: the leg path bends in
    from the socket to the pelvis, and its turn lies inside the socket. A thigh that is
    not steep (sitting), or an axis that would cross the plane of symmetry, leaves it."""
    d = knee - thigh
    if d[2] > -DOWN * np.linalg.norm(d):
        return hip
    x = knee[0] + d[0] * (hip[2] - knee[2]) / d[2]
    return np.array([x, hip[1], hip[2]]) if x * hip[0] > 0 else hip


def standard_bones(humanoid: Humanoid, metarig: bool = False):
    """(heads (K,3), tails (K,3), parents (K,), roles [K]) of the standard skeleton, with
    three bones a digit on hands with separable fingers (the hand bone then ends at the
    middle finger's knuckle). `metarig` adds what Rigify's human metarig has besides:
    heel bones (children of the feet, across the back of each foot on the floor: its leg
    rig pivots the foot roll there) and, on hands with fingers, palm bones from the wrist
    to the knuckles ("palm1.L" ... "palm4.L"; the thumb and index hang from the first)."""
    joints = standard_joints(humanoid)
    roles = ["hips"] + [r + s for r, path, _ in LANDMARKS
                        for s in ((".L", ".R") if r in SIDED else ("",))]
    roles += [r + s for s in (".L", ".R") for r in DIGIT_ROLES if r + s in joints]
    index = {r: i for i, r in enumerate(roles)}
    parents = np.array([-1] + [index[_parent_role(r)] for r in roles[1:]])
    heads = np.array([joints[r] for r in roles])
    tails = np.array([joints[_end(r, joints)] for r in roles])
    if metarig:
        heads, tails, parents, roles = _with_heels(heads, tails, parents, roles)
        heads, tails, parents, roles = _with_palms(heads, tails, parents, roles)
    return heads, tails, parents, roles


_ENDS = {"hips": "spine", "spine": "spine1", "spine1": "spine2", "spine2": "neck", "neck": "head",
         "head": "head_top", "shoulder": "upper_arm", "upper_arm": "forearm", "forearm": "hand",
         "hand": "hand_tip", "thigh": "shin", "shin": "foot", "foot": "toe", "toe": "toe_tip",
         **{f"{digit}{k}": f"{digit}{k + 1}" if k < 3 else f"{digit}_tip" for digit in fingers.NAMES for k in (1, 2, 3)}}


def _end(role: str, joints: dict) -> str:
    """The joint a role's bone ends at: the next joint down the chain; a hand with fingers
    ends at the middle finger's knuckle."""
    base, side = split_role(role)
    if base == "hand" and "middle1" + side in joints:
        return "middle1" + side
    return _ENDS[base] + side


def snap_limbs(heads, tails, parents, humanoid: Humanoid, diagonal: float):
    """The generic rig of a recognised humanoid bent where a human bends
    (docs/auto_skeleton.md#limb-landmarks): for each limb landmark of SNAP_ROLES, the
    nearest joint on the limb's chain (the tree path from the root to the joint nearest
    the limb's tip), on the landmark's side at least SIDE_SHARE of its distance from the
    plane x = 0, not the root and not moved already, moves onto it if it is within
    SNAP_REACH x `diagonal`; then a chain's single-child joints between two moved joints
    are dropped (_drop_between), and each leg below its moved hip socket becomes knee,
    ankle and foot (_standard_legs), and each hand with separable fingers gets the
    standard digits (_standard_hands). Legs hidden under a robe keep their joints. The root
    and the joints of the spine, neck and head move onto the plane of symmetry (a
    symmetric mesh: _spine_on_plane) and to the middle of the body's depth
    (_spine_to_depth); a spine joint that lands next to its parent merges into it.
    Returns (heads, tails, parents)."""
    H, T, P = (np.array(heads, dtype=np.float64), np.array(tails, dtype=np.float64),
               np.asarray(parents, dtype=np.int64))
    landmarks = standard_joints(humanoid)
    # the generic rig bends at the leg's centre line: a knee moved forward there bent its
    # bones away from the artists' (MPFB CD-B2B 0.894 -> 0.955, docs/auto_skeleton.md#spine-depth)
    landmarks.update({"shin" + side: landmarks["knee_centre" + side] for side in (".L", ".R")
                      if "knee_centre" + side in landmarks})
    moved = []
    placed = markers.roles(markers.with_mirrors(humanoid.markers or {}, humanoid.symmetric))
    for role in SNAP_ROLES:
        if humanoid.hidden_legs and PATHS[role] == "leg":
            continue                     # a robe's legs: the hips and knees are guesses
        for side in (".L", ".R"):
            target = landmarks[role + side]
            tip = landmarks[("hand_tip" if PATHS[role] == "arm" else "toe_tip") + side]
            d = np.full(len(P), np.inf)
            chain = _limb_chain(H, P, tip)
            d[chain] = np.linalg.norm(H[chain] - target, axis=1)
            # not the root, not the spine or a neck the limb hangs from, not the other side
            d[(P < 0) | (H[:, 0] * np.sign(target[0]) < SIDE_SHARE * abs(target[0]))] = np.inf
            d[moved] = np.inf
            j = int(np.argmin(d))
            if d[j] > SNAP_REACH * diagonal and role + side not in placed:    # a marker is obeyed however far
                continue
            T[np.linalg.norm(T - H[j], axis=1) < 1e-9 * diagonal] = target    # bones ending at it follow
            H[j] = target
            moved.append(j)
    if humanoid.symmetric:
        _spine_on_plane(H, T, P, landmarks["head"], diagonal)
    _spine_to_depth(H, T, humanoid, diagonal)
    H, T, P = _drop_between(H, T, P, set(moved))
    if not humanoid.hidden_legs:
        H, T, P = _standard_legs(H, T, P, landmarks, diagonal)
    H, T, P = _standard_hands(H, T, P, landmarks, diagonal)
    return _merge_coincident(H, T, P, _limb_chain(H, P, landmarks["head"]), SPINE_MERGE * diagonal)


def _standard_legs(H, T, P, landmarks, diagonal):
    """Each leg below its hip socket (a joint moved onto the thigh landmark) as artists rig
    it: knee, ankle, a foot bone to the toe tip, and a toe joint at the ball of the foot
    where the generic rig had a joint within TOE_REACH of it on either side (toes
    modelled; both sides alike). A boxy low-poly foot gave the generic leg toe chains and
    heel spurs. Legs with fewer joints than that below the hip keep them (never a joint
    the generic rig, with its bone support, did not give)."""
    hips = {side: _joints_at(H, landmarks["thigh" + side], diagonal) for side in (".L", ".R")}
    hips = {side: int(j[0]) for side, j in hips.items() if len(j) == 1}
    below = {side: descendants(P, j) for side, j in hips.items()}
    toe = any(len(b) and np.linalg.norm(H[b] - landmarks["toe" + side], axis=1).min() < TOE_REACH * diagonal
              for side, b in below.items())
    chain = (("shin", "foot"), ("foot", "toe"), ("toe", "toe_tip")) if toe else (("shin", "foot"), ("foot", "toe_tip"))
    if any(len(b) < len(chain) for b in below.values()):
        return H, T, P               # fewer joints already (a box for a leg): nothing to add without vertices
    keep = np.ones(len(P), dtype=bool)
    for b in below.values():
        keep[b] = False
    index = np.cumsum(keep) - 1
    H, T, P = list(H[keep]), list(T[keep]), list(compact_parents(P, keep))
    for side, hip in hips.items():
        parent = int(index[hip])
        T[parent] = landmarks["shin" + side]
        for role, end in chain:
            H.append(landmarks[role + side])
            T.append(landmarks[end + side])
            P.append(parent)
            parent = len(P) - 1
    return np.array(H), np.array(T), np.array(P, dtype=np.int64)


def _standard_hands(H, T, P, landmarks, diagonal):
    """Each hand with separable fingers (landmarks "index1.L" ...: fingers.find_fingers)
    as the standard skeleton has it: below the wrist (the joint moved onto the hand
    landmark) three bones a digit instead of the generic rig's hand chains (the joints
    below the elbow beyond the wrist, and what hangs from them), which the contraction
    runs through the palm and merges with each other; they may branch off above the
    wrist. A mitten keeps its generic hand chain."""
    keep = np.ones(len(P), dtype=bool)
    wrists = {}
    for side in (".L", ".R"):
        at = {role: _joints_at(H, landmarks[role + side], diagonal) for role in ("forearm", "hand")}
        if (any(len(j) != 1 for j in at.values())
                or not any(f"{digit}1{side}" in landmarks for digit in fingers.NAMES)):
            continue
        elbow, wrists[side] = int(at["forearm"][0]), int(at["hand"][0])
        forearm = H[wrists[side]] - H[elbow]
        hand = [j for j in descendants(P, elbow) if (H[j] - H[wrists[side]]) @ forearm > 0]
        keep[descendants(P, wrists[side])] = False
        for j in hand:
            keep[[j, *descendants(P, j)]] = False
    if not wrists:
        return H, T, P
    for j in np.flatnonzero(keep):       # a junction that lost its hand branch: a chain joint again
        kids = np.flatnonzero(P == j)
        if len(kids) > 1 and keep[kids].sum() == 1:
            T[j] = H[kids[keep[kids]][0]]
    index = np.cumsum(keep) - 1
    H, T, P = list(H[keep]), list(T[keep]), list(compact_parents(P, keep))
    for side, wrist in wrists.items():
        wrist = int(index[wrist])
        knuckle = next(f"{d}1{side}" for d in ("middle", "index", "ring", "pinky", "thumb")
                       if f"{d}1{side}" in landmarks)
        T[wrist] = landmarks[knuckle]
        for digit in fingers.NAMES:
            parent = wrist
            for k in (1, 2, 3):
                if f"{digit}{k}{side}" not in landmarks:
                    break
                H.append(landmarks[f"{digit}{k}{side}"])
                T.append(landmarks[f"{digit}{k + 1 if k < 3 else '_tip'}{side}"])
                P.append(parent)
                parent = len(P) - 1
    return np.array(H), np.array(T), np.array(P, dtype=np.int64)


def finger_names(heads, parents, names, humanoid: Humanoid, diagonal: float):
    """(names, roles): generic names with a humanoid's digit bones (_standard_hands) named
    thumb_01.L ... pinky_03.R, and the standard roles of those bones and of the wrists they
    hang from ("index1.L", "hand.L"; "" for every other bone), for finger_ups."""
    landmarks = standard_joints(humanoid)
    names, roles = list(names), [""] * len(names)
    for role in DIGIT_ROLES:
        for side in (".L", ".R"):
            j = _joints_at(heads, landmarks[role + side], diagonal) if role + side in landmarks else []
            if len(j) == 1:
                names[j[0]] = f"{role[:-1]}_0{role[-1]}{side}"
                roles[j[0]] = role + side
                if role.endswith("1"):
                    roles[parents[j[0]]] = "hand" + side
    return names, roles


def _joints_at(H, point, diagonal) -> np.ndarray:
    """Indices of the joints H (n, 3) at `point` (within 1e-9 x `diagonal`): where a
    landmark put one."""
    return np.flatnonzero(np.linalg.norm(np.asarray(H) - point, axis=1) < 1e-9 * diagonal)


def _spine_on_plane(H, T, P, head, diagonal):
    """A symmetric humanoid's joints from the root up to the one nearest the head landmark
    put on the plane of symmetry (in place; bones ending at them follow): the generic
    tree can leave one off it where the legs branch (an MPFB body's spine_01 sat 3.7 %
    of the diagonal to the side, the root bone pointing sideways)."""
    chain = _limb_chain(H, P, head)
    for j in chain:
        if H[j, 0] != 0:
            T[np.linalg.norm(T - H[j], axis=1) < 1e-9 * diagonal, 0] = 0.0
            H[j, 0] = 0.0
    end = chain[0]
    while (P == end).sum() == 1:               # down to the head's end bone: it ends on the plane too
        end = int(np.flatnonzero(P == end)[0])
    if not (P == end).any():
        T[end, 0] = 0.0


def _merge_coincident(H, T, P, joints, tolerance):
    """(heads, tails, parents) without those of `joints` that lie within `tolerance` of
    their parent (a spine joint moved onto the plane and to depth next to the root):
    their children hang from the parent, and a parent bone that ended at them ends where
    they did."""
    up, keep = P.copy(), np.ones(len(P), dtype=bool)
    for j in sorted(joints):
        p = up[j]
        if p >= 0 and np.linalg.norm(H[j] - H[p]) < tolerance:
            keep[j] = False
            if np.allclose(T[p], H[j]):
                T[p] = T[j]
            up[up == j] = p
    return H[keep], T[keep], compact_parents(up, keep)


def _spine_to_depth(H, T, humanoid: Humanoid, diagonal: float):
    """The generic rig's root and its joints on the plane of symmetry (within CENTRE_SHARE
    of the diagonal) from the pelvis up to the head landmark, moved (in place) to
    SPINE_DEPTH of the body's depth; bones ending at them follow."""
    if humanoid.vertices is None:
        return
    landmarks = standard_joints(humanoid)
    low, high = landmarks["hips"][2], landmarks["head"][2]
    centre = np.flatnonzero((np.abs(H[:, 0]) < CENTRE_SHARE * diagonal) &
                            (H[:, 2] > low - CENTRE_SHARE * diagonal) & (H[:, 2] < high + CENTRE_SHARE * diagonal))
    if abs(H[0, 0]) < CENTRE_SHARE * diagonal:       # the root (pelvis), however low
        centre = np.union1d(centre, [0])
    moved = _at_spine_depth(H[centre], humanoid.vertices, humanoid.inside)
    for j, p in zip(centre, moved):
        T[np.linalg.norm(T - H[j], axis=1) < 1e-9 * diagonal] = p
        H[j] = p


def limb_bones(heads, parents, humanoid: Humanoid, side_tolerance: float) -> dict:
    """bone -> "arm" or "leg" for every bone of a humanoid's generic rig that belongs to a
    limb: going up from the joint nearest the hand (toe) tip towards the root, the joints
    off the plane x = 0 (beyond `side_tolerance`) until the first one on it, with
    everything hanging from them (fingers, toes). Naming uses it (naming.bone_names)."""
    H, P = np.asarray(heads, dtype=np.float64), np.asarray(parents, dtype=np.int64)
    landmarks = standard_joints(humanoid)
    out = {}
    for limb, tip in (("arm", "hand_tip"), ("leg", "toe_tip")):
        for side in (".L", ".R"):
            start = None                    # the limb's first joint: up from the tip while off the plane
            for j in _limb_chain(H, P, landmarks[tip + side]):
                if abs(H[j, 0]) <= side_tolerance or P[j] < 0:
                    break
                start = j
            if start is not None:
                for j in [start, *descendants(P, start).tolist()]:
                    out.setdefault(j, limb)
    return out


def _limb_chain(H, P, tip) -> list:
    """The joint nearest a limb's tip point and its ancestors up to the root, tip first."""
    out, j = [], int(np.argmin(np.linalg.norm(H - tip, axis=1)))
    while j >= 0:
        out.append(j)
        j = int(P[j])
    return out


def _drop_between(H, T, P, moved: set):
    """(heads, tails, parents) without the single-child joints that lie on a chain between
    two `moved` joints; the bone above such a run reaches to the joint below it."""
    children = np.bincount(P[P >= 0], minlength=len(P))
    up, keep = P.copy(), np.ones(len(P), dtype=bool)
    for j in moved:
        run, u = [], P[j]
        while u >= 0 and u not in moved and children[u] == 1 and P[u] >= 0:
            run.append(u)
            u = P[u]
        if u in moved and run:       # each dropped joint has one child, so runs never overlap
            keep[run] = False
            up[j] = u
            if children[u] == 1:
                T[u] = H[j]
    return H[keep], T[keep], compact_parents(up, keep)


def _with_heels(heads, tails, parents, roles):
    extra_h, extra_t, extra_p = [], [], []
    for side, sign in ((".L", 1.0), (".R", -1.0)):
        foot, toe = roles.index("foot" + side), roles.index("toe" + side)
        length = np.linalg.norm(tails[toe] - heads[foot])
        back = heads[foot] - 0.25 * (heads[toe] - heads[foot])
        back[2] = min(tails[toe][2], heads[toe][2])
        width = np.array([0.15 * length * sign, 0.0, 0.0])
        extra_h.append(back - width)
        extra_t.append(back + width)
        extra_p.append(foot)
    return (np.vstack([heads, extra_h]), np.vstack([tails, extra_t]),
            np.concatenate([parents, extra_p]), roles + ["heel.L", "heel.R"])


def finger_ups(heads, tails, roles, up) -> np.ndarray:
    """Roll references (K, 3) with the digits' and palms' bones facing the back of their
    hand (the normal of the plane of the knuckles and the fingers' direction, the same
    on both hands mirrored): fingers then curl about their bones' X axis, in T- or
    A-pose. Other bones keep `up`."""
    up = np.array(up, dtype=np.float64)
    for side, sign in ((".L", 1.0), (".R", -1.0)):
        if "index1" + side not in roles:
            continue
        at = {r: roles.index(r + side) for r in ("index1", "middle3", "hand")}
        outer = [roles.index(d + "1" + side) for d in ("pinky", "ring") if d + "1" + side in roles][0]
        across = heads[at["index1"]] - heads[outer]      # a four-digit hand has no pinky
        along = heads[at["middle3"]] - heads[at["hand"]]
        back = sign * np.cross(across, along)
        if not np.linalg.norm(back) > 0:
            continue
        for j, role in enumerate(roles):
            base, s = split_role(role)
            if s == side and (base in DIGIT_ROLES or base.startswith("palm")):
                d = tails[j] - heads[j]
                d = d / max(np.linalg.norm(d), 1e-12)
                u = back - (back @ d) * d
                if np.linalg.norm(u) > 1e-9:
                    up[j] = u / np.linalg.norm(u)
    return up


def _with_palms(heads, tails, parents, roles):
    """Rigify's palm bones: from a fifth of the way from the wrist to each finger's
    knuckle, to the knuckle; the fingers (and the thumb, from the first) hang from them."""
    heads, tails, parents, roles = list(heads), list(tails), list(parents), list(roles)
    for side in (".L", ".R"):
        if "index1" + side not in roles:
            continue
        hand = roles.index("hand" + side)
        present = [d for d in PALMS if d + "1" + side in roles]          # four digits: no pinky
        for digit in [d for d in ("index", "middle", "ring", "pinky") if d in present]:
            knuckle = heads[roles.index(digit + "1" + side)]
            heads.append(heads[hand] + 0.2 * (knuckle - heads[hand]))
            tails.append(knuckle)
            parents.append(hand)
            roles.append(PALMS[digit] + side)
        for digit, palm in ((d, PALMS[d]) for d in present):
            parents[roles.index(digit + "1" + side)] = roles.index(palm + side)
    return np.array(heads), np.array(tails), np.array(parents, dtype=np.int64), roles


# -- the joint graph --------------------------------------------------------------------------

def split_role(role: str) -> tuple:
    """"forearm.L" -> ("forearm", ".L"); "neck" -> ("neck", "")."""
    return (role[:-2], role[-2:]) if role[-2:] in (".L", ".R") else (role, "")


def _parent_role(role: str) -> str:
    base, side = split_role(role)
    parent = PARENTS[base]
    return parent + side if parent in SIDED else parent


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


def _extremities(points, edges, dist, height, centre_band) -> list:
    """One tip per extremity (leaves that branch apart within EXTREMITY_SPAN of both, on
    the same side: within `centre_band` of the plane x = 0, left or right of it): the leaf
    farthest from the tree's centre (the node nearest to every leaf). A head is not one
    extremity with the shoulder pads beside it."""
    degree = np.bincount(edges.ravel(), minlength=len(points))
    leaves = np.flatnonzero(degree == 1)
    finite = np.where(np.isfinite(dist), dist, np.inf)
    centre = int(np.argmin(finite[:, leaves].max(axis=1)))
    span = EXTREMITY_SPAN * height
    band = np.where(points[:, 0] > centre_band, 1, np.where(points[:, 0] < -centre_band, -1, 0))
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
