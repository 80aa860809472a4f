# SPDX-License-Identifier: GPL-3.0-or-later
"""Markers: humanoid landmarks a user placed by hand (docs/auto_skeleton.md#markers).

A marker names a landmark ("knee.L", "chin" ...) and gives its position; Auto Skeleton
puts the standard joint of that landmark there and derives the rest again around it: the
pelvis moved with the hip markers and the spine spread up from it, the neck below the chin,
the fingers from the wrist, the generic rig's limb joints (snap_limbs) on them. On a
mirror-symmetric character a marker whose partner on the other side is not given is
mirrored, so moving one knee moves both. Positions are in the upright frame here
(core/skeleton.py converts from and to the caller's frame).
"""
from __future__ import annotations

import numpy as np

from ..errors import BonesmithError
from ..symmetry import MIRROR

# marker -> the standard role whose joint (bone head) it places
ROLES = {"chin": "head", "shoulder": "upper_arm", "elbow": "forearm", "wrist": "hand",
         "hip": "thigh", "knee": "shin", "ankle": "foot"}
LANDMARK = {role: name for name, role in ROLES.items()}     # the standard role -> its marker's landmark
SIDED = ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")
NAMES = ("chin",) + tuple(f"{m}{s}" for m in SIDED for s in (".L", ".R"))
# the spine joints' fractions of the pelvis -> chest path (humanoid.skeleton.LANDMARKS): a moved
# pelvis moves each by (1 - fraction) of its move, the chest end stays
SPINE = (("spine", 0.30), ("spine1", 0.60), ("spine2", 0.85))
# the limbs' bones, by the roles at their ends: markers may not put both ends at one point
LIMB_BONES = (("upper_arm", "forearm"), ("forearm", "hand"), ("thigh", "shin"), ("shin", "foot"))
APART = 1e-4   # ... closer than this share of the joints' extent is one point
OUTSIDE = 0.5  # a marker farther than this share of the joints' extent outside their box is misplaced


class MarkerError(BonesmithError):
    """Markers that cannot place a humanoid's joints (unknown names, not numeric)."""


def check(markers) -> dict:
    """{name: (3,) float array} of a markers mapping; MarkerError on unknown names or
    positions that are not three finite numbers."""
    out = {}
    for name, point in dict(markers or {}).items():
        if name not in NAMES:
            raise MarkerError(f"Unknown marker '{name}': use {', '.join(NAMES)}")
        try:
            p = np.asarray(point, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):     # ["a", "b", "c"], {"x": 1}
            p = np.array([np.nan])
        if p.shape != (3,) or not np.isfinite(p).all():
            raise MarkerError(f"Marker '{name}' needs three finite numbers, not {point!r}")
        out[name] = p
    return out


def with_mirrors(markers: dict, symmetric: bool) -> dict:
    """Markers (upright frame) with, on a symmetric character, each side marker's missing
    partner mirrored in x = 0."""
    out = dict(markers)
    if symmetric:
        for name, p in markers.items():
            if name[-2:] in (".L", ".R"):
                other = name[:-2] + (".R" if name.endswith(".L") else ".L")
                out.setdefault(other, p * MIRROR)
    return out


def roles(markers: dict) -> set:
    """The standard roles ("shin.L") that markers place."""
    return {ROLES[_split(name)[0]] + _split(name)[1] for name in markers}


def _split(name: str) -> tuple:
    return (name[:-2], name[-2:]) if name[-2:] in (".L", ".R") else (name, "")


def cues(humanoid) -> dict:
    """marker name -> what placed that landmark: "marker", a cue of landmark_cues
    (knees, elbows: "hinge", "gap", "bend", "kneecap"; wrists: "narrowing"; ankles:
    "turn", "sole"), the hips' ("leg axis", "crotch"), the chin's ("narrowing", "head
    base", "gap", "collar"), else "proportion"."""
    placed = with_mirrors(humanoid.markers or {}, humanoid.symmetric)
    out = {}
    for name in NAMES:
        base, side = _split(name)
        out[name] = ("marker" if name in placed else humanoid.cues.get(ROLES[base] + side, "proportion"))
    return out


