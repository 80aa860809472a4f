# SPDX-License-Identifier: GPL-3.0-or-later
"""The standard humanoid skeleton laid along a recognised humanoid's paths
(docs/auto_skeleton.md#humanoids): its joints (standard_joints), bones (standard_bones)
and the digits' roll references (finger_ups).

The standard joints are placed along the paths pelvis -> foot, chest -> hand, pelvis ->
chest and chest -> head tip at fractions of their length (LANDMARKS; the proportions of
the CC0 human rigs of the benchmark data, bench/humanoid.py), so the arm hangs from the
shoulder in A-pose as in T-pose whatever the hands touch; the pelvis, spine, neck and head
lie in the middle of the body's depth (SPINE_DEPTH, docs/auto_skeleton.md#spine-depth).
Knees, elbows and wrists follow the limb's shape (landmark_cues.py; a knee no cue places
lies KNEE_SHARE of the way from the hip socket to the ankle), the skull base the neck's
narrowing, and markers placed by the user win (markers.py). Hands whose fingers are
modelled apart get a thumb and fingers, three joints each (fingers.py).
"""
from __future__ import annotations

import numpy as np

from .. import fingers, landmark_cues, markers
from ...mesh import surface_points, vertex_components
from ...meshprep import compact
from ..polyline import fraction_of, point_at
from ..polyline import length as path_length
from .recognition import DOWN, NECK_REACH, Humanoid, spine_from

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
# within NECK_SEARCH of the chest -> head path, up to its highest point (the crown narrows
# to nothing: no neck there; sections NECK_SLAB of the height thick, within NECK_REACH of
# the path sideways).
# A narrowing counts only with at least HEAD_SHARE of the widest section above the lowest
# narrowing over the shoulders above it (a head, not an antenna's knob). The neck keeps
# its LANDMARKS proportion to the head (docs/auto_skeleton.md#humanoids).
SKULL_ABOVE_NECK = 0.02
NECK_SEARCH = (0.05, 0.85)
NECK_SLAB = 0.01
HEAD_WIDER = 1.2
HEAD_SHARE = 0.5
HEAD_FULL = 0.9
# Arms straight out (T-pose): the elbow -> hand tip line within this many degrees of
# horizontal. The tree can join such arms above their line, in a big head or hair; the
# neck is then looked for down to the arms' line too (_below_chest).
ARMS_LEVEL = 20.0

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
FRACTION = {role: f for role, _, f in LANDMARKS}
ANKLE_FRACTION = FRACTION["foot"]
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
# The knee's proportion: this share of the way from the hip socket to the ankle along the
# leg path (0.02 + 0.45 x 0.78 = the LANDMARKS 0.37 where the ankle is its proportion);
# chosen leave-one-studio-out, docs/auto_skeleton.md#knees-between-hip-and-ankle.
KNEE_SHARE = 0.45
THIGH_AXIS = 0.2          # the hip socket lies on the line knee -> this share of the leg path (sideways)


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
    meshed = humanoid.vertices is not None and humanoid.faces is not None
    parts = vertex_components(len(humanoid.vertices), humanoid.faces)[1] if meshed else None
    head = _head_on_torso(out, humanoid, parts) if meshed else None
    collar = None
    if humanoid.vertices is not None and head is None:
        faces, below = humanoid.faces if humanoid.outline else None, _below_chest(humanoid.paths)
        out["neck"], out["head"], humanoid.cues["head"], chest = _neck_and_skull_base(
            humanoid.paths["head"], humanoid.vertices, faces, below)
        if chest is not None:            # the head below the tree's chest: the spine ends at the arms
            spine = _cut_above(humanoid.paths["spine"], chest)
            out.update({role: point_at(spine, f) for role, path, f in LANDMARKS if path == "spine"})
        if below is not None:            # the generic rig keeps the tree's spine, up to the head its path shows
            own = _neck_and_skull_base(humanoid.paths["head"], humanoid.vertices, faces)[1]
            if not np.allclose(own, out["head"]):
                out["spine_top"] = own
        if meshed and chest is None:
            collar = _head_out_of_body(out, humanoid, parts)
    knees = {}
    for side in (".L", ".R"):
        out["foot" + side], humanoid.cues["foot" + side] = _ankle(humanoid, side, out["foot" + side], parts)
        knees[side] = _knee_fraction(humanoid, side, out["foot" + side])
        out["shin" + side] = point_at(humanoid.paths["leg" + side], knees[side])
    below = _limb_joints(out, humanoid, parts, knees) if meshed else {}
    for side in (".L", ".R"):
        humanoid.cues["thigh" + side] = ("proportion" if humanoid.hidden_legs else
                                         "crotch" if humanoid.hips_at_crotch else "leg axis")
        out["hand_tip" + side] = humanoid.paths["arm" + side][-1]
        out["toe_tip" + side] = humanoid.paths["leg" + side][-1]
        if not humanoid.hidden_legs:
            knee, cue = below.get(side, (out["shin" + side], humanoid.cues.get("shin" + side)))
            out["thigh" + side] = _on_thigh_axis(out["thigh" + side], knee,
                                                 _thigh_point(out, humanoid, parts, side, knee, cue))
            _segmented_hip(out, humanoid, parts, side, knee)
    if humanoid.symmetric:
        _mirror_pair(out, humanoid.cues, "foot")
    if humanoid.vertices is not None:
        body = _depth_points(humanoid)
        spine = ("hips", "spine", "spine1", "spine2", "neck", "head") + (("spine_top",) if "spine_top" in out else ())
        for role, p in zip(spine, at_spine_depth([out[r] for r in spine], body, humanoid.inside)):
            out[role] = p
        if head is not None:             # a head piece turns about its own middle, whatever hangs behind
            out["head"] = at_spine_depth([out["head"]], _depth_points(humanoid, parts == head),
                                         humanoid.inside)[0]
        if collar is not None:           # a head turns in its collar's opening, whatever hangs behind
            depth = humanoid.vertices[parts == collar, 1]
            out["head"] = out["head"] * [1, 0, 1] + [0, (depth.min() + depth.max()) / 2, 0]
        if not humanoid.hidden_legs:
            knees = ["shin.L", "shin.R"]
            out.update({"knee_centre" + role[-2:]: out[role] for role in knees})   # for snap_limbs
            for role, p in zip(knees, at_spine_depth([out[r] for r in knees], body, humanoid.inside, KNEE_DEPTH)):
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


