# SPDX-License-Identifier: GPL-3.0-or-later
"""A limb's middle joint (knee, elbow) from what the body shows
(docs/auto_skeleton.md#landmark-cues), each by the strongest cue it has:

1. a hinge: a separate piece made as the joint (a robot's or a mech's knee axle, a ball
   between two limb pieces), round in the plane the limb bends in and centred on the
   limb's path; the joint is its middle;
2. a gap: in a segmented body (one separate part per segment) the section moves from
   one mesh part to the next there, the two parts meeting end to end (or through a short
   piece or a ball between them, a wooden mannequin's ball: its middle); where the pieces
   meet is the joint, whatever the sections' centres do;
3. a bend: the section centres above and below the joint lie on two lines that meet at
   an angle, and fit them far better split there than anywhere near the window's ends
   (a knee or an elbow bent in the rest pose, not a curve);
4. a knee only: a kneecap, where the leg's front recedes most steeply below it to the
   shin (its lower edge), by a clear share of the leg's thickness, more steeply than
   anywhere just above or below (the thigh's taper from the hip, the shin's to the ankle)
   and while the back stays (a leg tapering all round, a hem: no kneecap);
5. else a proportion of the limb's path (the artists' median).
A wrist (`wrist`) is the narrowest section before a wider hand, at the hand's end of that
narrowest stretch. An ankle (`ankle`) is where the leg's path turns toward the toes, when
the proportion falls past that turn, no higher above the sole than a third of the
foot's length (`ankle_over_sole`), and a little behind the path, toward the heel
(`ankle_back`). In a segmented arm or leg the wrist and the ankle are the gap before the
hand's or the foot's part (`segment_gap`). A shoulder socket (`shoulder`) lies where the arm
leaves the torso when its proportion would lie deep inside the torso (a round body with
stick arms). A head modelled as its own piece on the torso's piece has its joint where
the two meet (`head_piece`); one sunk into the body's pieces (a neck or a helmet rising
out of a collar) no higher than where it leaves them (`head_out_of_body`).
The narrowing of the section between thigh and calf was measured and left out: on the
low-poly game characters' limbs, which taper evenly, the thinnest section is no joint
(docs/auto_skeleton.md#landmark-cues). Front and back are a humanoid's: the front is -y.

Fractions are of the limb's centre path (humanoid/recognition.py: hip socket -> toe tip,
chest -> hand tip); the joint is searched within a window around the proportion.
"""
from __future__ import annotations

import numpy as np

from ..meshprep import component_boxes
from . import sections
from .polyline import fraction_of, off_axis, point_at
from .polyline import length as path_length

STEP = 0.02               # sections this share of the path apart
BEND_DEGREES = 25.0       # the two segments' lines meet at least this angle: a bend
KINK = 0.25               # ... and fit at most this share as badly split there as split at the window's ends
OVERLAP = 0.1             # two limb parts meeting end to end overlap at most this share of the limb's length
BALL = 0.5                # a part after a limb segment at most this x as long as it (along the limb): a joint piece
# limb -> (window searched for the joint, the range of the path the segments' lines are fitted on)
LIMBS = {"leg": ((0.22, 0.55), (0.10, 0.68)), "arm": ((0.32, 0.64), (0.22, 0.70))}
WRIST_WINDOW = (0.64, 0.84)   # the arm path's share searched for the wrist
ANKLE_WINDOW = (0.6, 0.9)     # the leg path's share searched for a segmented ankle's gap
SEGMENT_THICK = 0.5       # ... a hand or foot beyond a wrist's or ankle's gap: at least this share as thick
HAND_WIDER = 1.1          # ... a hand ahead at least this much wider than the wrist
HAND_AHEAD = 0.2          # ... within this share of the path
FOREARM_BEFORE = 0.1      # ... and no narrower section within this share before it
WRIST_PLATEAU = 0.1       # sections at most this much wider than the narrowest are still the wrist
ANKLE_TURN = 45.0         # the leg's path turns at least this much toward the toes at the ankle
ANKLE_SEARCH = 0.45       # ... searched from this share of the hip -> toe tip path on
ANKLE_OVER_SOLE = 0.35    # an ankle lies at most this many foot lengths above the sole
SHIN_LINE = 0.2           # ... down the shin's line (the path over this share of it above the ankle) where
SHIN_DOWN = 0.7           # ... the path stops above that height; only a line sloping down this much (cosine)
FOOT_REACH = 0.06         # the foot: vertices within this share of the height sideways of the toe tip
SOLE_BAND = 0.04          # ... and this share of the height above the lowest of them (the sole)
FOOT_MIN = 0.02           # ... and at least this share of the height long (a peg leg's tip: under 0.01)
ANKLE_BACK = 0.07         # the ankle lies this many foot lengths behind the leg's path
TORSO_WIDER = 2.5         # a section of the arm path this many times the forearm's radius cuts the torso
FOREARM = (0.5, 0.8)      # ... the forearm's radius: the median section over this share of the path
KNEECAP_WINDOW = (0.28, 0.46)  # the leg path's share searched for the top of the front's steepest recession
KNEECAP_SPAN = 0.06       # ... the front's recession measured over this share of the path below
KNEECAP_DEPTH = 0.25      # ... at least this share of the leg's radius (the median section over LEG_RADIUS)
KNEECAP_REACH = 0.04      # ... and steeper than anywhere within this share above or below it
KNEECAP_HEM = 0.7         # ... with the section below at least this much as thick (else a skirt's or a suit's hem)
KNEECAP_BACK = 0.5        # ... and the back coming forward at most this share as far (else the leg tapers all round)
LEG_RADIUS = (0.3, 0.6)   # the leg's radius: the median section over this share of the path
TORSO_SEARCH = 0.7        # ... torso sections searched up to this share of the path
SOCKET_DEPTH = 4.0        # a shoulder proportion deeper in the torso than this many forearm radii is no socket
ROUND = 1.3               # a socket's ball: its longest extent at most this x its shortest
PIECE_SEARCH = (0.5, 0.75, 1.0, 1.25, 1.5)   # shares of joint -> socket (and beyond) searched for a limb's top piece
OWN_AXIS_DEGREES = 45.0   # ... whose own axis its top is measured along when this near that line
HINGE_THICK = 2.0         # a hinge at most this many times as thick as the limb (its median section)
START_REACH = 0.2         # a thigh stub looked for this share of the leg path's length above its start
HEAD_ON_TORSO = 0.005     # a head piece whose lowest point lies this share of the height from the torso piece's top sits on it