def landmarks(joints: dict) -> dict:
    """marker name -> the standard joint it stands for (what the UI shows)."""
    out = {}
    for name in NAMES:
        base, side = _split(name)
        if ROLES[base] + side in joints:
            out[name] = np.asarray(joints[ROLES[base] + side], dtype=np.float64)
    return out


def apply(joints: dict, markers: dict) -> dict:
    """Standard joints (humanoid.standard_joints' dict) with the markers' landmarks put at
    the markers and the joints that hang on them derived again: the pelvis ("hips")
    moved as the two hip markers moved on average, the spine spread from it, the neck at its share of the way
    from the upper chest to a chin marker, the generic rig's knee ("knee_centre") on a
    knee marker."""
    extent = _extent(joints)
    _near_the_body(markers, extent)
    out = dict(joints)
    for name, p in markers.items():
        base, side = _split(name)
        out[ROLES[base] + side] = np.array(p, dtype=np.float64)
        if base == "knee" and "knee_centre" + side in out:
            out["knee_centre" + side] = np.array(p, dtype=np.float64)
    if "hip.L" in markers and "hip.R" in markers:      # the pelvis moves as the sockets do, on its plane
        move = (markers["hip.L"] + markers["hip.R"] - joints["thigh.L"] - joints["thigh.R"]) / 2
        move[0] = 0.0
        out["hips"] = joints["hips"] + move
        for role, fraction in SPINE:
            out[role] = joints[role] + (1 - fraction) * move
    if "chin" in markers:
        lower = np.linalg.norm(joints["neck"] - joints["spine2"])
        share = lower / max(lower + np.linalg.norm(joints["head"] - joints["neck"]), 1e-12)
        out["neck"] = out["spine2"] + share * (out["head"] - out["spine2"])
    _bones_of_some_length(out, markers, extent)
    return out


def _extent(joints: dict):
    """(low corner, high corner, diagonal) of the standard joints' box."""
    P = np.array(list(joints.values()), dtype=np.float64)
    lo, hi = P.min(axis=0), P.max(axis=0)
    return lo, hi, float(np.linalg.norm(hi - lo))


def _near_the_body(markers: dict, extent) -> None:
    """MarkerError for a marker far outside the character (OUTSIDE of the standard joints'
    extent beyond their box): a markers file in other units or another frame."""
    lo, hi, diagonal = extent
    for name, p in markers.items():
        if np.linalg.norm(np.maximum(np.maximum(lo - p, p - hi), 0.0)) > OUTSIDE * diagonal:
            raise MarkerError(f"Marker '{name}' lies far outside the character: give the markers "
                              "in the mesh file's units and axes, as its landmarks are reported")


def _bones_of_some_length(joints: dict, markers: dict, extent) -> None:
    """MarkerError where markers leave a limb bone with no length (an elbow marker on the
    wrist: Blender deletes such a bone); both ends are named."""
    placed = {ROLES[base] + side: name for name, (base, side) in ((n, _split(n)) for n in markers)}
    for side in (".L", ".R"):
        for a, b in LIMB_BONES:
            ends = (a + side, b + side)
            if (ends[0] in placed or ends[1] in placed) and all(e in joints for e in ends) and \
                    np.linalg.norm(joints[ends[0]] - joints[ends[1]]) <= APART * extent[2]:
                names = " and ".join(placed.get(e, f"the {LANDMARK[e[:-2]]}{side} landmark") for e in ends)
                raise MarkerError(f"{names} lie at one point, so the bone between them would have no "
                                  "length: move the marker to its own joint")


def load(path) -> dict:
    """{name: (3,) float array} from a markers file: a JSON object of landmark name ->
    [x, y, z] (the command line's --markers); MarkerError, naming the file, when it is
    missing, not JSON, not such an object, or names an unknown landmark."""
    import json
    from pathlib import Path

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MarkerError(f"Markers file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise MarkerError(f"Cannot read the markers file {path}: {error}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise MarkerError(f"The markers file {path.name} is not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise MarkerError(f"The markers file {path.name} must hold a JSON object of landmark name -> "
                          f'[x, y, z], e.g. {{"knee.L": [0.1, 0.02, 0.5]}}')
    try:
        return check(data)
    except MarkerError as error:
        raise MarkerError(f"{path.name}: {error}") from None