def ankle_joints(humanoid: Humanoid) -> dict:
    """side (".L", ".R") -> the ankle as standard_joints places it (markers and mirroring
    aside), without the rest of the skeleton."""
    meshed = humanoid.vertices is not None and humanoid.faces is not None
    parts = vertex_components(len(humanoid.vertices), humanoid.faces)[1] if meshed else None
    return {side: _ankle(humanoid, side, point_at(humanoid.paths["leg" + side], FRACTION["foot"]), parts)[0]
            for side in (".L", ".R")}


def _ankle(humanoid: Humanoid, side: str, proportion, parts) -> tuple:
    """(the ankle joint, its cue): a segmented leg's gap between shin and foot ("gap"),
    else the leg path's turn to the toes where the proportion falls on the foot ("turn";
    feet show below a hem too), lowered to the foot's height ("sole"), then a little
    toward the heel (landmark_cues.segment_gap, ankle, ankle_over_sole, ankle_back; with
    the mesh: `parts`, each vertex's part, or None)."""
    path = humanoid.paths["leg" + side]
    if parts is not None and not humanoid.hidden_legs:
        gap = landmark_cues.segment_gap(humanoid.vertices, humanoid.faces, parts, path, landmark_cues.ANKLE_WINDOW)
        if gap is not None:
            return gap, "gap"
    corner = landmark_cues.ankle(path, ANKLE_FRACTION)
    point, cue = (proportion, "proportion") if corner is None else (corner, "turn")
    if parts is None:
        return point, cue
    foot = landmark_cues.foot(humanoid.vertices, path)
    low = landmark_cues.ankle_over_sole(path, point, foot, FRACTION["toe"])
    if low is not None:
        point, cue = low, "sole"
    back = landmark_cues.ankle_back(point, foot)
    return (point if back is None else back), cue