def middle_joint(V, F, parts, path, limb: str, proportion: float, hinge: bool = True):
    """(point (3,), cue name) of a limb's middle joint: "hinge" (unless not `hinge`),
    "gap", "bend", for a knee "kneecap", or "proportion" (see the module)."""
    (lo, hi), (start, end) = LIMBS[limb]
    # the gap's sections reach back to the path's start (in steps counted back from
    # `start`, so that the own range's stay put), so that a joint piece at the limb's top
    # is seen with the parts on both sides of it; the bend and the kneecap read the own
    # range only
    before = start - STEP * np.arange(round(start / STEP), 0, -1)
    fractions = np.concatenate([before, np.arange(start, end + 1e-9, STEP)])
    centres, radii, part, fronts, backs = _cut(V, F, parts, path, fractions)
    window = (fractions >= lo) & (fractions <= hi)
    own = slice(len(before), None)
    point = _hinge(V, F, parts, path, fractions[own], centres[own], radii[own], part[own], proportion) if hinge else None
    if point is not None:
        return point, "hinge"
    point = _gap_at_start(V, F, parts, path) if limb == "leg" and part[0] < 0 else None
    if point is None:
        ends = (own.start, -1)
        seen = _from_its_piece(window, V, parts, centres, part, ends) if limb == "leg" else window
        point = _gap(fractions, centres, radii, part, seen, proportion, V, parts, ends=ends)
    if point is not None:
        return point, "gap"
    point = _bend(fractions[own], centres[own], radii[own], part[own], window[own], proportion, V, parts)
    if point is not None:
        return point, "bend"
    if limb == "leg":
        point = _kneecap(fractions[own], centres[own], radii[own], part[own], fronts[own], backs[own])
    if point is not None:
        return point, "kneecap"
    return point_at(path, proportion), "proportion"


def _hinge(V, F, parts, path, fractions, centres, radii, part, proportion):
    """The middle of a hinge among the pieces the sections cut (the one nearest the
    proportion), or None: a piece of one side of the body, round in the plane the limb
    bends in (its extents along the path at its middle and toward the front within
    ROUND of each other: a ball, or a disc or an axle across the limb; the sections
    wind around the path in it, so it is centred on the limb), at most HINGE_THICK x as
    thick as the limb (its median section; a shoulder pad, a mech's foot is thicker),
    and joining the limb's pieces (_joins). A robot's knee can be an axle inside a disc,
    its leg path starting in them."""
    radii = radii[np.isfinite(radii)]
    if not len(radii):
        return None
    thick = HINGE_THICK * np.median(radii)
    found = []
    for p in sorted(set(part.tolist()) - {-1}):
        P = V[parts == p]
        if _both_sides(P) or not _joins(V, F, parts, path, fractions, part, np.flatnonzero(part == p)):
            continue
        middle = (P.min(axis=0) + P.max(axis=0)) / 2
        along = _along(path, fraction_of(path, middle))
        front = np.array([0.0, -1.0, 0.0]) + along[1] * along
        front = front / max(np.linalg.norm(front), 1e-12)
        extent = np.array([np.ptp(P @ along), np.ptp(P @ front)])
        if extent.max() <= ROUND * extent.min() and extent.max() <= 2 * thick:
            found.append(middle)
    if not found:
        return None
    return min(found, key=lambda m: abs(fraction_of(path, m) - proportion))


def _joins(V, F, parts, path, fractions, part, at) -> bool:
    """Whether the sections `at` (one piece's, in order, at `fractions` of the path) lie
    between two limb pieces (one side of the body each; the first can lie above the
    path's start, _above_start: a Kenney mini's leg, one block under its body, is no
    hinge), one of which follows on at the next section and reaches into the piece along
    the path: a hinge, which a segment is fitted into; a ragdoll's short, thick shin has
    gaps above and below (a foot beside its lower end reaches as high)."""
    piece = part[at[0]]
    before = [q for q in part[:at[0]] if q >= 0 and q != piece][-1:]
    after = [q for q in part[at[-1] + 1:] if q >= 0 and q != piece][:1]
    if not after or any(_both_sides(V[parts == q]) for q in before + after):
        return False
    if not before and _above_start(V, F, parts, path, piece) is None:
        return False
    P = V[parts == piece]
    for q, k, sign in ((before, at[0], -1), (after, at[-1], 1)):
        along = sign * _along(path, fractions[k])
        if q and part[k + sign] == q[0] and (V[parts == q[0]] @ along).min() < (P @ along).max():
            return True
    return False


def _along(path, f):
    """The unit direction of the path at the fraction f (over STEP either side)."""
    d = point_at(path, min(f + STEP, 1.0)) - point_at(path, max(f - STEP, 0.0))
    return d / max(np.linalg.norm(d), 1e-12)


