# SPDX-License-Identifier: GPL-3.0-or-later
"""bonesmith.core.mesh primitives on tiny meshes with known answers (no bpy)."""
import numpy as np
import pytest

from bonesmith.core import mesh

# two triangles sharing the edge 1-2; a tetrahedron; two triangles far apart
TWO = np.array([[0, 1, 2], [2, 1, 3]])
TET = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
APART = np.array([[3, 4, 5], [0, 1, 2]])


def test_triangle_edges_are_three_blocks_of_half_edges():
    e = mesh.triangle_edges(TWO)
    np.testing.assert_array_equal(e, [[0, 1], [2, 1], [1, 2], [1, 3], [2, 0], [3, 2]])
    assert e.dtype == TWO.dtype
    assert mesh.triangle_edges(np.zeros((0, 3), np.int32)).shape == (0, 2)


def test_unique_edges_sorted_once_each():
    np.testing.assert_array_equal(mesh.unique_edges(TWO), [[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]])
    np.testing.assert_array_equal(mesh.unique_edges(TET),
                                  [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    assert mesh.unique_edges(TWO.astype(np.int32)).dtype == np.int32


def test_edge_components_label_by_smallest_node():
    # direction and repeats do not matter; node 2 is alone
    count, labels = mesh.edge_components(5, [[4, 3], [0, 1], [1, 0], [3, 4]])
    assert count == 3
    np.testing.assert_array_equal(labels, [0, 0, 1, 2, 2])
    count, labels = mesh.edge_components(3, np.zeros((0, 2), int))
    assert count == 3
    np.testing.assert_array_equal(labels, [0, 1, 2])


def test_vertex_components():
    count, labels = mesh.vertex_components(7, APART)         # vertex 6 is in no face
    assert count == 3
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 1, 2])
    count, labels = mesh.vertex_components(4, TWO)
    assert count == 1
    np.testing.assert_array_equal(labels, [0, 0, 0, 0])


def test_weld_positions_rounds_to_the_grid():
    # cell 1e-6: points 1e-7 and 4e-7 from another merge with it, 2e-6 away does not
    V = np.array([[0, 0, 0], [1e-7, 0, 0], [1, 0, 0], [1 + 4e-7, 0, 0], [2e-6, 0, 0]])
    first, inverse, counts = mesh.weld_positions(V, 1e-6)
    np.testing.assert_array_equal(first, [0, 4, 2])              # grid keys sorted: 0, 2, 1e6
    np.testing.assert_array_equal(inverse, [0, 0, 2, 2, 1])
    np.testing.assert_array_equal(counts, [2, 1, 2])


def test_weld_positions_origin_and_floor():
    V = np.array([[0.6, 0, 0], [1.4, 0, 0], [-0.4, 0, 0]])
    first, inverse, _ = mesh.weld_positions(V, 1.0)              # keys 1, 1, 0
    np.testing.assert_array_equal(first, [2, 0])
    np.testing.assert_array_equal(inverse, [1, 1, 0])
    _, inverse, _ = mesh.weld_positions(V, 1.0, origin=[0.5, 0, 0])   # keys 0, 1, -1
    np.testing.assert_array_equal(inverse, [1, 2, 0])
    first, inverse, counts = mesh.weld_positions(V, 1.0, snap="floor")  # keys 0, 1, -1
    np.testing.assert_array_equal(first, [2, 0, 1])
    np.testing.assert_array_equal(inverse, [1, 2, 0])
    np.testing.assert_array_equal(counts, [1, 1, 1])


def test_bbox_diagonal_and_its_default():
    V = [[0, 0, 0], [1, 2, 2], [0.5, 0.5, 0.5]]
    assert mesh.bbox_diagonal(V) == 3.0
    assert mesh.bbox_diagonal(V, default=1.0) == 3.0
    point = [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]                 # degenerate: one place
    assert mesh.bbox_diagonal(point) == 0.0
    assert mesh.bbox_diagonal(point, default=1.0) == 1.0
    assert mesh.bbox_diagonal(np.zeros((0, 3)), default=1.0) == 1.0
    assert np.isnan(mesh.bbox_diagonal([[0, 0, np.nan], [1, 1, 1]], default=1.0))


def test_subdivide_midpoint_one_triangle():
    V = np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0]])
    Vs, Fs = mesh.subdivide_midpoint(V, [[0, 1, 2]])
    # midpoints in unique_edges order: (0,1), (0,2), (1,2)
    np.testing.assert_array_equal(Vs, [[0, 0, 0], [2, 0, 0], [0, 2, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    np.testing.assert_array_equal(Fs, [[0, 3, 4], [3, 1, 5], [4, 5, 2], [3, 5, 4]])


def test_subdivide_midpoint_shares_midpoints_and_keeps_area():
    V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.5]])
    Vs, Fs = mesh.subdivide_midpoint(V, TWO)
    assert Vs.shape == (9, 3) and Fs.shape == (8, 3)          # 4 + 5 edges, 4 x 2 faces
    np.testing.assert_array_equal(Vs[4:], [[0.5, 0, 0], [0, 0.5, 0], [0.5, 0.5, 0],
                                           [1, 0.5, 0.25], [0.5, 1, 0.25]])

    def area(V, F):
        return 0.5 * np.linalg.norm(np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), axis=1).sum()
    assert area(Vs, Fs) == pytest.approx(area(V, TWO), rel=1e-12)


