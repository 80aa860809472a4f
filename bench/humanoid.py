# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoid benchmark (docs/auto_skeleton.md#humanoids): recognition and named landmarks.

    .venv/bin/python bench/humanoid.py [--only quat_,mpfb_,zad_] [--jobs 2] [--calibrate]
        [--arms-down DEG] [--legs-apart DEG] [--head-scale S] [--leg-scale S]

Recognition: `extract_skeleton(...).info["humanoid"]` on every record against the MANIFEST
category ("humanoid" or not); precision and recall per source. Landmarks, on the records
the artist labelled humanoid that Bonesmith recognised: the heads of the standard bones
(naming "mixamo"; every preset places the same joints) against the artist's bones of the
same role, found by name (LANDMARK_NAMES: Unreal / MPFB game_engine, Mixamo, CMU, MakeHuman
default, Quaternius, 0 A.D.), in % of the rest mesh's bounding-box diagonal. Records whose
rig names no landmark are counted but not scored. Where the artist's left/right names are
on the other sides than the character's own (0 A.D.'s bipeds face +Y with their `_L`
bones on +X), the landmarks are compared side by side and the record is listed.

--arms-down DEG: each character's arms first lowered with its artist's rig until they hang
DEG degrees below the horizontal (bench/repose.py; an A-pose for the T-posed studios),
its artist's joints with them. Output: bench/results/humanoid_armsDEG.md and .json.

--legs-apart DEG: each character's legs first set DEG degrees further apart with its
artist's rig, the feet turned back flat on the ground (bench/repose.py; a wide stance),
its artist's joints with them. Output: bench/results/humanoid_legsDEG.md and .json.

--head-scale S, --leg-scale S: each character first made over in other proportions with its
artist's rig (bench/repose.py: reproportioned): its head S times as large, or its thighs
and shins S times as long (a chibi: --head-scale 1.6 --leg-scale 0.6), its artist's
joints with it; proportions no studio of ../shared/data was modelled in. Only characters
whose rig names a head, thighs, shins and feet are made over and scored (--head-scale 1:
the same characters as modelled, to compare with). Output:
bench/results/humanoid_headS_legS.md and .json.