def _from_its_piece(window, V, parts, centres, part, ends):
    """The window of sections reaching back to the start of the part its first section
    cuts, when a limb segment lies above that part across a gap, so that the gap is seen:
    a chibi ragdoll's shin can hold the whole window, its thigh a stub sunk into the
    pelvis, and the knee is the gap at the shin's top. A joint piece above (a ball, or
    along the limb at most BALL x as long: a mech's hip) is no thigh: the part then runs
    from the hip and holds the knee. `ends`: the sections whose line is the limb's. Legs
    only: an arm hangs free of the chest, and on a chibi mini whose arm is one piece a gap
    behind the window's start lay between its clothes, below the arm."""
    first = np.flatnonzero(window)[0]
    start = _run_start(part, first)
    above = part[:start][part[:start] >= 0]
    if part[first] < 0 or not len(above):
        return window
    axis = centres[ends[1]] - centres[ends[0]]
    above, piece = V[parts == above[-1]], V[parts == part[first]]
    if _round(above) or np.ptp(above @ axis) <= BALL * np.ptp(piece @ axis):
        return window
    widened = window.copy()
    widened[start:first] = True
    return widened


def _above_start(V, F, parts, path, other=None):
    """The first piece (one side of the body, no ball, not `other`) the path's first
    direction, turned back, meets within START_REACH of its length above its start, or
    None."""
    down = point_at(path, STEP) - path[0]
    if np.linalg.norm(down) < 1e-12:        # a path of no length
        return None
    down = down / np.linalg.norm(down)
    up = np.array([path[0], path[0] - START_REACH * path_length(path) * down])
    above = sections.along(V, F, parts, up, np.linspace(0.0, 1.0, 6)[1:])
    return next((s.part for s in above if _piece(V, parts, s) and s.part != other
                 and not _round(V[parts == s.part])), None)


def _gap_at_start(V, F, parts, path):
    """The middle of the gap a leg path starts in, between a piece above its start (on
    up the path's first direction, within START_REACH of its length) and the first one
    down it, or None: a chibi ragdoll's crotch can lie inside its knee's gap, its thigh
    a stub sunk into the pelvis above, and the path then holds the shin and foot only
    (the gap the sections see is the ankle's). Balls are no thigh."""
    thigh = _above_start(V, F, parts, path)
    if thigh is None:
        return None
    down = point_at(path, STEP) - path[0]
    down = down / np.linalg.norm(down)
    below = sections.along(V, F, parts, path, np.arange(STEP, 0.3, STEP))
    shin = next((s.part for s in below if _piece(V, parts, s)), None)
    if shin is None or thigh == shin:
        return None
    bottom, top = (V[parts == thigh] @ down).max(), (V[parts == shin] @ down).min()
    if top <= bottom:
        return None
    return path[0] + ((bottom + top) / 2 - path[0] @ down) * down


def _cut(V, F, parts, path, fractions):
    """(centres, radii, part, fronts, backs) of the path's sections at `fractions`; part -1
    where the section does not wind around the path (a thigh beside a hanging arm is no
    piece of it); fronts, backs: each loop's least and greatest y (nan without a loop)."""
    found = sections.along(V, F, parts, path, fractions)
    return (np.array([s.centre for s in found]).reshape(-1, 3), np.array([s.radius for s in found]),
            np.array([s.part if s.around else -1 for s in found], dtype=int),
            np.array([s.front for s in found]), np.array([s.back for s in found]))


def _kneecap(fractions, centres, radii, part, fronts, backs):
    """The section centre where the leg's front starts its steepest recession within
    KNEECAP_WINDOW (over KNEECAP_SPAN below: the kneecap's lower edge, the shin below it),
    if it recedes at least KNEECAP_DEPTH of the leg's radius there and less steeply
    anywhere within KNEECAP_REACH of it (a front that recedes more just outside the window
    is the thigh tapering from the hip or the shin toward the ankle), the leg below still
    KNEECAP_HEM as thick (a skirt's, a suit's or a shorts' hem steps in to the leg inside
    it), and its back coming forward by at most KNEECAP_BACK of the front's recession (a
    kneecap stands out in front only; a thigh tapering all round moves both); else None.
    Only sections that wind around the path count."""
    around = part >= 0
    k, reach = round(KNEECAP_SPAN / STEP), round(KNEECAP_REACH / STEP)
    drop = _change_below(np.where(around, fronts, np.nan), k)     # the front moves back (+y)
    back = _change_below(backs, k)
    lo, hi = KNEECAP_WINDOW
    window = (fractions >= lo - 1e-9) & (fractions <= hi + 1e-9) & np.isfinite(drop)
    leg = radii[around & (fractions > LEG_RADIUS[0]) & (fractions < LEG_RADIUS[1]) & np.isfinite(radii)]
    if not window.any() or not len(leg):
        return None
    i = np.flatnonzero(window)[np.argmax(drop[window])]
    if (drop[i] < KNEECAP_DEPTH * np.median(leg) or np.nanmax(drop[max(i - reach, 0): i + reach + 1]) > drop[i]
            or radii[i + k] < KNEECAP_HEM * radii[i] or back[i] < -KNEECAP_BACK * drop[i]):
        return None
    return centres[i]


def _change_below(values, k):
    """values[j + k] - values[j] for each j (nan for the last k)."""
    change = np.full(len(values), np.nan)
    change[:-k] = values[k:] - values[:-k]
    return change