def _depth_points(humanoid: Humanoid, piece=None) -> np.ndarray:
    """The points whose depth places the spine and the knees: the vertices, or for a body
    read off its outline (a toy of low-poly boxes, with vertices at their corners only:
    a face's few vertices in front would pull the spine forward) points over its surface;
    `piece`: optional vertex mask of a mesh piece (a vertex component), its points only."""
    V, F = humanoid.vertices, humanoid.faces
    spacing = 0.5 * DEPTH_SLAB[0] * float(np.ptp(V[:, 2]))
    if piece is not None:
        V, F = compact(V, F[piece[F[:, 0]]])[:2]
    if not humanoid.outline or F is None:
        return V
    return surface_points(V, F, spacing)


def _head_on_torso(out, humanoid, parts):
    """The head's piece (a vertex component) where the head is modelled as its own piece on
    the torso's piece, else None; then the head's joint lies where the two meet
    (landmark_cues.head_piece, cue "gap"), the neck at its LANDMARKS ratio below."""
    path = humanoid.paths["head"]
    found = landmark_cues.head_piece(humanoid.vertices, humanoid.faces, parts, path)
    if found is None:
        return None
    at, head = found
    out["neck"], out["head"], humanoid.cues["head"] = _neck_below(path, at), point_at(path, at), "gap"
    return head


def _head_out_of_body(out, humanoid, parts):
    """The body's piece (a vertex component) that a head modelled as a piece sunk into the
    body's pieces leaves (a neck or a helmet rising out of a collar), else None; then the
    head's joint lies no higher than where it leaves it (landmark_cues.head_out_of_body, cue
    "collar"), the neck at its LANDMARKS ratio below."""
    path = humanoid.paths["head"]
    found = landmark_cues.head_out_of_body(humanoid.vertices, humanoid.faces, parts, path,
                                           fraction_of(path, out["head"]))
    if found is None:
        return None
    at, collar = found
    out["neck"], out["head"], humanoid.cues["head"] = _neck_below(path, at), point_at(path, at), "collar"
    return collar


def _neck_below(path, head: float):
    """The neck on the chest -> head path at its LANDMARKS ratio of the head's share."""
    return point_at(path, head * FRACTION["neck"] / FRACTION["head"])


def _limb_joints(out, humanoid, parts, knees):
    """Knees and elbows by the strongest cue the limb shows (landmark_cues.middle_joint;
    `knees`: side -> the knee's proportion of the leg path, _knee_fraction), wrists at
    the narrowing before the hand (landmark_cues.wrist) and beyond the elbow
    (_beyond_the_elbow), shoulder sockets at the torso's edge where their proportion lies
    deep inside it (landmark_cues.shoulder; the elbow's proportion is then halfway from
    the socket to the wrist); humanoid.cues records which cue placed each. Returns side
    -> (point, cue) of each knee placed at a hinge as the limb shows it without the
    hinge: the hip is looked for from there (_segmented_hip), since from inside the
    hinge its axle and disc are taken for the thigh's piece."""
    V, F = humanoid.vertices, humanoid.faces
    below = {}
    if not humanoid.hidden_legs:
        legs = {side: (V, F, parts, humanoid.paths["leg" + side], "leg", knees[side]) for side in (".L", ".R")}
        for side in (".L", ".R"):
            out["shin" + side], humanoid.cues["shin" + side] = landmark_cues.middle_joint(*legs[side])
        if "hinge" in (humanoid.cues["shin.L"], humanoid.cues["shin.R"]):
            below = {side: landmark_cues.middle_joint(*legs[side], hinge=False) for side in (".L", ".R")}
    for side in (".L", ".R"):
        path = humanoid.paths["arm" + side]
        out["hand" + side], humanoid.cues["hand" + side] = landmark_cues.wrist(V, F, parts, path, FRACTION["hand"])
        out["upper_arm" + side], humanoid.cues["upper_arm" + side], socket = landmark_cues.shoulder(
            V, F, parts, path, FRACTION["upper_arm"])
        elbow = FRACTION["forearm"]
        if humanoid.cues["upper_arm" + side] == "torso edge":
            elbow = (socket + fraction_of(path, out["hand" + side])) / 2
        out["forearm" + side], humanoid.cues["forearm" + side] = landmark_cues.middle_joint(
            V, F, parts, path, "arm", elbow)
        wrist = _beyond_the_elbow(path, out["forearm" + side], out["hand" + side])
        if wrist is not None:
            out["hand" + side], humanoid.cues["hand" + side] = wrist, "proportion"
        ball = landmark_cues.socket_ball(V, F, parts, out["upper_arm" + side], out["forearm" + side])
        if ball is not None:
            out["upper_arm" + side], humanoid.cues["upper_arm" + side] = ball, "ball"
    if humanoid.symmetric:
        for role in ("shin", "upper_arm", "forearm", "hand"):
            _mirror_pair(out, humanoid.cues, role)
        if below:
            points, cues = ({"shin" + s: below[s][k] for s in below} for k in (0, 1))
            _mirror_pair(points, cues, "shin")
            below = {s: (points["shin" + s], cues["shin" + s]) for s in below}
    return below


