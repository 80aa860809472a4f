# SPDX-License-Identifier: GPL-3.0-or-later
"""Knees, elbows and wrists from what the limb shows (docs/auto_skeleton.md#landmark-cues),
on generated tubes: a bent limb, a segmented one (two separate parts end to end), a
straight one, a trouser leg over a modelled leg (no joint at its hem), a forearm narrowing
to the wrist before a wider hand."""
import numpy as np
import pytest

from bonesmith.core.mesh import vertex_components
from bonesmith.core.rig import landmark_cues, sections

from conftest import merge, tube


def line(a, b, n=20):
    return np.linspace(a, b, n)


def cue(V, F, path, limb="leg", proportion=0.37):
    _, parts = vertex_components(len(V), F)
    return landmark_cues.middle_joint(V, F, parts, np.asarray(path, dtype=np.float64), limb, proportion)


KNEE = np.array([0.5, 0.0, 0.55])       # a leg from the hip (top) down to the toe tip


def test_a_bent_leg_bends_at_its_knee():
    hip, ankle = np.array([0.5, 0.0, 1.0]), np.array([0.5, -0.25, 0.12])
    path = np.vstack([line(hip, KNEE), line(KNEE, ankle)[1:]])
    point, how = cue(*tube(path), path)
    assert how == "bend"
    assert np.linalg.norm(point - KNEE) < 0.04


def test_a_segmented_leg_bends_at_the_gap_between_its_parts():
    hip, ankle = np.array([0.5, 0.0, 1.0]), np.array([0.5, 0.0, 0.05])
    gap = 0.01
    thigh = tube(line(hip, KNEE + [0, 0, gap]))
    shin = tube(line(KNEE - [0, 0, gap], ankle), radius=0.035)
    point, how = cue(*merge(thigh, shin), line(hip, ankle, 40))
    assert how == "gap"
    assert np.linalg.norm(point - KNEE) < 0.03


def test_a_leg_path_starting_in_the_knees_gap_has_its_knee_there():
    """A thick chibi ragdoll whose crotch lies inside its knee's gap: its thigh, a stub
    sunk into the pelvis, lies above the leg path's start, and the path holds only shin
    and foot. The gap the sections see is the ankle's, and the knee went there; the
    knee is the gap the path starts in, below the piece above its start."""
    knee = np.array([0.1, 0.0, 0.275])
    thigh = tube(line([0.1, 0, 0.36], [0.1, 0, 0.31]), 0.09)
    shin = tube(line([0.1, 0, 0.24], [0.1, 0, 0.12]), 0.07)
    foot = tube(line([0.1, -0.03, 0.07], [0.1, -0.2, 0.04]), 0.045)
    path = np.vstack([line([0.1, 0, 0.295], [0.1, 0, 0.08]), line([0.1, 0, 0.08], [0.1, -0.2, 0.04])[1:]])
    point, how = cue(*merge(thigh, shin, foot), path)
    assert how == "gap" and np.linalg.norm(point - knee) < 0.005, (how, point)


@pytest.mark.parametrize("axle", [True, False])
def test_a_robots_knee_is_the_middle_of_its_hinge(axle):
    """A robot's knee modelled as the joint: an axle across the leg (or a ball) that the
    thigh and the shin are fitted into, the leg path starting in it (the thigh above
    the path's start, as GDQuest's robot's). The pieces overlap, so there is no gap,
    and the knee went to its proportion; it is the hinge's middle."""
    knee = np.array([0.1, 0.0, 0.55])
    ball = [0.03, 0.05, 0.06, 0.06, 0.05, 0.03]
    hinge = (tube(line(knee - [0.05, 0, 0], knee + [0.05, 0, 0], 4), 0.06) if axle
             else tube(line(knee + [0, 0, 0.06], knee - [0, 0, 0.06], 6), ball))
    thigh = tube(line([0.1, 0, 1.0], [0.1, 0, 0.6]), 0.04)
    shin = tube(line([0.1, 0, 0.5], [0.1, 0, 0.1]), 0.035)
    foot = tube(line([0.1, -0.02, 0.06], [0.1, -0.2, 0.03]), 0.035)
    path = np.vstack([line([0.1, 0, 0.6], [0.1, 0, 0.07]), line([0.1, 0, 0.07], [0.1, -0.2, 0.03])[1:]])
    point, how = cue(*merge(thigh, hinge, shin, foot), path, proportion=0.15)
    assert how == "hinge" and np.linalg.norm(point - knee) < 0.005, (how, point)