def _bend(fractions, centres, radii, part, window, proportion, V, parts):
    """The split in the window where two lines fit the centres best, if they meet at
    BEND_DEGREES or more: the point between the two lines there."""
    ok = np.isfinite(radii)
    ok &= radii < 2 * np.nanmedian(radii)          # a section through the torso or the hand is no limb's
    fits = []
    for k in np.flatnonzero(window & ok):
        upper, lower = centres[: k + 1][ok[: k + 1]], centres[k:][ok[k:]]
        if len(upper) >= 3 and len(lower) >= 3:
            (_, da, ea), (_, db, eb) = _line(upper), _line(lower)
            fits.append((ea + eb, k, da, db))
    if len(fits) < 3:
        return None
    best = min(range(len(fits)), key=lambda i: fits[i][0])
    # a kink: two lines fit far better split there than at the window's ends (a curve,
    # a thigh converging to the knee or a bulky sleeve fits about as well anywhere)
    if fits[best][0] > KINK * min(fits[0][0], fits[-1][0]):
        return None
    _, k, da, db = fits[best]
    if da @ db < 0:
        db = -db
    angle = np.degrees(np.arccos(np.clip(da @ db, -1.0, 1.0)))
    return centres[k] if angle >= BEND_DEGREES else None


def segment_gap(V, F, parts, path, window, after_segment: bool = False):
    """The joint between two separate parts that meet end to end where the path goes from
    one to the other within `window` (a share of the path; a ragdoll's forearm and hand,
    its shin and foot: that gap is the joint; a wooden mannequin's ball between them: its
    middle), the part beyond at least SEGMENT_THICK as thick as the part before (a robot's
    finger beyond its hand is no hand; a part's thickness is its widest section along the
    path or half its breadth across the limb, whichever is more: a short hand beyond a
    wrist's ball can be cut by the path's last section only, at its tip), or None;
    `middle_joint`'s gap cue (`_gap`). The whole path is cut, so that a ball at the
    window's edge is seen with the parts on both sides of it; the limb's line is that of
    the window's own stretch. `after_segment`: the part before the gap follows a part
    other than the path's first (chest, upper arm, forearm: a hand too small to get bones
    leaves the path at the forearm's end, and the gap at the elbow is no wrist). Of
    several gaps in the window, the last one: the wrist and the ankle are a limb's last
    joints before the hand or foot (a thick chibi's elbow ball reaches into the wrist's
    window, and lay nearer its middle than the wrist's ball beyond a short forearm). With
    none there, where the window lies in the path's last piece (a chibi ragdoll's long foot
    holds the whole ankle window, or begins in it), the gap at that piece's start, the
    parts meeting end to end along the whole limb (along the foot's own line the shin
    overlaps it), the part before it on one side of the plane of symmetry (a shin; not the
    pelvis a leg box hangs from)."""
    lo, hi = window
    fractions = np.arange(0.0, 1.0 + 1e-9, STEP)
    centres, radii, part = _cut(V, F, parts, path, fractions)[:3]
    near = np.flatnonzero((fractions >= lo - 2 * STEP - 1e-9) & (fractions <= hi + 2 * STEP + 1e-9))
    axis = centres[near[-1]] - centres[near[0]]
    axis = axis / max(np.linalg.norm(axis), 1e-12)
    thick = {p: max(np.nanmax(radii[part == p]), _breadth(V[parts == p], axis) / 2)
             for p in set(part.tolist()) if p >= 0}

    def keep(k, j):
        return thick[part[j]] >= SEGMENT_THICK * thick[part[k]] and (
            not after_segment or _follows_a_segment(part[:k + 1]))
    inside = (fractions >= lo - 1e-9) & (fractions <= hi + 1e-9)
    found = _gap(fractions, centres, radii, part, inside, 1.0, V, parts, keep, (near[0], near[-1]))
    start = None if found is not None else _last_piece_start(inside, part)
    if start is None:
        return found
    # the gap into the last piece, its parts meeting end to end along the whole limb
    return _gap(fractions, centres, radii, part, np.arange(len(fractions)) == start, 1.0, V, parts,
                lambda k, j: keep(k, j) and not _both_sides(V[parts == part[k]]), (0, len(fractions) - 1))


def _last_piece_start(window, part):
    """The first section of the part the window's first cut section cuts, where that part
    is the last the path meets (the sections after it cut it or nothing); else None."""
    cut = np.flatnonzero(window & (part >= 0))
    if not len(cut):
        return None
    first = cut[0]
    if not np.isin(part[first:], (part[first], -1)).all():
        return None
    return _run_start(part, first)


def _run_start(part, k) -> int:
    """The first of the sections that cut the same part as section k, without a break, up
    to k (`part`: each section's part along the path; -1: none)."""
    start = k
    while start > 0 and part[start - 1] == part[k]:
        start -= 1
    return start


def _follows_a_segment(part) -> bool:
    """Whether the last section's part comes after a part other than the first one met
    (the parts of sections along a path from its start; -1: none)."""
    before = part[:-1][(part[:-1] >= 0) & (part[:-1] != part[-1])]
    return bool(len(before)) and bool((before != before[0]).any())


