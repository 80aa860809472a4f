# SPDX-License-Identifier: GPL-3.0-or-later
"""Joining a character's separate parts (docs/auto_skeleton.md#parts), on hand-made node
graphs: a separate piece hangs from the part whose surface it meets."""
import numpy as np

from bonesmith.core.rig.parts import join_parts


def chain(x, tops_and_bottoms, nodes, radius=0.05):
    """A vertical limb piece at x: its nodes, its edges (local) and per node the surface
    points merged into it (a ring of 8 points every 0.01 of height, the piece's surface
    from `top` down to `bottom`, each point owned by the nearest node)."""
    top, bottom = tops_and_bottoms
    X = np.array([[x, 0.0, z] for z in nodes])
    heights = np.arange(bottom, top + 1e-9, 0.01)
    angles = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    points = np.array([[x + radius * np.cos(a), radius * np.sin(a), z] for z in heights for a in angles])
    owner = np.abs(points[:, 2][:, None] - X[:, 2][None]).argmin(axis=1)
    return X, [(k, k + 1) for k in range(len(nodes) - 1)], [points[owner == k] for k in range(len(nodes))]


def _join(pieces, mass, extent=None, **options):
    """join_parts on `chain` pieces joined in the order of `mass`; (kept, links, node
    offset of each piece)."""
    X, edges, points, weight, size, offsets = [], [], [], [], [], []
    for k, ((x, e, p), m) in enumerate(zip(pieces, mass)):
        offsets.append(sum(len(a) for a in X))
        X.append(x)
        edges += [(a + offsets[-1], b + offsets[-1]) for a, b in e]
        points += p
        weight += [m] * len(x)
        size += [1.0 if extent is None else extent[k]] * len(x)
    X = np.vstack(X)
    kept, links = join_parts(X, np.array(edges), np.full(len(X), 0.05), np.array(weight), np.array(size), points,
                             min_part=0.08, min_branch=0.05, **options)
    return set(kept.tolist()), links, offsets


def test_a_shin_hangs_from_its_own_thigh_across_the_knee_not_from_the_nearer_node_of_the_other_shin():
    """The left thigh's last node lies 0.17 above the left shin's first, the right shin's
    node 0.16 beside it; the surfaces say where the shin meets the body: 0.024 from its
    thigh, 0.06 from the other shin."""
    pieces = [chain(0.0, (1.0, 0.8), [0.98, 0.9, 0.82], 0.12),                 # pelvis (the body)
              chain(-0.1, (0.788, 0.512), [0.75, 0.65, 0.55]),               # right thigh
              chain(0.1, (0.788, 0.512), [0.75, 0.62]),                      # left thigh, nodes end higher
              chain(-0.08, (0.488, 0.1), [0.45, 0.3, 0.15]),                 # right shin
              chain(0.08, (0.488, 0.1), [0.45, 0.3, 0.15])]                  # left shin
    kept, links, _ = _join(pieces, [10.0, 3.0, 3.0, 2.0, 1.9])              # joined in this order
    assert len(kept) == 14
    left_shin, left_thigh = {11, 12, 13}, {6, 7}
    hang = [(a, b) for a, b in links if (a in left_shin) != (b in left_shin)]
    assert len(hang) == 1 and (set(hang[0]) - left_shin) <= left_thigh, hang     # before: the right shin's node


def test_a_small_piece_beyond_a_limbs_end_ends_the_limb_only_where_its_ends_lead_away():
    """A piece too small for bones (extent under min_part) beyond the end of a limb, in
    line with it, ends the limb in the tree the humanoid test reads (end_pieces: a wooden
    mannequin's hand past its wrist's ball); beside the limb (an eye, a button) or before
    its inner end it gets none, and without end_pieces none does."""
    pieces = [chain(0.0, (1.0, 0.8), [0.98, 0.9, 0.82], 0.12),          # the body
              chain(0.1, (0.75, 0.4), [0.72, 0.6, 0.45]),              # a limb hanging from it
              chain(0.1, (0.3, 0.26), [0.29, 0.27], 0.02),             # small, beyond its end
              chain(0.2, (0.62, 0.58), [0.61, 0.59], 0.02)]            # small, beside its middle
    mass, extent = [10.0, 3.0, 0.2, 0.2], [1.0, 0.4, 0.04, 0.04]
    kept, _, at = _join(pieces, mass, extent, end_pieces=True)
    assert {at[2], at[2] + 1} <= kept and not {at[3], at[3] + 1} & kept
    kept, _, at = _join(pieces, mass, extent)
    assert not {at[2], at[2] + 1, at[3], at[3] + 1} & kept


def test_a_shin_hangs_from_the_thigh_its_axis_points_to_though_the_other_shin_lies_nearer():
    """A wooden mannequin's knee is a ball (no bones) between thigh and shin: the left
    shin's surface lies 0.15 below its thigh and 0.10 beside the right shin. Its axis
    points up to its own thigh (parts._in_line); before, it hung from the right shin."""
    pieces = [chain(0.0, (1.0, 0.8), [0.98, 0.9, 0.82], 0.12),          # pelvis (the body)
              chain(-0.1, (0.78, 0.6), [0.75, 0.62]),                 # right thigh
              chain(0.1, (0.78, 0.6), [0.75, 0.62]),                  # left thigh
              chain(-0.1, (0.45, 0.1), [0.4, 0.25, 0.1]),             # right shin
              chain(0.1, (0.45, 0.1), [0.4, 0.25, 0.1])]              # left shin
    kept, links, at = _join(pieces, [10.0, 3.0, 3.0, 2.0, 1.9])
    left_shin, left_thigh = set(range(at[4], at[4] + 3)), {at[2], at[2] + 1}
    hang = [(a, b) for a, b in links if (a in left_shin) != (b in left_shin)]
    assert len(hang) == 1 and (set(hang[0]) - left_shin) <= left_thigh, hang


def test_a_foot_heavier_than_its_shin_waits_for_the_shin_that_lies_between_it_and_the_body():
    """A chibi's feet outweigh its shins: joined heaviest first, the first foot hung from
    the pelvis across the shin's place and the second from the first foot. On a mirror
    character, the shin lies between its foot and the body on the foot's side of the
    plane (nearer to both than they are to each other), so it is joined first and the
    foot hangs from it."""
    pieces = [chain(0.0, (1.0, 0.8), [0.98, 0.9, 0.82], 0.12),          # pelvis (the body)
              chain(-0.1, (0.76, 0.5), [0.72, 0.6]),                  # right shin
              chain(0.1, (0.76, 0.5), [0.72, 0.6]),                   # left shin
              chain(-0.1, (0.46, 0.3), [0.44, 0.32], 0.07),           # right foot, heavier
              chain(0.1, (0.46, 0.3), [0.44, 0.32], 0.07)]            # left foot
    kept, links, at = _join(pieces, [10.0, 1.0, 1.0, 2.0, 2.0], mirror=True)
    for foot, shin in ((at[3], at[1]), (at[4], at[2])):
        feet = {foot, foot + 1}
        hang = [(a, b) for a, b in links if (a in feet) != (b in feet)]
        assert len(hang) == 1 and (set(hang[0]) - feet) <= {shin, shin + 1}, hang