def test_a_straight_even_leg_keeps_the_proportion():
    hip, ankle = np.array([0.5, 0.0, 1.0]), np.array([0.5, 0.0, 0.05])
    path = line(hip, ankle, 40)
    point, how = cue(*tube(path), path)
    assert how == "proportion"
    assert np.allclose(point, hip + 0.37 * (ankle - hip))


def straight_leg(heights=(1.0, 0.0), radii=(0.04, 0.04)):
    """A straight leg from the hip (z 1.0) down to the ankle (z 0.05), facing -y: a tube
    around a 96-point path whose radius at each height follows `radii` at `heights`
    (descending)."""
    hip, ankle = np.array([0.5, 0.0, 1.0]), np.array([0.5, 0.0, 0.05])
    path = line(hip, ankle, 96)
    V, F = tube(path, radius=np.interp(-path[:, 2], -np.asarray(heights), radii), sides=16)
    return V, F, path


def kneecap_leg(edge_z, forward=0.02):
    """A straight leg (radius 0.04) whose front stands `forward` out over a kneecap from
    z edge_z to edge_z + 0.08, receding back to the shin over 0.05 below its lower edge
    and to the thigh over 0.05 above."""
    V, F, path = straight_leg()
    bump = forward * np.interp(V[:, 2], [edge_z - 0.05, edge_z, edge_z + 0.08, edge_z + 0.13], [0, 1, 1, 0])
    V[:, 1] -= bump * np.clip(-V[:, 1] / 0.04, 0.0, 1.0)        # the front half stands out
    return V, F, path


def test_a_straight_leg_bends_below_its_kneecap():
    """The leg's front recedes most steeply below the kneecap (to the shin): the knee is
    at the top of that recession (z 0.62, 0.4 of the path), not at the proportion (0.37:
    z 0.65)."""
    V, F, path = kneecap_leg(0.62)
    point, how = cue(V, F, path)
    assert how == "kneecap"
    assert abs(point[2] - 0.62) < 0.015


def test_a_faint_kneecap_leaves_the_knee_at_its_proportion():
    """A front that stands out by a tenth of the leg's radius is no kneecap to go by."""
    V, F, path = kneecap_leg(0.62, forward=0.004)
    point, how = cue(V, F, path)
    assert how == "proportion"


def test_a_front_receding_more_steeply_above_the_window_is_no_kneecap():
    """A thigh whose front recedes steeply just below the hip (here down to z 0.76, 0.25
    of the path) and more gently on into the window: the steepest recession lies above
    the knee's window, and the window's top edge is only the end of it."""
    V, F, path = kneecap_leg(0.76, forward=0.03)
    point, how = cue(V, F, path)
    assert how == "proportion"


def test_a_dress_hem_is_no_kneecap():
    """A dress down to z 0.6 (0.42 of the path), the leg below it far thinner and set
    toward the back: the front steps back there as below a kneecap and the back hardly
    moves, but the section below is little more than half as thick."""
    V, F, path = straight_leg((1.0, 0.61, 0.59, 0.0), (0.06, 0.06, 0.035, 0.035))
    V[V[:, 2] < 0.6, 1] += 0.02
    point, how = cue(V, F, path)
    assert how == "proportion"


def test_a_thigh_tapering_all_round_is_no_kneecap():
    """A thick thigh narrowing evenly into the knee (radius 0.07 at z 0.75 to 0.04 at
    z 0.62): the front recedes as steeply as below a kneecap, but the back comes forward
    as far."""
    V, F, path = straight_leg((1.0, 0.75, 0.62, 0.0), (0.07, 0.07, 0.04, 0.04))
    point, how = cue(V, F, path)
    assert how == "proportion"