def wrist(V, F, parts, path, proportion: float):
    """(point (3,), cue name) of the wrist on the chest -> hand tip path: "narrowing" at the
    narrowest section of WRIST_WINDOW that has none narrower within FOREARM_BEFORE before it
    and a section HAND_WIDER as wide within HAND_AHEAD after it (the hand), moved on toward
    the hand while the sections stay within WRIST_PLATEAU of it (a forearm tapering evenly
    into the wrist has a stretch of near-equal sections; the hand begins at its end); else
    "proportion". A segmented arm's wrist is the gap between forearm and hand ("gap")."""
    gap = segment_gap(V, F, parts, path, WRIST_WINDOW, after_segment=True)
    if gap is not None:
        return gap, "gap"
    lo, hi = WRIST_WINDOW
    fractions = np.arange(lo - FOREARM_BEFORE, min(hi + HAND_AHEAD, 1.0) + 1e-9, STEP)
    found = sections.along(V, F, parts, path, fractions)
    radii = np.array([s.radius for s in found])
    best = None
    for k in np.flatnonzero((fractions >= lo - 1e-9) & (fractions <= hi + 1e-9) & np.isfinite(radii)):
        ahead = radii[(fractions > fractions[k] + 1e-9) & (fractions <= fractions[k] + HAND_AHEAD + 1e-9)]
        before = radii[(fractions < fractions[k] - 1e-9) & (fractions >= fractions[k] - FOREARM_BEFORE - 1e-9)]
        ahead, before = ahead[np.isfinite(ahead)], before[np.isfinite(before)]
        if (len(ahead) and len(before) and ahead.max() >= HAND_WIDER * radii[k] and before.min() >= radii[k]
                and (best is None or radii[k] < radii[best])):
            best = k
    if best is None:
        return point_at(path, proportion), "proportion"
    k = best
    while (k + 1 < len(fractions) and fractions[k + 1] <= hi + 1e-9 and np.isfinite(radii[k + 1])
           and radii[k + 1] <= (1 + WRIST_PLATEAU) * radii[best]):
        k += 1
    return found[k].centre, "narrowing"


def shoulder(V, F, parts, path, proportion: float):
    """(point (3,), cue name, fraction of the path) of the shoulder socket on the chest ->
    hand tip path. Where the arm leaves the torso (past the last section at least
    TORSO_WIDER as wide as the forearm, up to TORSO_SEARCH of the path) lies more than
    SOCKET_DEPTH forearm radii beyond the proportion, the proportion is inside the body,
    not at a socket (a round fruit's or a mascot's stick arms): the socket goes to where
    the arm leaves the torso ("torso edge"). Else the proportion (a human's socket lies
    about an arm's thickness inside the torso, within a few forearm radii of its edge)."""
    fractions = np.arange(0.0, FOREARM[1] + 1e-9, STEP)
    found = sections.along(V, F, parts, path, fractions)
    radii = np.array([s.radius for s in found])
    around = np.array([s.around for s in found])      # a thigh beside a lowered arm is no torso
    forearm = radii[(fractions >= FOREARM[0] - 1e-9) & np.isfinite(radii)]
    at, cue = proportion, "proportion"
    if len(forearm):
        forearm = np.median(forearm)
        torso = np.flatnonzero((radii > TORSO_WIDER * forearm) & around & (fractions < TORSO_SEARCH))
        edge = fractions[torso[-1]] + STEP if len(torso) else 0.0
        if (edge - proportion) * path_length(path) > SOCKET_DEPTH * forearm:
            at, cue = edge, "torso edge"
    return point_at(path, at), cue, float(at)


def head_piece(V, F, parts, path):
    """(the share of the chest -> head tip path at the base of a head modelled as a piece of
    its own that sits on the torso's piece, the head's piece) or None: the head's lowest
    point within HEAD_ON_TORSO of the height of the torso's highest (a toy's or a chibi's
    head, whose artists put the head joint there). The torso's piece is the one the path's
    first section winds around, the head's the nearest-fitting other piece the path's
    sections wind around (a helmet or hair reaching down over the torso does not fit)."""
    fractions = np.arange(0.0, 1.0 + 1e-9, 2 * STEP)
    found = sections.along(V, F, parts, path, fractions)
    if not found[0].around or found[0].part < 0:
        return None
    z = np.asarray(V)[:, 2]
    top = z[parts == found[0].part].max()
    gaps = {s.part: abs(z[parts == s.part].min() - top) for s in found[1:]
            if s.around and s.part >= 0 and s.part != found[0].part}
    fits = [p for p in gaps if gaps[p] <= HEAD_ON_TORSO * np.ptp(z)]
    if not fits:
        return None
    head = min(fits, key=gaps.get)
    at = _first_at_height(path, (z[parts == head].min() + top) / 2)
    return (at, head) if at is not None and 0 < at < 1 else None


def _first_at_height(path, height: float):
    """The first share of the path (in steps of 1/200) whose point lies at or above
    `height`, or None."""
    heights = np.array([point_at(path, f)[2] for f in np.linspace(0.0, 1.0, 201)])
    above = np.flatnonzero(heights >= height)
    return float(above[0] / 200) if len(above) else None


def head_out_of_body(V, F, parts, path, head: float):
    """(the share of the chest -> head tip path where a head modelled as a piece of its own,
    sunk into the body's pieces below it, leaves them, the body's piece it leaves) or None:
    the height of their highest point (a neck or a helmet rising out of a collar, whose
    artists put the head joint there; the piece: that collar, the head turning in its
    opening). `head`: the share where the head joint was found; the head's piece is the one
    the section there winds around, unless it ends below halfway from the joint to the
    highest top of the pieces the sections above wind around (a neck's tube under a head
    piece: none); the body's pieces those the sections below it wind around that reach
    lower than the head's piece (not hair or a hat's band). Only a body's top between the
    head piece's lowest point and the head joint counts: a helmet around the whole head
    (the body's piece reaches above the joint), a head piece above the torso's, or a head
    joint found below the body's top has none.
    docs/auto_skeleton.md#heads-sitting-on-the-torso"""
    fractions = np.arange(0.0, 1.0 + 1e-9, STEP)
    found = sections.along(V, F, parts, path, fractions)
    at = min(int(np.searchsorted(fractions, head - 1e-9)), len(fractions) - 1)
    if not found[at].around or found[at].part < 0:
        return None
    z, joint, piece = np.asarray(V)[:, 2], point_at(path, head)[2], found[at].part
    crown = max(z[parts == s.part].max() for s in found[at:] if s.around and s.part >= 0)
    if z[parts == piece].max() < (joint + crown) / 2:    # a neck's tube, the head on it
        return None
    lowest = z[parts == piece].min()
    body = {s.part for s in found[:at] if s.around and s.part >= 0 and s.part != piece
            and z[parts == s.part].min() < lowest}
    if not body:
        return None
    collar = max(body, key=lambda p: z[parts == p].max())
    top = z[parts == collar].max()
    if not lowest < top < joint:
        return None
    at = _first_at_height(path, top)
    return (at, collar) if at is not None and at < head else None