def _segmented_hip(out, humanoid, parts, side, knee):
    """A segmented thigh's hip socket above the `knee`: its ball's centre ("ball"), else
    no lower than the top of its piece ("thigh top"; landmark_cues.socket_ball,
    limb_top); `parts`: each vertex's part, or None without the mesh."""
    if parts is None:
        return
    args = (humanoid.vertices, humanoid.faces, parts, out["thigh" + side], knee)
    for cue, find in (("ball", landmark_cues.socket_ball), ("thigh top", landmark_cues.limb_top)):
        point = find(*args)
        if point is not None:
            out["thigh" + side], humanoid.cues["thigh" + side] = point, cue
            return


def _beyond_the_elbow(path, elbow, wrist):
    """None for a wrist beyond the elbow on the arm path; else a wrist as far from the
    elbow, in the share of the rest of the path, as the LANDMARKS proportions put it. A
    cue can take the elbow's gap for the wrist where no hand ends the path (a skeleton
    modelled without hands: its arm ends at the forearm)."""
    at = fraction_of(path, elbow)
    if fraction_of(path, wrist) > at + landmark_cues.STEP:
        return None
    rest = (FRACTION["hand"] - FRACTION["forearm"]) / (1.0 - FRACTION["forearm"])
    return point_at(path, at + rest * (1.0 - at))


def _knee_fraction(humanoid: Humanoid, side: str, ankle) -> float:
    """The knee's proportion of the leg path: KNEE_SHARE of the way from the hip socket to
    the ankle the leg shows, so the foot's length does not move it (a chibi's big feet, a
    toon's boots); legs hidden under a robe keep the LANDMARKS fraction."""
    if humanoid.hidden_legs:
        return FRACTION["shin"]
    hip = FRACTION["thigh"]
    return hip + KNEE_SHARE * (fraction_of(humanoid.paths["leg" + side], ankle) - hip)


def _mirror_pair(out, cues, role):
    """A symmetric humanoid's left and right joint of `role`, placed by the same cue, made
    each other's mirror image in x = 0 (their mean): the mesh is symmetric only to a
    tolerance, and sections of it differ a little between the sides. Where one side's
    joint lies at a hinge or a gap between separate parts and the other's does not (one
    hand modelled apart), both take that one's, mirrored (a hinge's first); where one
    side's is placed by a cue and the other's by the proportion (a kneecap a hair too
    faint on one side), both take the cue's."""
    left, right = role + ".L", role + ".R"
    if left not in out or right not in out:
        return
    flip = np.array([-1.0, 1.0, 1.0])
    if cues.get(left) == cues.get(right):
        out[left] = (np.asarray(out[left]) + np.asarray(out[right]) * flip) / 2
        out[right] = out[left] * flip
    elif {"hinge", "gap"} & {cues.get(left), cues.get(right)}:
        strong = "hinge" if "hinge" in (cues.get(left), cues.get(right)) else "gap"
        found, other = (left, right) if cues.get(left) == strong else (right, left)
        out[other], cues[other] = np.asarray(out[found]) * flip, strong
    elif "proportion" in (cues.get(left), cues.get(right)):
        found, other = (right, left) if cues.get(left) == "proportion" else (left, right)
        out[other], cues[other] = np.asarray(out[found]) * flip, cues[found]