def _cube():
    V = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    F = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    return V, F


def signed_volume(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


def test_consistent_winding_repairs_a_half_flipped_mesh_and_keeps_a_consistent_one():
    V, F = _cube()
    assert signed_volume(V, F) == pytest.approx(1.0)                   # wound outward
    np.testing.assert_array_equal(mesh.consistent_winding(V, F), F)
    inward = F[:, ::-1].copy()                                          # consistent, inward: kept
    np.testing.assert_array_equal(mesh.consistent_winding(V, inward), inward)
    mixed = F.copy()
    mixed[::2] = mixed[::2, ::-1]                                       # every other face flipped
    fixed = mesh.consistent_winding(V, mixed)
    assert signed_volume(V, fixed) == pytest.approx(1.0)
    assert {tuple(np.roll(f, -int(np.argmin(f)))) for f in fixed} == \
        {tuple(np.roll(f, -int(np.argmin(f)))) for f in F}
    # two separate cubes: each patch on its own
    two = np.vstack([mixed, F[:, ::-1] + 8])
    V2 = np.vstack([V, V + 3])
    out = mesh.consistent_winding(V2, two)
    np.testing.assert_array_equal(out[12:], two[12:])                   # the consistent one is kept
    assert signed_volume(V2, out[:12]) == pytest.approx(1.0)


def test_orient_faces_makes_a_long_randomly_flipped_strip_agree():
    """A strip of 400 triangles (a breadth-first tree 400 deep, each face's flip the parity
    of the disagreements on its way to the root) with a third of its faces flipped: every
    neighbour agrees afterwards, and an agreeing mesh comes back as it is."""
    n = 201                       # vertex pairs (2 i, 2 i + 1) along the strip
    F = np.array([t for i in range(n - 1) for t in ((2 * i, 2 * i + 2, 2 * i + 1), (2 * i + 1, 2 * i + 2, 2 * i + 3))])
    assert not mesh.face_adjacency(F)[2].any()
    flipped = F.copy()
    pick = np.random.default_rng(0).random(len(F)) < 1 / 3
    flipped[pick] = flipped[pick][:, ::-1]
    assert mesh.face_adjacency(flipped)[2].any()
    out, flip, lab = mesh.orient_faces(flipped)
    assert not mesh.face_adjacency(out)[2].any() and (lab == 0).all()
    assert (flip == pick).all() or (flip == ~pick).all()       # back to F's winding, or all turned
    out, flip, _ = mesh.orient_faces(F)
    np.testing.assert_array_equal(out, F)
    assert not flip.any()


def test_close_t_junctions_splits_the_face_across_a_crack():
    """One face of a closed cube split at an edge midpoint, its neighbour not: the mesh
    is open along that edge (a crack) until the neighbour is split too."""
    V, F = _cube()
    a, b, c = F[0]
    V = np.vstack([V, (V[a] + V[b]) / 2])
    m = len(V) - 1
    cracked = np.vstack([F[1:], [[a, m, c], [m, b, c]]])
    assert len(mesh.boundary_half_edges(cracked)) == 3
    closed = mesh.close_t_junctions(V, cracked, 1e-9)
    assert len(mesh.boundary_half_edges(closed)) == 0
    assert len(closed) == len(cracked) + 1
    area = lambda F: 0.5 * np.linalg.norm(np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]), axis=1).sum()  # noqa: E731
    assert area(closed) == pytest.approx(6.0)
    assert mesh.consistent_winding(V, closed).tolist() == closed.tolist()    # orientation kept
    np.testing.assert_array_equal(mesh.close_t_junctions(V, F, 1e-9), F)     # closed: unchanged


def test_close_t_junctions_leaves_a_vertex_off_the_edge():
    V, F = _cube()
    a, b, c = F[0]
    V = np.vstack([V, (V[a] + V[b]) / 2 + np.cross(V[b] - V[a], V[c] - V[a]) * 0.01])   # off the edge
    m = len(V) - 1
    cracked = np.vstack([F[1:], [[a, m, c], [m, b, c]]])
    np.testing.assert_array_equal(mesh.close_t_junctions(V, cracked, 1e-4), cracked)


def test_surface_points_cover_a_big_flat_face_at_the_spacing():
    from scipy.spatial import cKDTree
    V = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    F = np.array([[0, 1, 2], [0, 2, 3]])
    P = mesh.surface_points(V, F, 0.05)
    assert np.allclose(P[:, 2], 0) and P[:, :2].min() >= -1e-12 and P[:, :2].max() <= 1 + 1e-12
    u, v = np.meshgrid(np.linspace(0, 1, 41), np.linspace(0, 1, 41))
    gap, _ = cKDTree(P).query(np.stack([u.ravel(), v.ravel(), 0 * u.ravel()], axis=1))
    assert gap.max() < 0.05              # the vertices alone leave the middle 0.7 away