def limb_top(V, F, parts, socket, joint):
    """The socket moved along a segmented thigh's own axis (_own_axis, where it lies
    within OWN_AXIS_DEGREES of the line joint -> socket; else that line) level with the
    top of its piece, where that lies beyond the socket (a ragdoll's thigh reaching up
    into its pelvis piece above the crotch), or None; the piece as `_limb_piece` finds
    it. A socket close above a thick chibi's knee tilts the line joint -> socket, and
    the top along it lay behind the thigh; a leg and foot of one box (a Kenney mini's)
    is longest front to back, no thigh's axis. docs/auto_skeleton.md#segmented-mannequins"""
    found = _limb_piece(V, F, parts, socket, joint)
    if found is None:
        return None
    part, axis = found
    own = _own_axis(V[parts == part], axis)
    axis = own if own @ axis >= np.cos(np.radians(OWN_AXIS_DEGREES)) else axis
    socket = np.asarray(socket, float)
    beyond = (V[parts == part] @ axis).max() - socket @ axis
    return socket + beyond * axis if beyond > 0 else None


def limb_centre(V, F, parts, socket, joint):
    """The centre of a segmented limb's piece next to its socket (`_limb_piece`), or None:
    a point of the thigh's own axis where its knee lies at the gap below that piece (a
    thick chibi's thigh is a stub sunk in its pelvis, and the leg path from the gap bends
    inward to the pelvis at once). docs/auto_skeleton.md#segmented-mannequins"""
    found = _limb_piece(V, F, parts, socket, joint)
    return None if found is None else V[parts == found[0]].mean(axis=0)


def socket_ball(V, F, parts, socket, joint):
    """The centre of a ball sunk into the pelvis at the top of a segmented thigh (a wooden
    mannequin's hip; with the elbow as `joint`, into the chest at the upper arm's inner
    end: its shoulder), or None. The thigh's piece as `_limb_piece` finds it; the ball is
    the only separate round piece (extents within ROUND of each other) whose centre lies
    on the thigh's axis (the line through the thigh's piece along its own axis, else
    joint -> socket: _own_axis; within half the ball's radius) beyond that piece's end,
    its nearest point within the piece's radius of the end, no wider than the piece across
    the axis (a joint piece, not a pelvis), on one side of the plane of symmetry (a head
    above the thighs is no ball; a robot kitbashed of small boxes has several such pieces).
    docs/auto_skeleton.md#wooden-mannequins"""
    found = _limb_piece(V, F, parts, socket, joint)
    if found is None:
        return None
    part, axis = found
    thigh = V[parts == part]
    axis = _own_axis(thigh, axis)
    top = (thigh @ axis).max()
    lo, hi = component_boxes(V, parts, np.arange(parts.max() + 1))
    extent, centre, radius = hi - lo, (hi + lo) / 2, (hi - lo).max(axis=1) / 2
    breadth = 2 * off_axis(thigh - thigh.mean(axis=0), axis).max()
    balls = (_round_extent(extent) & (centre @ axis > top)
             & (lo[:, 0] * hi[:, 0] >= 0) & (2 * radius <= breadth)
             & (off_axis(centre - thigh.mean(axis=0), axis) <= radius / 2))
    balls[part] = False
    balls = [p for p in np.flatnonzero(balls) if abs((V[parts == p] @ axis).min() - top) <= breadth / 2]
    return centre[balls[0]] if len(balls) == 1 else None


def _own_axis(P, toward):
    """The direction of the limb through the points P (a limb's piece), turned the way of
    `toward`: the one it is longest in, or, for a disc (a chibi's thigh, shorter than it
    is wide), the one it is thinnest in; `toward` itself for a piece with no such
    direction (its extents within ROUND). A piece's own axis points at its ball where the
    socket found lies off it (a lowered arm's shoulder proportion, below its ball)."""
    _, _, vt = np.linalg.svd(P - P.mean(axis=0), full_matrices=False)
    lengths = np.ptp(P @ vt.T, axis=0)
    if lengths[0] > ROUND * lengths[1]:
        axis = vt[0]
    elif lengths[1] > ROUND * lengths[2]:
        axis = vt[2]
    else:
        return toward
    return axis if axis @ toward >= 0 else -axis


def _limb_piece(V, F, parts, socket, joint):
    """(part, unit axis joint -> socket) of a segmented limb's piece next to its socket:
    the part the section halfway from the socket to `joint` (the knee, the elbow) winds
    around, on one side of the plane of symmetry (trousers around both legs, a body: no
    piece); or None. Where the joint lies in a ball (a wooden mannequin's knee), the first
    such part other than that ball at PIECE_SEARCH shares of the way, on beyond the socket
    (a chibi's thigh can be shorter than the ball and sunk into the pelvis above the
    crotch); where it lies in the gap between two pieces (a ragdoll's knee), the first
    such part that is no ball (a joint piece: the hip's, past a thigh too thin to cut)."""
    socket, joint = np.asarray(socket, float), np.asarray(joint, float)
    length = np.linalg.norm(socket - joint)
    if length < 1e-12:
        return None
    reach = max(PIECE_SEARCH)
    line = np.array([joint, joint + reach * (socket - joint)])
    at_joint, *found = sections.along(V, F, parts, line, np.array([0.0, *PIECE_SEARCH]) / reach)
    ball = at_joint.part if at_joint.around and at_joint.part >= 0 and _round(V[parts == at_joint.part]) else None
    gap = not at_joint.around
    for limb in found if ball is not None or gap else found[:1]:
        if _piece(V, parts, limb) and limb.part != ball and not (gap and _round(V[parts == limb.part])):
            return limb.part, (socket - joint) / length
    return None