def _neck_and_skull_base(path, V, faces=None, below=None):
    """(neck, head, cue, chest) joints on the chest -> head tip path: the head
    SKULL_ABOVE_NECK of the height above the neck's narrowest cross-section (the vertices'
    sideways extent in a thin horizontal slab around the path) below a wider head, the
    neck at the LANDMARKS ratio of the head's distance along the path (cue "narrowing").
    Without a neck, with the faces of a body read off its outline (a chibi's or a toy's
    head sits on its shoulders; outline.py): the head joint at the head's base
    (_head_base, cue "head base"); else at the LANDMARKS fractions (cue "proportion").
    `below` (_below_chest): the spine's path from straight-out arms up to the chest, where
    the neck is looked for too; a head found on it lies below the chest, and `chest` is
    then the spine's new top (the arms' line), the neck at the LANDMARKS ratio from there;
    else `chest` is None."""
    height = float(np.ptp(V[:, 2]))
    length = path_length(path)
    fractions = np.arange(NECK_SEARCH[0], NECK_SEARCH[1] + 1e-9, 0.02)
    # the neck lies below the crown: a path that runs over the head and down its back
    # (long hair) has only head above its highest point
    fractions = fractions[fractions <= max(_highest(path), fractions[0])]
    drop = 0.0 if below is None else path_length(below)
    if drop > 0 and length > 0:        # the same steps on down the spine to the arms (negative fractions)
        fractions = np.concatenate([np.arange(NECK_SEARCH[0] - 0.02, -drop / length, -0.02)[::-1], fractions])
    points = [_on_path(path, below, f) for f in fractions]
    widths = _section_widths(points, V, height)
    # a neck has a wider head above it (the crown narrows to nothing: no neck there)
    found = np.where(np.isfinite(widths), widths, 0.0)
    above = np.append(np.maximum.accumulate(found[::-1])[::-1][1:], 0.0)     # the widest after each
    # ... and lies above the chest (a generic tree can run the path down the torso first);
    # on down the spine, below it (the spine can climb past the chest and come back)
    rising = (np.array([p[2] for p in points]) >= path[0, 2]) == (fractions >= 0)
    neck = np.where(np.isfinite(widths) & (above >= HEAD_WIDER * widths) & rising, widths, np.inf)
    # ... and, below the chest, has the shoulders below it too (not the torso under the arms)
    under = np.insert(np.maximum.accumulate(found)[:-1], 0, 0.0)              # the widest before each
    neck[(fractions < 0) & (under < HEAD_WIDER * widths)] = np.inf
    # ... under the head: an antenna's stalk or a hat's band has only its knob or crown
    # above, far less than the lowest narrowing over the shoulders (the widest section of
    # the path's own search: straight-out arms below the chest are wider than any head)
    own = fractions >= NECK_SEARCH[0] - 1e-9
    over = own & np.isfinite(neck) & (np.arange(len(widths)) > np.argmax(np.where(np.isfinite(widths) & own, widths, 0)))
    if over.any():
        neck[above < HEAD_SHARE * above[int(np.argmax(over))]] = np.inf
    if np.isfinite(neck).any() and length > 0:
        at, cue = fractions[int(np.argmin(neck))], "narrowing"
    elif faces is not None and length > 0:
        at, cue = _head_base(path, V, faces, height), "head base"
    else:
        return point_at(path, FRACTION["neck"]), point_at(path, FRACTION["head"]), "proportion", None
    head = min(at + SKULL_ABOVE_NECK * height / length, 0.95)
    if head >= 0:
        return _neck_below(path, head), point_at(path, head), cue, None
    # below the chest: the neck between the arms' line (the spine's new top) and the head
    head_at = 1 + head * length / drop            # fraction of `below`, from the arms up
    return (point_at(below, head_at * FRACTION["neck"] / FRACTION["head"]), point_at(below, head_at), cue,
            below[0].copy())


