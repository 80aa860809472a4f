# SPDX-License-Identifier: GPL-3.0-or-later
"""The generic rig of a recognised humanoid adapted to its limbs
(docs/auto_skeleton.md#limb-landmarks): with generic names the humanoid keeps its generic
rig, bent at the limb landmarks of the standard skeleton (snap_limbs: joints moved onto
the shoulder and hip sockets, elbows, wrists, knees and ankles; the legs below the hips
knee-ankle-foot, the standard digits on hands with separable fingers; the spine on the
plane of symmetry and at the body's middle depth, docs/auto_skeleton.md#spine-depth), and
its side chains are named by limb (limb_bones) and its digits by finger (finger_names).
"""
from __future__ import annotations

import numpy as np

from .. import fingers, markers
from ..graph import compact_parents, descendants
from .recognition import Humanoid
from .skeleton import DIGIT_ROLES, LANDMARKS, at_spine_depth, standard_joints

# The generic rig of a humanoid gets a joint at these landmarks (snap_limbs): shoulder and
# hip sockets, elbows, wrists, knees, ankles; a joint farther than SNAP_REACH x the diagonal
# from one is left where it is.
SNAP_ROLES = ("upper_arm", "forearm", "hand", "thigh", "shin", "foot")
SNAP_REACH = 0.08
TOE_REACH = 0.02           # a generic joint this close (share of the diagonal) to the ball of the foot: a toe bone
SIDE_SHARE = 0.5           # a joint moved to a landmark lies at least this share of its distance from x = 0
SPINE_MERGE = 0.005        # spine joints this close (share of the diagonal) to their parent are one
CENTRE_SHARE = 0.02        # a joint this close (share of the diagonal) to x = 0 is on the spine's plane
PATHS = {role: path for role, path, _ in LANDMARKS}


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
    # the spine ends at the head landmark; where that was found below the tree's chest
    # (skeleton._below_chest) and no chin marker placed it, at the head the tree's path shows
    top = landmarks["head"] if "head" in placed else landmarks.get("spine_top", landmarks["head"])
    if humanoid.symmetric:
        _spine_on_plane(H, T, P, top, diagonal)
    _spine_to_depth(H, T, humanoid, top, diagonal)
    H, T, P = _drop_between(H, T, P, set(moved))
    if not humanoid.hidden_legs:
        H, T, P = _standard_legs(H, T, P, landmarks, diagonal)
    H, T, P = _standard_hands(H, T, P, landmarks, diagonal)
    return _merge_coincident(H, T, P, _limb_chain(H, P, top), SPINE_MERGE * diagonal)


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


def _spine_to_depth(H, T, humanoid: Humanoid, top, diagonal: float):
    """The generic rig's root and its joints on the plane of symmetry (within CENTRE_SHARE
    of the diagonal) from the pelvis up to the height of `top` (where the spine ends),
    moved (in place) to SPINE_DEPTH of the body's depth; bones ending at them follow."""
    if humanoid.vertices is None:
        return
    low, high = standard_joints(humanoid)["hips"][2], top[2]
    centre = np.flatnonzero((np.abs(H[:, 0]) < CENTRE_SHARE * diagonal) &
                            (H[:, 2] > low - CENTRE_SHARE * diagonal) & (H[:, 2] < high + CENTRE_SHARE * diagonal))
    if abs(H[0, 0]) < CENTRE_SHARE * diagonal:       # the root (pelvis), however low
        centre = np.union1d(centre, [0])
    moved = at_spine_depth(H[centre], humanoid.vertices, humanoid.inside)
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