def _piece(V, parts, section) -> bool:
    """Whether the section winds around a limb's piece: a part on one side of the plane of
    symmetry (not a body, nor trousers around both legs)."""
    return section.around and section.part >= 0 and not _both_sides(V[parts == section.part])


def ankle(path, proportion: float):
    """The ankle where the hip -> toe tip path turns toward the toes, or None: the split
    where two lines (shin, foot) fit the path from ANKLE_SEARCH on best, if they meet at
    ANKLE_TURN or more and the proportion lies past the split, on the foot (a path cut
    short at the top, by a hip socket at a tunic's hem, slides the proportion toward the
    toes; a proportion above the turn, on the shin, stays)."""
    fractions = np.linspace(ANKLE_SEARCH, 1.0, 56)
    P = np.array([point_at(path, f) for f in fractions])
    fits = []
    for k in range(3, len(P) - 3):
        (_, da, ea), (_, db, eb) = _line(P[: k + 1]), _line(P[k:])
        fits.append((ea + eb, k, da, db))
    _, k, da, db = min(fits, key=lambda f: f[0])
    angle = np.degrees(np.arccos(np.clip(abs(da @ db), 0.0, 1.0)))
    return P[k] if angle >= ANKLE_TURN and fractions[k] < proportion else None


def foot(V, path):
    """(sole height, length) of the foot at the end of a hip -> toe tip path, or None
    (upright frame: +Z up, facing -Y): the welded surface within FOOT_REACH of the height
    sideways of the toe tip and SOLE_BAND above its lowest point; its length is its
    extent along Y, at least FOOT_MIN of the height (a peg leg's tip is no foot)."""
    V = np.asarray(V, dtype=np.float64)
    height = float(np.ptp(V[:, 2]))
    beside = np.abs(V[:, 0] - np.asarray(path)[-1, 0]) < FOOT_REACH * height
    if not beside.any():
        return None
    sole = V[beside, 2].min()
    ys = V[beside & (V[:, 2] < sole + SOLE_BAND * height), 1]
    return (float(sole), float(np.ptp(ys))) if len(ys) >= 3 and np.ptp(ys) >= FOOT_MIN * height else None


def ankle_over_sole(path, ankle, found, before: float):
    """The ankle moved down the hip -> toe tip path to ANKLE_OVER_SOLE of the foot's length
    above the sole (`found`: `foot`'s answer), or None where it lies no higher or without
    a foot. The anatomical ankle sits about a quarter of the foot's length above the sole
    (the studios' artists: 0.1-0.4); the leg's proportion lies higher on a short leg in a
    big boot. The lowered ankle must stay before `before` (the toe's share of the path);
    where the path stops above that height, it goes on down the shin's line."""
    if found is None:
        return None
    sole, length = found
    top = sole + ANKLE_OVER_SOLE * length
    if ankle[2] <= top:
        return None
    path = np.asarray(path, dtype=np.float64)
    at = fraction_of(path, ankle)
    fractions = np.linspace(at, before, 64)
    points = np.array([point_at(path, f) for f in fractions])
    low = np.flatnonzero(points[:, 2] <= top)
    if len(low):
        return points[low[0]]
    return _down_the_shin(path, ankle, at, top)


def _down_the_shin(path, ankle, at: float, top: float):
    """The ankle moved on down the shin's line (the path over SHIN_LINE of it above the
    ankle) to the height `top`, where the path stops above the foot (legs apart: the
    generic tree's leaf lies in the ankle); None where the shin does not slope down."""
    ankle = np.asarray(ankle, dtype=np.float64)
    d = ankle - point_at(path, max(0.0, at - SHIN_LINE))
    if not d[2] < -SHIN_DOWN * np.linalg.norm(d):       # level, rising, or no line at all
        return None
    return ankle + d * (top - ankle[2]) / d[2]


def ankle_back(ankle, found):
    """The ankle moved ANKLE_BACK of the foot's length toward the heel (+Y), or None
    without a foot (`found`: `foot`'s answer). The leg's path turns into the foot's middle
    below the ankle, so a point on it lies ahead of the joint, which sits over the back
    of the foot (every studio's artists' ankles: 0.6-1.3 % of the diagonal further back)."""
    if found is None:
        return None
    return np.asarray(ankle, dtype=np.float64) + [0.0, ANKLE_BACK * found[1], 0.0]


def _line(points):
    """(centroid, unit direction, sum of squared distances) of the best line."""
    c = points.mean(axis=0)
    _, s, vt = np.linalg.svd(points - c, full_matrices=False)
    return c, vt[0], float((s[1:] ** 2).sum())