def test_a_trouser_hem_over_a_modelled_leg_is_no_joint():
    """Trousers (one part around both legs, down to mid-thigh) over a leg that goes on
    inside them: the section changes part at the hem, but the parts overlap."""
    hip, ankle = np.array([0.5, 0.0, 1.0]), np.array([0.5, 0.0, 0.05])
    leg = tube(line(hip, ankle, 40))
    hem = np.array([0.5, 0.0, 0.7])
    trousers = merge(tube(line(hip + [0, 0, 0.05], hem), radius=0.06),
                      tube(line(hip * [-1, 1, 1] + [0, 0, 0.05], hem * [-1, 1, 1]), radius=0.06),
                      tube(line([-0.55, 0, 1.02], [0.55, 0, 1.02]), radius=0.06))
    V, F = merge(leg, trousers)
    point, how = cue(V, F, line(hip, ankle, 40))
    assert how == "proportion"


def test_a_section_measures_the_tube_around_the_path():
    path = line([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    V, F = tube(path, radius=0.05, sides=24)
    _, parts = vertex_components(len(V), F)
    (s,) = sections.along(V, F, parts, path, [0.5])
    assert s.radius == pytest.approx(0.05, rel=0.02)
    assert np.allclose(s.centre, [0.0, 0.0, 0.5], atol=1e-3)
    assert s.part == 0


@pytest.mark.parametrize("hip_z, turn", [(0.6, True), (1.5, False)])
def test_the_ankle_is_where_the_leg_turns_to_the_toes_when_the_proportion_falls_on_the_foot(hip_z, turn):
    """A leg's hip -> toe tip path: down the shin, then forward along the foot. Cut short at
    the top (a hip socket at a tunic's hem), the proportion lands on the foot: the ankle
    goes to the turn. A proportion above the turn, on the shin, stays; a leg without a
    foot has no turn."""
    path = np.array([[0.1, 0.0, hip_z], [0.1, 0.0, 0.05], [0.1, -0.25, 0.05]])
    found = landmark_cues.ankle(path, 0.80)
    if turn:
        np.testing.assert_allclose(found, [0.1, 0.0, 0.05], atol=0.02)
    else:
        assert found is None
    assert landmark_cues.ankle(np.array([[0.1, 0.0, hip_z], [0.1, 0.0, 0.0]]), 0.80) is None


def boot():
    """(vertices, hip -> toe tip path) of a short leg in a boot 0.4 long (heel at y 0.1)."""
    path = np.array([[0.1, 0.0, 0.5], [0.1, 0.0, 0.1], [0.1, -0.3, 0.1]])
    V, _ = merge(tube(line(path[0], path[1])), tube(line([0.1, 0.1, 0.1], [0.1, -0.3, 0.1]), radius=0.1))
    return V, path


def test_an_ankle_high_on_a_short_leg_in_a_big_boot_goes_down_to_the_foots_height():
    """The ankle is at most a third of the foot's length above the sole (ANKLE_OVER_SOLE),
    down the leg's own path; an ankle already that low stays."""
    V, path = boot()
    top = landmark_cues.ANKLE_OVER_SOLE * 0.4
    found = landmark_cues.ankle_over_sole(path, np.array([0.1, 0.0, 0.35]), landmark_cues.foot(V, path), 0.93)
    np.testing.assert_allclose(found, [0.1, 0.0, top], atol=0.012)
    assert found[2] <= top
    assert landmark_cues.ankle_over_sole(path, np.array([0.1, 0.0, 0.12]), landmark_cues.foot(V, path), 0.93) is None


def test_an_ankle_on_a_leg_set_apart_whose_path_stops_above_the_foot_goes_on_down_the_shin():
    """Legs apart, the generic tree's leaf can lie in the ankle: the path never comes down
    to the foot's height, so the ankle follows the shin's line there (it stayed at its
    proportion, a third of the leg too high); a path that does not slope down stays, and
    a leg without a foot has nothing to go down to."""
    hip, leaf = np.array([0.1, 0.0, 0.9]), np.array([0.25, 0.0, 0.3])
    path = line(hip, leaf)
    V, _ = merge(tube(path), tube(line([0.27, 0.1, 0.1], [0.27, -0.3, 0.1]), radius=0.1))
    found = landmark_cues.foot(V, path)
    np.testing.assert_allclose(found[1], 0.4, atol=0.01)
    top = found[0] + landmark_cues.ANKLE_OVER_SOLE * found[1]
    proportion = hip + 0.8 * (leaf - hip)
    lowered = landmark_cues.ankle_over_sole(path, proportion, found, 0.93)
    assert lowered is not None
    np.testing.assert_allclose(lowered, [0.1 + 0.15 * (0.9 - top) / 0.6, 0.0, top], atol=1e-6)
    flat = line(np.array([0.1, 0.0, 0.9]), np.array([0.7, 0.0, 0.9]))
    assert landmark_cues.ankle_over_sole(flat, flat[15], found, 0.93) is None
    stilt, _ = tube(path, radius=0.004)          # a mech's peg leg: its tip is no foot to go down to
    assert landmark_cues.foot(stilt, path) is None


def test_the_ankle_sits_a_little_behind_the_legs_path_toward_the_heel():
    """The path turns into the foot's middle below the ankle: the joint goes ANKLE_BACK of
    the foot's length toward the heel (+Y for a body facing -Y); no foot, no move."""
    V, path = boot()
    moved = landmark_cues.ankle_back(np.array([0.1, 0.0, 0.14]), landmark_cues.foot(V, path))
    np.testing.assert_allclose(moved, [0.1, landmark_cues.ANKLE_BACK * 0.4, 0.14], atol=1e-6)
    assert landmark_cues.ankle_back(np.array([0.1, 0.0, 0.14]), landmark_cues.foot(V + [1.0, 0.0, 0.0], path)) is None


CHEST, HAND_TIP = np.array([0.0, 0.0, 1.4]), np.array([0.7, 0.0, 1.4])


def arm(radius_at):
    """An arm from the chest out to the hand tip along +x: a tube whose radius at each
    share f of the path is radius_at(f)."""
    f = np.linspace(0.0, 1.0, 101)
    path = CHEST + f[:, None] * (HAND_TIP - CHEST)
    V, F = tube(path, radius=radius_at(f), sides=16)
    _, parts = vertex_components(len(V), F)
    return landmark_cues.wrist(V, F, parts, path, 0.78)


def test_the_wrist_is_the_narrowest_section_before_a_wider_hand():
    """A forearm tapering to 0.72 of the path, then a hand twice as wide: the wrist is
    at the narrowing, not at the proportion (0.78)."""
    point, how = arm(lambda f: np.interp(f, [0.0, 0.72, 0.8, 0.95, 1.0], [0.05, 0.02, 0.04, 0.04, 0.01]))
    assert how == "narrowing"
    assert abs(point[0] - 0.72 * 0.7) < 0.01


def test_the_wrist_is_where_an_even_narrow_stretch_meets_the_hand():
    """The forearm narrows at 0.68 and stays as thin to 0.76 (a low-poly forearm ending
    in an even wrist): the wrist is the hand's end of that stretch."""
    point, how = arm(lambda f: np.interp(f, [0.0, 0.68, 0.76, 0.82, 1.0], [0.05, 0.02, 0.0205, 0.04, 0.01]))
    assert how == "narrowing"
    assert abs(point[0] - 0.76 * 0.7) < 0.01


def test_an_arm_without_a_wider_hand_keeps_the_wrists_proportion():
    point, how = arm(lambda f: np.interp(f, [0.0, 1.0], [0.05, 0.02]))
    assert how == "proportion"
    assert np.allclose(point, CHEST + 0.78 * (HAND_TIP - CHEST))


@pytest.mark.parametrize("pieces, cue_name", [("torso upper forearm hand", "gap"), ("torso upper forearm glove", "narrowing"),
                                               ("torso upper forearm", "proportion")])
def test_a_segmented_arms_wrist_is_the_gap_before_its_hand(pieces, cue_name):
    """Torso, upper arm, forearm and hand of separate parts, each meeting the next end to
    end (a ragdoll's): the wrist is the gap before the hand (0.74 of the path). A glove
    reaching back over the forearm is no segment's end, and where the hand got no part
    of the path (too small for bones) the gap at the elbow is no wrist."""
    path = CHEST + np.linspace(0.0, 1.0, 101)[:, None] * (HAND_TIP - CHEST)
    x = lambda f: CHEST + f * (HAND_TIP - CHEST)  # noqa: E731
    shapes = {"torso": tube(line(CHEST - [0, 0, 0.3], CHEST + [0, 0, 0.1]), radius=0.1, sides=16),
              "upper": tube(line(x(0.16), x(0.45)), radius=0.04, sides=16),
              "forearm": tube(line(x(0.48), x(0.73), 40), radius=np.linspace(0.04, 0.02, 40), sides=16),
              "hand": tube(line(x(0.75), HAND_TIP), radius=0.035, sides=16),
              "glove": tube(line(x(0.68), HAND_TIP), radius=0.035, sides=16)}
    V, F = merge(*(shapes[k] for k in pieces.split()))
    if pieces.endswith("forearm"):
        path = CHEST + np.linspace(0.0, 0.73, 74)[:, None] * (HAND_TIP - CHEST)   # the path ends in the forearm
    _, parts = vertex_components(len(V), F)
    point, how = landmark_cues.wrist(V, F, parts, path, 0.78)
    assert how == cue_name
    if cue_name == "gap":
        assert abs(point[0] - x(0.74)[0]) < 0.015


@pytest.mark.parametrize("hand_from", [0.89, 0.93])
def test_a_wooden_mannequins_wrist_is_its_ball_between_forearm_and_hand(hand_from):
    """A wooden mannequin's arm: a ball at the elbow and at the wrist, each thinner than
    the pieces on either side. The wrist is the wrist ball's middle (0.84 of the path),
    though the ball is narrower than half the forearm and the hand lies past the wrist's
    window, and also where the hand is hardly longer than the ball (shortened by it); the
    elbow ball's end at the window's other edge is no wrist."""
    x = lambda f: CHEST + f * (HAND_TIP - CHEST)  # noqa: E731
    V, F = merge(tube(line(CHEST - [0, 0, 0.3], CHEST + [0, 0, 0.1]), radius=0.1, sides=16),
                 tube(line(x(0.16), x(0.56)), radius=0.04, sides=16), ball(x(0.60), 0.014),
                 tube(line(x(0.64), x(0.80)), radius=0.04, sides=16), ball(x(0.84), 0.014),
                 tube(line(x(hand_from), HAND_TIP), radius=0.035, sides=16))
    path = CHEST + np.linspace(0.0, 1.0, 101)[:, None] * (HAND_TIP - CHEST)
    point, how = landmark_cues.wrist(V, F, vertex_components(len(V), F)[1], path, 0.78)
    assert how == "gap"
    assert np.linalg.norm(point - x(0.84)) < 0.005, point


def ball(centre, radius):
    """A round closed piece (V, F) about `centre`."""
    z = np.linspace(-0.95, 0.95, 11) * radius
    return tube(np.asarray(centre) + z[:, None] * [0.0, 0.0, 1.0], np.sqrt(radius ** 2 - z ** 2))


def socket_ball(*pieces, socket=(0.1, 0.0, 0.85), knee=(0.1, 0.0, 0.5)):
    V, F = merge(*pieces)
    return landmark_cues.socket_ball(V, F, vertex_components(len(V), F)[1], np.array(socket), np.array(knee))


def test_a_ball_sunk_at_the_top_of_a_segmented_thigh_is_its_hip_socket():
    """A wooden mannequin's hip: a ball above the thigh's piece, on its axis, narrower than
    it; a round head above a body crossing the plane of symmetry (a toon's trousers
    around both legs, its head straight above the socket's line) is none."""
    thigh = tube(line([0.1, 0, 0.9], [0.1, 0, 0.55]), 0.06)
    found = socket_ball(thigh, ball([0.1, 0, 0.95], 0.035))
    assert found is not None and np.allclose(found, [0.1, 0, 0.95], atol=1e-3)
    assert socket_ball(thigh, ball([0.1, 0, 0.95], 0.08)) is None                 # wider than the thigh
    assert socket_ball(thigh, ball([0.1, 0, 1.05], 0.035)) is None                # too far above its end
    trousers = tube(line([0.0, 0, 0.9], [0.0, 0, 0.4]), 0.2)
    assert socket_ball(trousers, ball([0.0, 0, 1.0], 0.09), socket=(0.0, 0, 0.85), knee=(0.0, 0, 0.5)) is None


@pytest.mark.parametrize("thigh, knee", [
    ((line([0.1, 0, 0.9], [0.1, 0, 0.55]), 0.06), (0.1, 0, 0.5)),      # a thigh, longer than wide
    ((line([0.1, 0, 0.905], [0.1, 0, 0.86]), 0.09), (0.1, 0, 0.85)),  # a chibi's, a disc wider than long
])
def test_a_hip_ball_lies_on_the_thigh_pieces_own_axis_when_the_socket_found_is_off_it(thigh, knee):
    """A socket found off the thigh (a leg's axis drawn inward, a lowered arm's shoulder
    proportion below its ball) tilts the line from the joint through it away from the
    ball; the piece's own axis (along a long piece, across a disc) still points at it."""
    found = socket_ball(tube(*thigh), ball([0.1, 0, 0.95], 0.035), socket=(0.05, 0.0, 0.88), knee=knee)
    assert found is not None and np.allclose(found, [0.1, 0, 0.95], atol=1e-3), found


@pytest.mark.parametrize("socket", [(0.1, 0.03, 0.875), (0.08, 0.02, 0.87)])
def test_a_thigh_stub_past_the_knees_gap_tops_the_hip_along_its_own_axis(socket):
    """A thick chibi ragdoll's thigh: a disc sunk in the pelvis above the knee's gap, the
    socket found (the crotch) close above the knee and behind it. The section halfway
    from the knee lies in the gap, so the thigh is looked for on past it (the knee lies
    in a gap: no piece there); the hip goes to the disc's top along the disc's own axis
    (straight up), not along the line knee -> socket, which leans back 40 degrees."""
    thigh = tube(line([0.1, 0, 0.905], [0.1, 0, 0.86]), 0.09)
    shin = tube(line([0.1, 0, 0.82], [0.1, 0, 0.5]), 0.07)
    V, F = merge(thigh, shin)
    found = landmark_cues.limb_top(V, F, vertex_components(len(V), F)[1], np.array(socket), np.array([0.1, 0, 0.84]))
    assert found is not None and np.allclose(found, [socket[0], socket[1], 0.905], atol=1e-3), found


def test_an_ankles_ball_between_shin_and_foot_is_the_ankle():
    """A wooden mannequin's ankle: a ball between the shin's piece and the foot's. The
    path turns there, so its sections do not wind around the ball (part -1) and the gap
    cue put the joint midway between the last shin and first foot sections, in front of
    and above the ball; the piece that fits in the gap is the joint."""
    ankle, toe = np.array([0.1, 0.0, 0.08]), np.array([0.1, -0.25, 0.03])
    shin = tube(line([0.1, 0, 0.5], [0.1, 0, 0.13]), 0.04)
    foot = tube(line([0.1, -0.06, 0.065], toe), 0.03)
    V, F = merge(shin, ball(ankle, 0.025), foot)
    path = np.vstack([line([0.1, 0, 1.0], ankle), line(ankle, toe)[1:]])
    found = landmark_cues.segment_gap(V, F, vertex_components(len(V), F)[1], path, landmark_cues.ANKLE_WINDOW)
    assert found is not None and np.linalg.norm(found - ankle) < 0.005, found