def _on_path(path, below, fraction):
    """The point at `fraction` of the path's length; a negative fraction: that share of
    its length below its start, on `below` (a path ending where `path` starts)."""
    if fraction >= 0 or below is None:
        return point_at(path, fraction)
    drop = path_length(below)
    return point_at(below, 1 + fraction * path_length(path) / drop)


def _below_chest(paths):
    """The spine's path from the line of straight-out arms up to the chest, where the
    generic tree joins such arms above their line (a big head or hair, which the
    contraction merges with the arms: Sophia's chest at 0.75 of her height, her arms at
    0.63); else None. Straight out: each arm's line from the elbow's proportion to the hand
    tip within ARMS_LEVEL degrees of horizontal; the arms' line: the mean height of those
    stretches."""
    stretches = [np.array([point_at(paths[side], f) for f in np.linspace(FRACTION["forearm"], 1.0, 6)])
                 for side in ("arm.L", "arm.R")]
    for s in stretches:
        run = s[-1] - s[0]
        if abs(run[2]) > np.tan(np.radians(ARMS_LEVEL)) * np.hypot(run[0], run[1]):
            return None
    level = float(np.mean([s[:, 2].mean() for s in stretches]))
    spine = np.asarray(paths["spine"], dtype=np.float64)
    if spine[-1, 2] <= level or spine[0, 2] >= level:
        return None
    return spine_from(spine, level)


def _cut_above(path, point):
    """The path up to `point` (a point on it)."""
    path = np.asarray(path, dtype=np.float64)
    at = fraction_of(path, point) * path_length(path)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    return np.vstack([path[arc < at], point])


def _highest(path) -> float:
    """The fraction of the path's length at its highest point."""
    path = np.asarray(path, dtype=np.float64)
    return fraction_of(path, path[int(np.argmax(path[:, 2]))])


def _section_widths(points, P, height, depth: bool = False):
    """Sideways extent of the points P in a slab NECK_SLAB of the height thick around each
    of `points`, within NECK_REACH of it sideways (with `depth`: times their extent front
    to back); inf where fewer than 4."""
    widths = np.full(len(points), np.inf)
    for k, p in enumerate(points):
        section = P[(np.abs(P[:, 2] - p[2]) < NECK_SLAB * height)
                    & (np.hypot(P[:, 0] - p[0], P[:, 1] - p[1]) < NECK_REACH * height)]
        if len(section) > 3:
            widths[k] = np.ptp(section[:, 0]) * (np.ptp(section[:, 1]) if depth else 1.0)
    return widths


def _head_base(path, V, faces, height) -> float:
    """The fraction of the chest -> head tip path where the head's sections (their
    width times depth, so that straight-out arms, wide but thin, do not count; on points
    over the surface: a low-poly head has vertices at its corners only) first reach
    HEAD_FULL of the largest section of the path."""
    fractions = np.arange(0.0, NECK_SEARCH[1] + 1e-9, 0.02)
    sizes = _section_widths([point_at(path, f) for f in fractions], surface_points(V, faces, 0.5 * NECK_SLAB * height),
                            height, depth=True)
    sizes = np.where(np.isfinite(sizes), sizes, 0.0)
    return float(fractions[int(np.argmax(sizes >= HEAD_FULL * sizes.max()))])


def _thigh_point(out, humanoid, parts, side, knee, cue):
    """A point of the thigh's axis above the `knee`: where it lies at the gap (`cue`)
    below a thigh's own piece, that piece's centre (landmark_cues.limb_centre); else the
    leg path's point at THIGH_AXIS."""
    if parts is not None and cue == "gap":
        centre = landmark_cues.limb_centre(humanoid.vertices, humanoid.faces, parts, out["thigh" + side], knee)
        if centre is not None:
            return centre
    return point_at(humanoid.paths["leg" + side], THIGH_AXIS)


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


def at_spine_depth(points, V, inside=None, share=None) -> np.ndarray:
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


def split_role(role: str) -> tuple:
    """"forearm.L" -> ("forearm", ".L"); "neck" -> ("neck", "")."""
    return (role[:-2], role[-2:]) if role[-2:] in (".L", ".R") else (role, "")


def _parent_role(role: str) -> str:
    base, side = split_role(role)
    parent = PARENTS[base]
    return parent + side if parent in SIDED else parent