def _gap(fractions, centres, radii, part, window, proportion, V, parts, keep=None, ends=(0, -1)):
    """Where the sections move from one mesh part to another within the window (the one
    nearest the proportion when several) and the two parts meet there end to end (a
    sleeve or a trouser leg over a modelled limb overlaps it: no joint), through a joint
    piece between them or not (_balls), and `keep(k, j)` if given: midway between the two
    sections. `ends`: the sections whose line is the limb's."""
    found = np.flatnonzero(part >= 0)            # the gap itself may cut nothing
    changes = [(k, j) for k, j in zip(found[:-1], found[1:])
               if part[k] != part[j] and _end_to_end(V, parts, centres, part, k, j, ends)]
    changes = [c for c in _balls(changes, V, parts, centres, part, ends)
               if (window[c[0]] or window[c[1]]) and (keep is None or keep(*c))]
    if not changes:
        return None
    k, j = min(changes, key=lambda kj: abs((fractions[kj[0]] + fractions[kj[1]]) / 2 - proportion))
    piece = _joint_piece(V, parts, part, centres, k, j)
    return (centres[k] + centres[j]) / 2 if piece is None else piece


def _joint_piece(V, parts, part, centres, k, j):
    """The middle of a joint piece between the sections k and j of a change of part: one
    the sections between them cut (_balls), else a separate piece that fits in the gap
    (its middle within half the gap of the gap's middle, no longer than the gap: a ball at
    an ankle, where the limb turns and its sections do not wind around the ball); None
    when there is none."""
    cut = sorted(set(part[k + 1:j].tolist()) - {-1, int(part[k]), int(part[j])})
    lo, hi = component_boxes(V, parts, np.arange(parts.max() + 1))
    middles = (lo + hi) / 2
    if cut:
        return middles[cut[0]]
    middle, half = (centres[k] + centres[j]) / 2, np.linalg.norm(centres[j] - centres[k]) / 2
    fits = (np.linalg.norm(middles - middle, axis=1) <= half) & ((hi - lo).max(axis=1) <= 2 * half)
    fits[[part[k], part[j]]] = False
    return middles[np.flatnonzero(fits)[0]] if fits.any() else None


def _balls(changes, V, parts, centres, part, ends=(0, -1)):
    """The changes of part along a limb (pairs of sections), those into and out of a joint
    piece made one: a part between two limb segments, along the limb at most BALL x as
    long as the one before it (a wooden mannequin's ball, a mech's hinge), or a ball no
    wider than either segment (_round_joint: a chibi's thigh can be shorter than its
    knee's ball), is the joint, at its middle (the sections' pair spans it). The segment
    after it can be as short: a hand shortened by its wrist's ball, a foot, which runs
    across the leg's line."""
    if len(changes) < 2:
        return changes
    axis = centres[ends[1]] - centres[ends[0]]
    axis = axis / max(np.linalg.norm(axis), 1e-12)
    length = {p: np.ptp(V[parts == p] @ axis) for p in set(part.tolist()) if p >= 0}
    out, skip = [], False
    for (k, j), after in zip(changes, changes[1:] + [None]):
        if skip:
            skip = False
            continue
        if (after is not None and part[j] == part[after[0]]
                and (length[part[j]] <= BALL * length[part[k]]
                     or _round_joint(V, parts, part[j], (part[k], part[after[1]]), axis))):
            out.append((k, after[1]))
            skip = True
        else:
            out.append((k, j))
    return out


def _round_joint(V, parts, piece, segments, axis) -> bool:
    """Whether `piece` is a ball (its extents within ROUND of each other) no wider than
    either of the two `segments` it joins is across the limb: a ball joint next to a
    segment shorter than the ball (a chibi mannequin's thigh, a disc under its hip). A
    segment's width is its narrowest breadth across the limb (_breadth): a foot reaches
    far off the leg's line, but a ragdoll chibi's short, thick shin, round too, is wider
    than it."""
    ball = V[parts == piece]
    if not _round(ball):
        return False
    across = np.ptp(ball, axis=0).max()
    return all(across <= _breadth(V[parts == segment], axis) for segment in segments)


def _breadth(P, axis) -> float:
    """The narrowest extent of the points P across the unit `axis`: on the plane normal
    to it, along their least spread direction (a foot across a leg: its width, not its
    length; a forearm tilted from the limb's line: its thickness, not its slant)."""
    Q = P - P.mean(axis=0)
    Q = Q - np.outer(Q @ axis, axis)
    directions = np.linalg.eigh(Q.T @ Q)[1]    # ascending: the axis (no spread left), least, most
    return float(np.ptp(Q @ directions[:, 1]))


def _round(P) -> bool:
    """Whether the points P make a ball: their extents within ROUND of each other."""
    return bool(_round_extent(np.ptp(P, axis=0)))


def _round_extent(extent):
    """Whether each box extent (..., 3) is a ball's: its sides within ROUND of each other."""
    return extent.max(axis=-1) <= ROUND * extent.min(axis=-1)


def _both_sides(P) -> bool:
    """Whether the points P reach across the plane of symmetry x = 0 (a body, no limb)."""
    return bool(np.ptp(np.sign(P[:, 0])) > 1)


def _end_to_end(V, parts, centres, part, k, j, ends=(0, -1)) -> bool:
    """Whether the part of section k ends and the part of section j begins within OVERLAP
    of the limb's length of the change, along the limb, each on one side of the plane of
    symmetry (trousers around both legs, a body: no limb segments). The limb runs from
    section `ends[0]` to `ends[1]`."""
    axis = centres[ends[1]] - centres[ends[0]]
    length = max(np.linalg.norm(axis), 1e-12)
    axis = axis / length
    at = (centres[k] + centres[j]) / 2 @ axis
    pieces = V[parts == part[k]], V[parts == part[j]]
    if any(_both_sides(p) for p in pieces):
        return False
    upper, lower = pieces[0] @ axis, pieces[1] @ axis
    return bool(upper.max() < at + OVERLAP * length and lower.min() > at - OVERLAP * length)