--calibrate: the artists' landmarks as fractions of Bonesmith's humanoid paths (where
core/rig/humanoid/skeleton.py's LANDMARKS come from), median per landmark over the CC0 sources
(quat_, mpfb_) facing -Y, up +Z. Output: bench/results/humanoid.md.

--hip-heights: where each artist puts the hip joints (the thighs' heads) against the
crotch (the surface straight below Bonesmith's pelvis joint), in shares of the height,
per family (median, range): the conventions the hip landmark is scored against
(docs/auto_skeleton.md#hip-conventions). Records up +Z whose thighs the rig names.

--ankle-heights: how high above the sole each artist puts the ankle joints (the feet's
heads) and how high Bonesmith puts them, in shares of the height (the sole: the lowest
surface within SOLE_REACH sideways of the joint), per family (median, range): what the
ankle's cap is measured against (docs/auto_skeleton.md#ankles-over-the-sole). Records up
+Z whose feet the rig names.

--knee-share JSON [JSON ...]: the knee's share of the way from hip socket to ankle
(core/rig/humanoid/skeleton.py KNEE_SHARE), chosen leave-one-studio-out from results of
this script (as modelled and made over: their "knees", the knees no cue placed): for each
studio left out, the share that the other studios' mean error (over every file given)
is least for, and that studio's error there; 0 A.D.'s knees (a convention) apart
(docs/auto_skeleton.md#knees-between-hip-and-ankle).

--calibrate-fingers: the artists' digit joints as signed fractions of Bonesmith's digit
centre lines (core/rig/fingers.py's JOINTS; negative: into the palm), each artist digit's
last joints against ours from the tip back, median per family (mpfb_, quatU_ men, quatU_
women, ...) and the median of the family medians.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, markdown_table  # noqa: E402
from repose import legs_apart, lowered_arms, reproportioned  # noqa: E402

# role -> artist bone name templates; {l} l/r, {L} L/R, {Left} Left/Right, {left} left/right
# (Unreal / Mesh2Motion, Mixamo, MakeHuman, Quaternius, 0 A.D., GDQuest, Rigify, Kenney)
LANDMARK_NAMES = {
    "upper_arm": ("upperarm_{l}", "{Left}Arm", "upperarm01.{L}", "UpperArm.{L}", "arm_{L}", "upperarm.{L}",
                  "upper_arm.{L}", "arm-{left}"),
    "forearm": ("lowerarm_{l}", "{Left}ForeArm", "lowerarm01.{L}", "LowerArm.{L}", "forearm_{L}", "lowerarm.{L}",
                "forearm.{L}"),
    "hand": ("hand_{l}", "{Left}Hand", "wrist.{L}", "Palm.{L}", "hand_{L}", "hand.{L}", "Hand.{L}"),
    "thigh": ("thigh_{l}", "{Left}UpLeg", "upperleg01.{L}", "UpperLeg.{L}", "thigh_{L}", "upperleg.{L}",
              "thigh.{L}", "leg-{left}"),
    "shin": ("calf_{l}", "{Left}Leg", "lowerleg01.{L}", "LowerLeg.{L}", "leg_{L}", "lowerleg.{L}", "shin.{L}"),
    "foot": ("foot_{l}", "{Left}Foot", "foot.{L}", "Foot.{L}", "foot_{L}"),
    "head": ("head", "Head"),
    "neck": ("neck_01", "Neck", "neck01", "neck"),
    "toe": ("ball_{l}", "{Left}ToeBase"),
}
LABELS = {"upper_arm": "shoulder", "forearm": "elbow", "hand": "wrist", "thigh": "hip",
          "shin": "knee", "foot": "ankle", "head": "head", "neck": "neck", "toe": "ball"}
SCORED = ("upper_arm", "forearm", "hand", "thigh", "shin", "foot", "head")
CORE = ("forearm", "hand", "shin", "foot", "head")     # the landmarks (hips, shoulders apart)
FAR = 4.0      # % of the diagonal: a landmark this far off is a miss
# A studio's landmarks its artists put away from the anatomy, reported apart from its
# CORE mean and its misses (docs/auto_skeleton.md#hip-conventions): 0 A.D.'s head joint
# 2 % of the height below the crown, its knees halfway up to its high hips.
CONVENTIONS = {"zad_": ("shin", "head")}


def _core_errors(r) -> list:
    """The CORE landmark errors of one result, without its studio's CONVENTIONS."""
    apart = CONVENTIONS.get(r["record"].split("_")[0] + "_", ())
    return [e for role, e in r["errors"].items() if role.split(".")[0] in CORE and role.split(".")[0] not in apart]


def artist_landmarks(names, joints) -> dict:
    """role (with side) -> the artist's bone head, for the roles its names give."""
    return {role: joints[k] for role, k in artist_indices(names).items()}


def arms_lowered(rec: dict, degrees: float):
    """(verts, joints, tails, arms turned) of a record ("verts", "joints", "joint_names",
    "joint_tails", "parents", "weights") with the artist's upper arms lowered to `degrees`
    below the horizontal (repose.py)."""
    arms = [k for role, k in artist_indices(rec["joint_names"]).items() if role.startswith("upper_arm.")]
    return lowered_arms(rec["verts"], rec["joints"], rec["joint_tails"], rec["parents"], rec["weights"],
                        arms, degrees)


def legs_set_apart(rec: dict, degrees: float):
    """(verts, joints, tails) of a record ("verts", "joints", "joint_names", "joint_tails",
    "parents", "weights") with the artist's legs set `degrees` further apart (repose.py),
    or None where its rig names no two thighs."""
    roles = artist_indices(rec["joint_names"])
    legs = [(roles[f"thigh{s}"], roles.get(f"foot{s}")) for s in (".L", ".R") if f"thigh{s}" in roles]
    if len(legs) < 2:
        return None
    return legs_apart(rec["verts"], rec["joints"], rec["joint_tails"], rec["parents"], rec["weights"],
                      legs, degrees)


def made_over(rec: dict, head_scale: float, leg_scale: float):
    """(verts, joints) of a record ("verts", "joints", "joint_names", "parents", "weights")
    with its head scaled by `head_scale` and its legs by `leg_scale` (repose.py), or None
    where its rig names no head or not both legs' thigh, shin and foot."""
    roles = artist_indices(rec["joint_names"])
    legs = [tuple(roles.get(f"{r}{s}") for r in ("thigh", "shin", "foot")) for s in (".L", ".R")]
    if "head" not in roles or any(None in leg for leg in legs):
        return None
    return reproportioned(rec["verts"], rec["joints"], rec["parents"], rec["weights"], roles["head"], legs,
                          head_scale, leg_scale)


def artist_indices(names) -> dict:
    """role (with side) -> the index of the artist's bone of that role, by its name."""
    plain = {str(n).split(":")[-1]: k for k, n in enumerate(names)}
    out = {}
    for role, templates in LANDMARK_NAMES.items():
        sides = (("", {}),) if role in ("head", "neck") else (
            (".L", dict(l="l", L="L", Left="Left", left="left")), (".R", dict(l="r", L="R", Left="Right", left="right")))
        for suffix, fill in sides:
            for t in templates:
                name = t.format(**fill) if fill else t
                if name in plain:
                    out[role + suffix] = plain[name]
                    break
    return out


# artist digit bones: Mixamo LeftHandIndex1, Unreal index_01_l, MakeHuman finger2-1.L
# (1 = thumb), Quaternius Index1.L / PinkyFinger1.L -> (side, digit, number)
DIGIT_PATTERNS = (
    (re.compile(r"^(Left|Right)Hand(Thumb|Index|Middle|Ring|Pinky)(\d)$"), (0, 1, 2)),
    (re.compile(r"^(thumb|index|middle|ring|pinky)_0(\d)_(l|r)$"), (2, 0, 1)),
    (re.compile(r"^finger([1-5])-(\d)\.(L|R)$"), (2, 0, 1)),
    (re.compile(r"^(Thumb|Index|Middle|Ring|Pinky)(?:Finger)?(\d)\.(L|R)$"), (2, 0, 1)),
)
DIGITS = ("thumb", "index", "middle", "ring", "pinky")


def artist_digits(names, joints) -> dict:
    """(digit, ".L"/".R") -> the artist's joints of that digit, base first, for hands with
    four or five named digits (mittens with a thumb are not scored)."""
    found = {}
    for k, name in enumerate(names):
        plain = str(name).split(":")[-1]
        for pattern, (s, d, n) in DIGIT_PATTERNS:
            m = pattern.match(plain)
            if m:
                side = ".L" if m.group(s + 1)[0] in "Ll" else ".R"
                digit = m.group(d + 1).lower()
                digit = DIGITS[int(digit) - 1] if digit.isdigit() else digit
                found.setdefault((digit, side), []).append((int(m.group(n + 1)), joints[k]))
                break
    hands = {side: sum(1 for _, s in found if s == side) for side in (".L", ".R")}
    return {key: np.array([p for _, p in sorted(v, key=lambda t: t[0])])
            for key, v in found.items() if hands[key[1]] >= 4}


def finger_errors(mine: dict, theirs: dict, swapped: bool, diag: float) -> list:
    """% of the diagonal per scored digit joint: each artist digit's last joints (up to
    three) against ours, from the tip back (the artists number from the metacarpal or
    the knuckle; the joints nearest the tip are the phalanges in every convention)."""
    out = []
    for (digit, side), points in theirs.items():
        side = OTHER_SIDE[side] if swapped else side
        ours = [mine.get(f"{digit}{k}{side}") for k in (1, 2, 3)]
        if ours[0] is None:
            continue
        for a, b in zip(ours[::-1], points[::-1][:3]):
            out.append(float(np.linalg.norm(a - b) / diag * 100))
    return out


def categories(data: Path) -> dict:
    with open(data / "MANIFEST.tsv") as fh:
        return {r["name"]: r["category"] for r in csv.DictReader(fh, delimiter="\t")}


def run(path: Path, arms_down: float | None = None, legs: float | None = None,
        scales: tuple | None = None) -> dict:
    from bonesmith.core.skeleton import extract_skeleton
    from bonesmith.core.mesh import bbox_diagonal

    keys = ("verts", "faces", "joints", "joint_names") + (
        ("joint_tails", "parents", "weights") if arms_down or legs or scales else ())
    with np.load(path, allow_pickle=False) as d:
        rec = {k: d[k] for k in keys}
    out = {"record": path.stem, "humanoid": None, "errors": {}}
    if arms_down:
        rec["verts"], rec["joints"], _, out["arms_lowered"] = arms_lowered(rec, arms_down)
    if legs:
        apart = legs_set_apart(rec, legs)
        out["legs_apart"] = apart is not None
        if apart is not None:
            rec["verts"], rec["joints"], _ = apart
    if scales:
        over = made_over(rec, *scales)
        out["made_over"] = over is not None
        if over is None:      # not this body in other proportions: not scored
            return out
        rec["verts"], rec["joints"] = over
    try:
        sk = extract_skeleton(rec["verts"], rec["faces"], naming="mixamo")
    except Exception as error:  # noqa: BLE001 - a refusal is a result
        out["error"] = f"{type(error).__name__}: {error}"
        return out
    out["humanoid"] = bool(sk.info["humanoid"])
    sided = set(artist_landmarks(rec["joint_names"], rec["joints"]))
    out["artist_humanoid_rig"] = {"upper_arm.L", "upper_arm.R", "thigh.L", "thigh.R"} <= sided
    out["artist_arms"] = {"upper_arm.L", "upper_arm.R"} <= sided
    out["facing"] = sk.facing_text
    out["cues"] = sk.info.get("landmark_cues", {})
    if out["humanoid"]:
        mine = {role: sk.joints[k] for k, role in enumerate(sk.info["roles"])}
        theirs = artist_landmarks(rec["joint_names"], rec["joints"])
        diag = bbox_diagonal(rec["verts"])
        out["sides_swapped"] = sides_swapped(mine, theirs)
        if out["sides_swapped"]:       # the artist's L is the character's right: compare by side
            theirs = {swap(role): point for role, point in theirs.items()}
        for role, point in theirs.items():
            if role in mine:
                out["errors"][role] = float(np.linalg.norm(mine[role] - point) / diag * 100)
        digits = artist_digits(rec["joint_names"], rec["joints"])
        artist = {side for _, side in digits}
        if out["sides_swapped"]:
            artist = {OTHER_SIDE[side] for side in artist}
        ours = {role[-2:] for role in mine if role.startswith("index1")}
        out["hands"] = (len(ours & artist), len(artist), len(ours - artist))
        out["fingers"] = finger_errors(mine, digits, out["sides_swapped"], diag)
        out["knees"] = knee_shares(mine, theirs, out["cues"], diag)
    return out


def knee_shares(mine: dict, theirs: dict, cues: dict, diag: float) -> dict:
    """side -> (the artist's knee's share of Bonesmith's hip socket -> ankle, Bonesmith's
    knee's, that line's length and Bonesmith's knee's error across it in % of the
    diagonal, the KNEE_SHARE it was placed with) for the knees placed by their proportion
    (--knee-share)."""
    from bonesmith.core.rig.humanoid.skeleton import KNEE_SHARE

    out = {}
    for side in (".L", ".R"):
        roles = ("thigh" + side, "shin" + side, "foot" + side)
        if cues.get("knee" + side) != "proportion" or not all(r in mine for r in roles) or roles[1] not in theirs:
            continue
        hip, knee, ankle = (np.asarray(mine[r], dtype=float) for r in roles)
        length = float(np.linalg.norm(ankle - hip))
        u = (ankle - hip) / length
        miss = knee - theirs[roles[1]]
        out[side] = (float((theirs[roles[1]] - hip) @ u / length), float((knee - hip) @ u / length),
                     length / diag * 100, float(np.linalg.norm(miss - (miss @ u) * u) / diag * 100), KNEE_SHARE)
    return out


KNEE_SHARES = np.round(np.arange(0.36, 0.561, 0.01), 2)


def knee_share_table(files: list, cats: dict) -> str:
    """Leave-one-studio-out choice of the knee's share of hip socket -> ankle (--knee-share),
    over the humans (`cats`: record -> MANIFEST category)."""
    runs = [[r for r in json.loads(Path(f).read_text()) if cats.get(r["record"]) == "humanoid"] for f in files]
    studios = sorted({r["record"].split("_")[0] + "_" for rs in runs for r in rs if r.get("knees")}
                     - {s for s, roles in CONVENTIONS.items() if "shin" in roles})
    # error[run][studio]: (now, per share) mean over that studio's knees at their proportion
    error = [{s: [] for s in studios} for _ in runs]
    for table, rs in zip(error, runs):
        for r in rs:
            s = r["record"].split("_")[0] + "_"
            for theirs, ours, length, across, share in (r.get("knees") or {}).values():
                if s in table:     # another share moves the knee along the line by the difference
                    table[s].append([np.hypot((ours + t - share - theirs) * length, across) for t in (share, *KNEE_SHARES)])
    curve = [{s: np.mean(e[s], axis=0) for s in studios if e[s]} for e in error]   # (now, per share)
    studio_curve = {s: np.mean([c[s][1:] for c in curve if s in c], axis=0) for s in studios}
    rows = []
    for s in studios:
        others = [studio_curve[o] for o in studios if o != s]
        if not others:
            continue
        k = int(np.argmin(np.mean(others, axis=0)))
        cells = [f"{c[s][0]:.2f} → {c[s][k + 1]:.2f} ({len(e[s])})" if s in c else "–" for c, e in zip(curve, error)]
        rows.append([s, f"{KNEE_SHARES[k]:.2f}", *cells, f"{KNEE_SHARES[int(np.argmin(studio_curve[s]))]:.2f}"])
    everyone = np.mean([studio_curve[s] for s in studios], axis=0)
    rows.append(["all", f"{KNEE_SHARES[int(np.argmin(everyone))]:.2f}", *[""] * len(runs), ""])
    return markdown_table(["studio left out", "share the others choose",
                           *[f"{Path(f).stem}: now → held out (knees)" for f in files], "its own best"], rows)


OTHER_SIDE = {".L": ".R", ".R": ".L"}


def swap(role: str) -> str:
    return role[:-2] + OTHER_SIDE[role[-2:]] if role[-2:] in OTHER_SIDE else role


def sides_swapped(mine: dict, theirs: dict) -> bool:
    """Whether the artist's left/right names are the mirror of Bonesmith's (the character's
    own left as it faces): the pairing with the other side's names is closer."""
    pairs = [r for r in theirs if r.endswith(".L") and r in mine and swap(r) in mine and swap(r) in theirs]
    if not pairs:
        return False
    same = sum(np.linalg.norm(mine[r] - theirs[r]) + np.linalg.norm(mine[swap(r)] - theirs[swap(r)]) for r in pairs)
    other = sum(np.linalg.norm(mine[swap(r)] - theirs[r]) + np.linalg.norm(mine[r] - theirs[swap(r)]) for r in pairs)
    return bool(other < same)


def calibrate(path: Path) -> dict:
    """Artist landmarks as fractions of the humanoid paths (records facing -Y, up +Z)."""
    from bonesmith.core.rig import humanoid, polyline
    from bonesmith.core.skeleton import extract_skeleton

    with np.load(path, allow_pickle=False) as d:
        rec = {k: d[k] for k in ("verts", "faces", "joints", "joint_names")}
    sk = extract_skeleton(rec["verts"], rec["faces"])
    if not sk.info["humanoid"] or sk.facing_text != "facing -Y, up +Z":
        return {}
    parents = sk.parents
    human = humanoid.recognise(sk.joints, sk.tails, parents, rec["verts"])
    if human is None:
        return {}
    paths = {"upper_arm": "arm", "forearm": "arm", "hand": "arm", "thigh": "leg", "shin": "leg",
             "foot": "leg", "toe": "leg", "head": "head", "neck": "head"}
    out = {}
    for role, point in artist_landmarks(rec["joint_names"], rec["joints"]).items():
        base, side = role.split(".")[0], role[len(role.split(".")[0]):]
        out[role] = polyline.fraction_of(human.paths[paths[base] + side], point)
    return out


def calibrate_fingers(path: Path) -> list:
    """[(family, "thumb" or "finger", joint 1-3, signed fraction)] for a humanoid whose
    hands have fingers in the mesh and in the artist's rig."""
    from bonesmith.core.rig import fingers, polyline
    from bonesmith.core.skeleton import extract_skeleton

    with np.load(path, allow_pickle=False) as d:
        rec = {k: d[k] for k in ("verts", "faces", "joints", "joint_names")}
    sk = extract_skeleton(rec["verts"], rec["faces"], naming="unreal")
    if not sk.info["humanoid"]:
        return []
    vertices, faces = welded(rec["verts"], rec["faces"])
    digits = artist_digits(rec["joint_names"], rec["joints"])
    n = {name: k for k, name in enumerate(sk.names)}
    out = []
    for s in ("l", "r"):
        if f"middle_03_{s}" not in n:
            continue
        # the hand's far end as Auto Skeleton gives it to the fingers: the middle fingertip
        hand, elbow, tip = n[f"hand_{s}"], n[f"lowerarm_{s}"], n[f"middle_03_{s}"]
        lines = fingers.digit_lines(vertices, faces, sk.joints[hand], sk.joints[elbow], sk.tails[tip])
        for digit, line in (lines or {}).items():
            theirs = [points for (d, side), points in digits.items()
                      if d == digit and np.linalg.norm(points[-1] - line[-1]) < polyline.length(line)]
            if not theirs:
                continue
            for k, point in zip((3, 2, 1), theirs[0][::-1][:3]):
                out.append((family(path.stem), "thumb" if digit == "thumb" else "finger", k,
                            _signed_fraction(line, point)))
    return out


def _rigged_human(path: Path):
    """(Auto Skeleton's humanoid rig, the artist's landmarks, the welded vertices and
    faces) of a record recognised as a humanoid and up +Z, else None (hip_height,
    ankle_height)."""
    from bonesmith.core.skeleton import extract_skeleton

    with np.load(path, allow_pickle=False) as d:
        rec = {k: d[k] for k in ("verts", "faces", "joints", "joint_names")}
    sk = extract_skeleton(rec["verts"], rec["faces"], naming="mixamo")
    if not sk.info["humanoid"] or "up +Z" not in sk.facing_text:
        return None
    return (sk, artist_landmarks(rec["joint_names"], rec["joints"])) + welded(rec["verts"], rec["faces"])


def hip_height(path: Path):
    """(family, (artist hip - crotch) / height) or None (hip_heights)."""
    rigged = _rigged_human(path)
    if rigged is None:
        return None
    sk, theirs, vertices, faces = rigged
    thighs = [theirs[r] for r in ("thigh.L", "thigh.R") if r in theirs]
    below = surface_below(vertices, faces, sk.joints[sk.info["roles"].index("hips")]) if thighs else None
    if below is None:
        return None
    height = float(np.ptp(vertices[:, 2]))
    return family(path.stem), (float(np.mean([p[2] for p in thighs])) - below) / height


SOLE_REACH = 0.05     # share of the height: the sole under a joint is the lowest surface this near


def ankle_height(path: Path):
    """(family, artist ankle above its sole / height, Bonesmith's ankle above its sole /
    height) or None (ankle_heights); each the mean over the sides both name. The sole is
    the lowest vertex within SOLE_REACH (horizontally) of the joint."""
    rigged = _rigged_human(path)
    if rigged is None:
        return None
    sk, theirs, vertices, _ = rigged
    mine = {role: sk.joints[k] for k, role in enumerate(sk.info["roles"])}
    height = float(np.ptp(vertices[:, 2]))
    found = {"theirs": [], "mine": []}
    for side in ("foot.L", "foot.R"):
        if side not in theirs or side not in mine:
            continue
        for who, p in (("theirs", theirs[side]), ("mine", mine[side])):
            under = np.linalg.norm(vertices[:, :2] - np.asarray(p)[:2], axis=1) < SOLE_REACH * height
            if under.any():
                found[who].append((p[2] - vertices[under, 2].min()) / height)
    if not found["theirs"] or not found["mine"]:
        return None
    return family(path.stem), float(np.mean(found["theirs"])), float(np.mean(found["mine"]))


def family(name: str) -> str:
    """Benchmark family of a record: mpfb_, zad_, quat_ classics vs others, quatU_ men ... (the
    finger calibration's families: mpfb_, quatU_ men, quatU_ women)."""
    if name.startswith("quat_"):
        return "quat_ " + ("classic " + ("men" if "Male" in name else "women")
                           if name.split("_")[1] in ("Male", "Female", "Smooth") else "others")
    if name.startswith("quatU_"):
        return "quatU_ " + name.split("_")[1]
    return name.split("_")[0] + "_"


def surface_below(V, F, point):
    """Height of the first surface crossing straight below `point` (the crotch, from the
    pelvis), or None."""
    from bonesmith.core.rays import ray_hits

    origin = point + [1e-6 * np.ptp(V[:, 0]), 0.0, 0.0]      # off the seam of a symmetric mesh
    T0 = V[F[:, 0]]
    t = ray_hits(origin, np.array([[0.0, 0.0, -1.0]]), T0, V[F[:, 1]] - T0, V[F[:, 2]] - T0)[0]
    return float(origin[2] - t) if np.isfinite(t) else None


def welded(vertices, faces):
    """The mesh welded as Auto Skeleton welds it (records of glTF packs are triangle soups)."""
    from bonesmith.core.meshprep import clean_mesh
    mesh = clean_mesh(vertices, faces)
    return mesh.to_world(mesh.vertices), mesh.faces


def _signed_fraction(line, point) -> float:
    """fraction_of, or negative: how far before the line's start along its first half."""
    from bonesmith.core.rig import polyline
    total = polyline.length(line)
    half = polyline.point_at(line, 0.5)
    direction = (half - line[0]) / max(np.linalg.norm(half - line[0]), 1e-12)
    t = float((point - line[0]) @ direction / total)
    return t if t < 0 else polyline.fraction_of(line, point)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--only", default="quat_,mpfb_,zad_,quatU_,kenney_,m2m_,gdq_,ojg_")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--calibrate-fingers", action="store_true")
    ap.add_argument("--hip-heights", action="store_true")
    ap.add_argument("--ankle-heights", action="store_true")
    ap.add_argument("--knee-share", nargs="+", type=Path, default=None, metavar="JSON")
    ap.add_argument("--arms-down", type=float, default=None, metavar="DEG",
                    help="lower each character's arms with its artist's rig until they hang DEG degrees "
                         "below the horizontal (an A-pose; bench/repose.py) before rigging it")
    ap.add_argument("--legs-apart", type=float, default=None, metavar="DEG",
                    help="set each character's legs DEG degrees further apart with its artist's rig, the "
                         "feet flat (a wide stance; bench/repose.py) before rigging it")
    ap.add_argument("--head-scale", type=float, default=None, metavar="S",
                    help="scale each character's head S times with its artist's rig before rigging it "
                         "(1: the characters that can be made over, as modelled)")
    ap.add_argument("--leg-scale", type=float, default=None, metavar="S",
                    help="make each character's thighs and shins S times as long with its artist's rig")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    scales = None if args.head_scale is None and args.leg_scale is None else (args.head_scale or 1.0,
                                                                             args.leg_scale or 1.0)
    if args.out is None:
        args.out = RESULTS / ("humanoid" + (f"_arms{args.arms_down:g}" if args.arms_down else "")
                              + (f"_legs{args.legs_apart:g}" if args.legs_apart else "")
                              + (f"_head{scales[0]:g}_leg{scales[1]:g}" if scales else "") + ".md")
    cats = categories(args.data)
    if args.knee_share:
        print(knee_share_table(args.knee_share, cats))
        return 0
    prefixes = tuple(p for p in args.only.split(",") if p)
    paths = [p for p in sorted(args.data.glob("*.npz")) if p.stem.startswith(prefixes) and p.stem in cats]
    with ProcessPoolExecutor(args.jobs) as pool:
        if args.calibrate_fingers:
            found = [row for rows in pool.map(calibrate_fingers, paths) for row in rows]
            table = []
            for kind in ("finger", "thumb"):
                for k in (1, 2, 3):
                    per = {}
                    for fam, kd, kk, f in found:
                        if kd == kind and kk == k:
                            per.setdefault(fam, []).append(f)
                    if per:
                        medians = {fam: float(np.median(v)) for fam, v in sorted(per.items())}
                        table.append([kind, k, f"{np.median(list(medians.values())):.2f}",
                                      ", ".join(f"{fam} {m:.2f} ({len(per[fam])})" for fam, m in medians.items())])
            print(markdown_table(["digit", "joint", "median of families", "family medians (joints)"], table))
            return 0
        if args.hip_heights:
            per = {}
            for fam, offset in filter(None, pool.map(hip_height, paths)):
                per.setdefault(fam, []).append(offset)
            print(markdown_table(["family", "n", "artist hip - crotch (median)", "min", "max"],
                                 [[fam, len(v), f"{np.median(v):+.3f}", f"{min(v):+.3f}", f"{max(v):+.3f}"]
                                  for fam, v in sorted(per.items())]))
            return 0
        if args.ankle_heights:
            per = {}
            humans = [p for p in paths if cats[p.stem] == "humanoid"]
            for fam, theirs, mine in filter(None, pool.map(ankle_height, humans)):
                per.setdefault(fam, []).append((theirs, mine))
            print(markdown_table(["family", "n", "artist ankle above the sole (median)", "min", "max",
                                  "Bonesmith's (median)"],
                                 [[fam, len(v), f"{np.median([t for t, _ in v]):.3f}", f"{min(t for t, _ in v):.3f}",
                                   f"{max(t for t, _ in v):.3f}", f"{np.median([m for _, m in v]):.3f}"]
                                  for fam, v in sorted(per.items())]))
            return 0
        if args.calibrate:
            cc0 = [p for p in paths if p.stem.startswith(("quat_", "mpfb_")) and cats[p.stem] == "humanoid"]
            found = [f for f in pool.map(calibrate, cc0) if f]
            rows = []
            for role in LANDMARK_NAMES:
                values = [f[k] for f in found for k in f if k.split(".")[0] == role]
                if values:
                    rows.append([role, len(values), f"{np.median(values):.3f}",
                                 f"{np.percentile(values, 25):.3f}", f"{np.percentile(values, 75):.3f}"])
            print(markdown_table(["role", "n", "median fraction", "p25", "p75"], rows))
            return 0
        results = list(pool.map(partial(run, arms_down=args.arms_down, legs=args.legs_apart, scales=scales), paths))
    text = report(results, cats)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1))
    return 0


def report(results, cats) -> str:
    over = [r["made_over"] for r in results if "made_over" in r]
    results = [r for r in results if r.get("made_over", True)]    # the others were not rigged
    rows, lm_rows = [], []
    sources = sorted({r["record"].split("_")[0] + "_" for r in results})
    for source in sources + ["all"]:
        rs = [r for r in results if source == "all" or r["record"].startswith(source)]
        truth = [cats[r["record"]] == "humanoid" for r in rs]
        said = [r["humanoid"] is True for r in rs]
        tp = sum(t and s for t, s in zip(truth, said))
        fp = sum(s and not t for t, s in zip(truth, said))
        fn = sum(t and not s for t, s in zip(truth, said))
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        rigged = sum(s and not t and r.get("artist_humanoid_rig", False) for r, t, s in zip(rs, truth, said))
        rows.append([source, len(rs), sum(truth), tp, f"{fp} ({rigged})", fn, f"{precision:.3f}", f"{recall:.3f}"])
        scored = [r for r, t in zip(rs, truth) if t and r["errors"]]
        per = {}
        for r in scored:
            for role, e in r["errors"].items():
                if role.split(".")[0] in SCORED:
                    per.setdefault(LABELS[role.split(".")[0]], []).append(e)
        if per:
            means = [float(np.mean(r_e)) for r_e in
                     ([e for role, e in r["errors"].items() if role.split(".")[0] in SCORED] for r in scored)]
            fingers = [np.mean(r["fingers"]) for r in scored if r.get("fingers")]
            hands = np.sum([r["hands"] for r in scored], axis=0)
            core = [float(np.mean(e)) for e in map(_core_errors, scored) if e]
            lm_rows.append([source, len(scored), f"{np.mean(means):.2f}", f"{np.mean(core):.2f}" if core else "–"]
                           + [f"{np.mean(per[k]):.2f}" if k in per else "–"
                              for k in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle", "head")]
                           + [f"{hands[0]} / {hands[1]}", str(hands[2]),
                              f"{np.mean(fingers):.2f}" if fingers else "–"])
    far = [r for r in results if cats[r["record"]] == "humanoid" and r["errors"]
           and max(_core_errors(r), default=0.0) > FAR]
    cue_rows = []
    for marker in ("shoulder", "elbow", "wrist", "knee", "ankle", "chin", "hip"):
        counts = {}
        for r in results:
            for name, cue in r.get("cues", {}).items():
                if name.split(".")[0] == marker:
                    counts[cue] = counts.get(cue, 0) + 1
        cue_rows.append([marker, ", ".join(f"{cue} {n}" for cue, n in sorted(counts.items()))])
    wrong = [r["record"] + (" (artist's rig: a humanoid's)" if r.get("artist_humanoid_rig") else "")
             for r in results if r["humanoid"] and cats[r["record"]] != "humanoid"]
    swapped = [r["record"] for r in results if r.get("sides_swapped")]
    missed = [r["record"] + (" (artist's rig: no arms)" if r.get("artist_arms") is False else "")
              for r in results if not r["humanoid"] and cats[r["record"]] == "humanoid"]
    armless = [r["record"] for r in results if r["humanoid"] and cats[r["record"]] == "humanoid"
               and r.get("artist_arms") is False]
    lowered = [r["arms_lowered"] for r in results if "arms_lowered" in r]
    posed = (f"Arms lowered with the artist's rig before rigging (--arms-down): {sum(n > 0 for n in lowered)} of "
             f"{len(lowered)} characters ({sum(lowered)} arms; the others' arms already hung that low or "
             "their rig names none)\n\n") if lowered else ""
    apart = [r["legs_apart"] for r in results if "legs_apart" in r]
    posed += (f"Legs set apart with the artist's rig before rigging (--legs-apart): {sum(apart)} of {len(apart)} "
              "characters (the others' rig names no two thighs)\n\n") if apart else ""
    posed += (f"Made over in other proportions with the artist's rig (--head-scale, --leg-scale): {sum(over)} of "
              f"{len(over)} characters; the others (whose rig names no head, thighs, shins and feet) are left "
              "out\n\n") if over else ""
    return (posed + "Humanoid recognition (MANIFEST category 'humanoid' = truth)\n\n"
            + markdown_table(["source", "records", "humanoid", "found",
                              "false (whose artist's rig names two arms and two legs)", "missed",
                              "precision", "recall"], rows)
            + "\n\nNamed landmarks, % of the bounding-box diagonal (recognised humanoids whose rig "
              "names them; mean per character, then over characters)\n\n"
            + markdown_table(["source", "characters", "mean", "core mean", "shoulder", "elbow", "wrist", "hip",
                              "knee", "ankle", "head", "fingers found / artist's five-finger hands",
                              "fingers on other hands", "finger joints"], lm_rows)
            + "\n\ncore mean: elbows, wrists, knees, ankles and head, without a studio's conventions ("
            + "; ".join(f"{k} {', '.join(LABELS[role] for role in v)}" for k, v in CONVENTIONS.items()) + ")"
            + "\n\nWhat placed each landmark (sides counted apart)\n\n"
            + markdown_table(["landmark", "cues"], cue_rows)
            + f"\n\nhumans with an elbow, wrist, knee, ankle or head more than {FAR:g} % off "
              f"(a studio's conventions apart): {len(far)} "
              f"({', '.join(sorted(r['record'] for r in far))})"
            + f"\n\ncalled humanoid, labelled otherwise: {', '.join(wrong) or 'none'}\n"
            + f"missed: {', '.join(missed) or 'none'}\n"
            + f"recognised, labelled humanoid, whose artist's rig has no arms: {', '.join(armless) or 'none'}\n"
            + f"refused (an error): {', '.join(r['record'] + ' (' + r['error'] + ')' for r in results if 'error' in r) or 'none'}\n"
            + f"left/right named the other way round than the character faces (compared by side): "
              f"{', '.join(swapped) or 'none'}\n")


if __name__ == "__main__":
    sys.exit(main())
