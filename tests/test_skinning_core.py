# SPDX-License-Identifier: GPL-3.0-or-later
"""core.skinning on generated meshes: heat prior, features, weights, errors (no ../shared)."""
import numpy as np
import pytest

from bonesmith.core.errors import InvalidArmatureError, InvalidMeshError
from bonesmith.core.skinning import FeatureSet, predict_weights, vertex_features
from bonesmith.core.skinning.geodesic import bone_geodesics
from bonesmith.core.skinning.heat import bone_heat
from bonesmith.core.skinning.prep import prepare_bones, prepare_mesh
from bonesmith.core.skinning.weights import prune, scatter

from conftest import HUMANOID_BONES, humanoid_arrays


def cylinder(radius=0.2, height=2.0, rings=21, segments=16, z0=0.0):
    """Closed capped cylinder along +Z from z0, outward-facing triangles."""
    a = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    z = np.linspace(z0, z0 + height, rings)
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], 1)
    V = np.concatenate([np.column_stack([ring, np.full(segments, zz)]) for zz in z])
    F = []
    for r in range(rings - 1):
        for s in range(segments):
            i, j = r * segments + s, r * segments + (s + 1) % segments
            k, m = i + segments, j + segments
            F += [[i, j, m], [i, m, k]]
    bottom, top = len(V), len(V) + 1
    V = np.concatenate([V, [[0, 0, z0], [0, 0, z0 + height]]])
    last = (rings - 1) * segments
    for s in range(segments):
        F.append([bottom, (s + 1) % segments, s])
        F.append([top, last + s, last + (s + 1) % segments])
    return V, np.array(F, dtype=np.int64)


def two_bones(height=2.0):
    joints = np.array([[0, 0, 0.05 * height], [0, 0, 0.5 * height]])
    tails = np.array([[0, 0, 0.5 * height], [0, 0, 0.95 * height]])
    return joints, np.array([-1, 0]), tails


def three_bones(height=2.0):
    j = np.array([[0, 0, 0.05], [0, 0, 0.35], [0, 0, 0.65]]) * height
    t = np.array([[0, 0, 0.35], [0, 0, 0.65], [0, 0, 0.95]]) * height
    return j, np.array([-1, 0, 1]), t


def check_rows(W, J, max_inf=4):
    assert W.shape[1] == J
    assert np.all(np.isfinite(W)) and np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-9)
    assert (W > 0).sum(axis=1).max() <= max_inf


@pytest.mark.parametrize("model, blend", [("prior", (0.2, 0.8)), (None, (0.1, 0.9))])
def test_cylinder_two_bones_near_bone_is_one(model, blend):
    """Rigid far from the joint, a smooth transition across it. The heat prior blends
    about evenly at the joint; the shipped model has learned that artists move the
    boundary a little (here toward the child), so it gets a wider band."""
    V, F = cylinder()
    j, p, t = two_bones()
    W = predict_weights(V, F, j, p, t, model=model)
    check_rows(W, 2)
    low, high = V[:, 2] < 0.4, V[:, 2] > 1.6
    assert W[low, 0].min() > 0.95
    assert W[high, 1].min() > 0.95
    # a smooth transition around the joint: the lower bone's weight falls with height
    ring = np.abs(V[:, 0] - 0.2) < 1e-9
    order = np.argsort(V[ring, 2])
    w0 = W[ring][order, 0]
    assert np.all(np.diff(w0) <= 1e-6)
    mid = np.abs(V[:, 2] - 1.0) < 0.06
    assert np.all((W[mid, 0] > blend[0]) & (W[mid, 0] < blend[1]))


def test_members_of_a_group_move_rigidly_but_characters_side_by_side_still_bend():
    def side_by_side(spacing, height):
        meshes = [cylinder(height=height) for _ in range(5)]
        V = np.vstack([v + [k * spacing, 0, 0] for k, (v, _) in enumerate(meshes)])
        F = np.vstack([f + k * len(v) for k, (v, f) in enumerate(meshes)])
        j, p, t = two_bones(height)
        shift = np.repeat(np.arange(5) * spacing, 2)[:, None] * [1, 0, 0]
        parents = np.concatenate([p + 2 * k * (p >= 0) for k in range(5)])
        return V, F, np.tile(j, (5, 1)) + shift, parents, np.tile(t, (5, 1)) + shift
    # five short cans in a row: small things, each wholly on the bone nearest its centre
    V, F, j, p, t = side_by_side(spacing=0.6, height=0.3)
    W = predict_weights(V, F, j, p, t, model="prior")
    check_rows(W, 10)
    assert set(np.unique(W)) == {0.0, 1.0}
    assert [np.unique(W[k * len(V) // 5:(k + 1) * len(V) // 5].argmax(axis=1)).size for k in range(5)] == [1] * 5
    # five tall figures in a row: characters, each bending between its two bones
    V, F, j, p, t = side_by_side(spacing=0.6, height=2.0)
    W = predict_weights(V, F, j, p, t, model="prior")
    low, high = V[:, 2] < 0.4, V[:, 2] > 1.6
    assert W[low][:, 0::2].sum(axis=1).min() > 0.95 and W[high][:, 1::2].sum(axis=1).min() > 0.95


def humanoid_rig():
    """conftest's blocky T-posed humanoid (symmetric in x) and its hand-made rig (bones
    along the middle of each limb): V, F, heads, parents, tails, names."""
    V, F = humanoid_arrays()
    names = list(HUMANOID_BONES)
    heads = np.array([HUMANOID_BONES[n][0] for n in names], float)
    tails = np.array([HUMANOID_BONES[n][1] for n in names], float)
    parents = np.array([names.index(HUMANOID_BONES[n][2]) if HUMANOID_BONES[n][2] else -1 for n in names])
    return V, F, heads, parents, tails, names


def check_humanoid_weights(W, V, heads, tails, names):
    """Where the weights of the blocky humanoid go (its limbs are 0.15 thick, 0.65 long)."""
    check_rows(W, len(names))
    col = {n: j for j, n in enumerate(names)}
    # a bone's middle is a limb's length from the next joint's blend (heat spreads about
    # a limb's thickness past a joint): the vertices within 0.15 of it are that bone's.
    # The hips' middle is near the thighs' tops, so only the mean is asked there.
    middles = (heads + tails) / 2
    for j, name in enumerate(names):
        near = np.linalg.norm(V - middles[j], axis=1) < 0.15
        assert near.sum() >= 10, name
        assert W[near, j].mean() > 0.7, name
        if name != "hips":
            assert (W[near].argmax(axis=1) == j).all() and W[near, j].min() > 0.6, name
    # the hands and feet ride wholly on their own forearm and shin, nothing on the trunk
    # or the other side (they are two bone lengths from any other bone)
    trunk = [col[n] for n in ("hips", "spine", "head")]
    for side, x in ((".L", 1.0), (".R", -1.0)):
        hand = x * V[:, 0] > 0.8
        foot = (V[:, 2] < 0.15) & (x * V[:, 0] > 0)
        assert hand.sum() >= 10 and foot.sum() >= 10
        assert W[hand, col["forearm" + side]].min() > 0.99
        assert W[foot, col["shin" + side]].min() > 0.99
        other = [j for n, j in col.items() if n.endswith(".R" if side == ".L" else ".L")]
        assert W[hand][:, trunk + other].max() == 0 and W[foot][:, trunk + other].max() == 0
    # mirror symmetric: the mirrored vertex's weights are this one's with .L and .R
    # swapped. The triangulation of the voxel surface is not mirrored (every quad is split
    # along the same diagonal) and segments graze its faces (visibility decided in
    # float32), so a few shoulder vertices differ by up to 0.3 (measured); on average a
    # row differs by 0.01 (L1) and where one bone dominates it is the mirrored one.
    key = {tuple(np.round(v, 6)): i for i, v in enumerate(V)}
    mirror = np.array([key[tuple(np.round(v * [-1, 1, 1], 6))] for v in V])
    swap = [col[n[:-2] + {".L": ".R", ".R": ".L"}[n[-2:]]] if n[-2:] in (".L", ".R") else j
            for j, n in enumerate(names)]
    mirrored = W[mirror][:, swap]
    assert np.abs(mirrored - W).sum(axis=1).mean() < 0.05
    clear = W.max(axis=1) > 0.7
    np.testing.assert_array_equal(mirrored[clear].argmax(axis=1), W[clear].argmax(axis=1))


@pytest.mark.parametrize("model", ["prior", None])
def test_a_humanoid_is_weighted_limb_by_limb_and_mirror_symmetric(model):
    V, F, heads, parents, tails, names = humanoid_rig()
    W = predict_weights(V, F, heads, parents, tails, model=model)
    check_humanoid_weights(W, V, heads, tails, names)


def test_three_bones_at_most_max_influences():
    V, F = cylinder(rings=31)
    j, p, t = three_bones()
    for k in (1, 2, 4):
        W = predict_weights(V, F, j, p, t, max_influences=k)
        check_rows(W, 3, k)
    W1 = predict_weights(V, F, j, p, t, max_influences=1)
    assert set(np.unique(W1)) <= {0.0, 1.0}
    # ... and on the bone its height lies along: away from the joints (0.7 and 1.3) by a
    # radius and a half, where the heat's blend has died out, there is no choice to make
    along = np.digitize(V[:, 2], [0.7, 1.3])
    clear = np.abs(V[:, 2, None] - [0.7, 1.3]).min(axis=1) > 0.3
    np.testing.assert_array_equal(W1[clear].argmax(axis=1), along[clear])


@pytest.mark.parametrize("scale", [0.01, 1000.0])
def test_unit_scale_does_not_change_weights(scale):
    V, F = cylinder()
    j, p, t = three_bones()
    W = predict_weights(V, F, j, p, t)
    Ws = predict_weights(V * scale, F, j * scale, p, t * scale)
    np.testing.assert_allclose(Ws, W, atol=1e-6)
    off = np.array([1e4, -3e3, 50.0])
    Wt = predict_weights(V + off, F, j + off, p, t + off)
    np.testing.assert_allclose(Wt, W, atol=1e-6)


def test_floating_part_and_loose_vertex_get_weights():
    V, F = cylinder()
    j, p, t = two_bones()
    # a small closed box floating beside the top (no bone inside, eyes/armour-like)
    c = np.array([0.5, 0.0, 1.7])
    box = c + 0.05 * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    bf = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                   [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    V2 = np.concatenate([V, box, [[3.0, 3.0, 3.0]]])        # plus one loose vertex
    F2 = np.concatenate([F, bf + len(V)])
    W = predict_weights(V2, F2, j, p, t)
    check_rows(W, 2)
    part = slice(len(V), len(V) + 8)
    assert W[part, 1].min() > 0.9                             # rides with the upper bone
    np.testing.assert_allclose(W[:len(V)], predict_weights(V, F, j, p, t), atol=0.05)


def test_split_seams_are_welded_and_flipped_winding_is_fixed():
    V, F = cylinder()
    j, p, t = two_bones()
    W = predict_weights(V, F, j, p, t)
    # duplicate every vertex used by the second half of the faces (a UV seam everywhere)
    half = len(F) // 2
    dup = np.unique(F[half:])
    remap = np.arange(len(V))
    remap[dup] = len(V) + np.arange(len(dup))
    V2 = np.concatenate([V, V[dup]])
    F2 = F.copy()
    F2[half:] = remap[F[half:]]
    W2 = predict_weights(V2, F2, j, p, t)
    np.testing.assert_allclose(W2[:len(V)], W, atol=1e-9)
    np.testing.assert_allclose(W2[len(V):], W[dup], atol=1e-9)
    # inconsistent winding: every other face flipped
    F3 = F.copy()
    F3[::2] = F3[::2, ::-1]
    np.testing.assert_allclose(predict_weights(V, F3, j, p, t), W, atol=1e-9)


def test_degenerate_and_non_manifold_faces():
    V, F = cylinder()
    j, p, t = two_bones()
    # zero-area sliver (three collinear points), a repeated face and a fin on an edge
    V2 = np.concatenate([V, [[0.3, 0, 1.0], [0.35, 0, 1.0], [0.4, 0, 1.0], [0.5, 0.0, 0.5]]])
    n = len(V)
    F2 = np.concatenate([F, [[n, n + 1, n + 2], F[0], [F[5, 0], F[5, 1], n + 3]]])
    W = predict_weights(V2, F2, j, p, t)
    check_rows(W, 2)
    # the stray faces change the cylinder's own weights little (they add no volume; the
    # fin touches the surface at one edge only): the clean weights within 0.05
    np.testing.assert_allclose(W[:n], predict_weights(V, F, j, p, t), atol=0.05)
    assert W[n + 3, 0] > 0.9                                 # the fin's tip, at z 0.5: lower bone


def test_zero_length_bones_missing_tails_and_far_bones():
    V, F = cylinder()
    j, p, t = two_bones()
    t0 = t.copy()
    t0[1] = j[1]                                             # zero-length upper bone
    W0 = predict_weights(V, F, j, p, t0)
    check_rows(W0, 2)
    # a point bone at the lower bone's tail (z 1.0): below, the lower bone is nearer; above,
    # both are equally near (a tie: heat from each, docs/auto_skin.md), so about half each
    assert W0[V[:, 2] < 0.8, 0].min() > 0.9
    assert np.all((W0[V[:, 2] > 1.2, 1] > 0.3) & (W0[V[:, 2] > 1.2, 1] < 0.7))
    far = j + np.array([100.0, 0, 0])                        # armature far from the mesh: refused
    with pytest.raises(InvalidArmatureError, match="far away from the bones"):
        predict_weights(V, F, far, p, t + np.array([100.0, 0, 0]))
    W = predict_weights(V, F, j, p, None)                    # tails from the children
    check_rows(W, 2)
    assert W[V[:, 2] < 0.4, 0].min() > 0.9


def test_single_bone():
    V, F = cylinder()
    W = predict_weights(V, F, [[0, 0, 0.1]], [-1], [[0, 0, 1.9]])
    np.testing.assert_allclose(W, 1.0)


@pytest.mark.parametrize("bad, message", [("nan", "1 vertices have NaN"), ("nofaces", "has no faces"),
                                          ("index", "point past the vertex list")])
def test_bad_mesh_raises(bad, message):
    V, F = cylinder()
    j, p, t = two_bones()
    if bad == "nan":
        V = V.copy()
        V[3] = np.nan
    elif bad == "nofaces":
        F = np.zeros((0, 3), np.int64)
    else:
        F = F.copy()
        F[0, 0] = len(V) + 5
    with pytest.raises(InvalidMeshError, match=message):
        predict_weights(V, F, j, p, t)


def test_bad_armature_raises():
    V, F = cylinder()
    with pytest.raises(InvalidArmatureError, match="no deforming bones"):
        predict_weights(V, F, np.zeros((0, 3)), np.zeros(0, int))
    j, p, t = two_bones()
    with pytest.raises(InvalidArmatureError, match="parent index points past the bone list"):
        predict_weights(V, F, j, [-1, 5], t)
    with pytest.raises(InvalidArmatureError, match="2 bones but 1 parent indices"):
        predict_weights(V, F, j, [-1], t)
    for parents in (["-1", "0"], [-1, 0.5], [-1, np.nan]):             # strings were a TypeError
        with pytest.raises(InvalidArmatureError, match="parent indices must be integers"):
            predict_weights(V, F, j, parents, t)
    check_rows(predict_weights(V, F, j, [-1.0, 0.0], t), 2)             # whole floats are indices
    jn = j.copy()
    jn[1, 0] = np.nan
    with pytest.raises(InvalidArmatureError, match="1 bones have NaN"):
        predict_weights(V, F, jn, p, t)


def test_bones_away_from_the_mesh_are_refused_from_python_too():
    """Blender's Auto Skin refused an armature far from the mesh or in another unit, but
    predict_weights called from Python weighted the mesh to it: an armature 10 units
    away put 94 % of the weight on one bone (armature_check.check_placement)."""
    V, F = cylinder()
    j, p, t = three_bones()
    with pytest.raises(InvalidArmatureError, match="The mesh is far away from the bones of the armature"):
        predict_weights(V, F, j + [10.0, 0, 0], p, t + [10.0, 0, 0])
    with pytest.raises(InvalidArmatureError, match=r"The armature is \d+x smaller than the mesh"):
        predict_weights(V, F, j / 100, p, t / 100)


def test_features_shapes_and_targets():
    V, F = cylinder()
    j, p, t = three_bones()
    fs = vertex_features(V, F, j, p, t)
    assert isinstance(fs, FeatureSet)
    n = fs.n
    assert fs.candidates.shape == (n, 5) and fs.mask.shape == (n, 5)
    assert fs.mask[:, :3].all() and not fs.mask[:, 3:].any()     # 3 bones: 2 padded slots
    assert fs.x.dtype == np.float32 and fs.x.shape == (n, 26 + 5 * 16)
    assert np.isfinite(fs.x).all()
    assert fs.x_bone.shape == (n, 5, 16)
    np.testing.assert_allclose(fs.x_bone[..., 8], fs.prior, atol=1e-6)
    # position along each candidate (0 head, 1 tail) and its place relative to the
    # prior's heaviest bone, on the chain 0 -> 1 -> 2 along z
    xb, valid = fs.x_bone, fs.mask
    along, parent_flag, child_flag = xb[..., 11], xb[..., 14], xb[..., 15]
    assert (along[valid] >= -1).all() and (along[valid] <= 2).all()
    Vn = fs.mesh.V
    heads, tails = fs.bones.heads[fs.candidates], fs.bones.tails[fs.candidates]
    expect = np.einsum("nkj,nkj->nk", Vn[:, None] - heads, tails - heads) / np.einsum(
        "nkj,nkj->nk", tails - heads, tails - heads)
    np.testing.assert_allclose(along[valid], np.clip(expect, -1, 2)[valid], atol=1e-5)
    top = fs.heat.argmax(axis=1)
    np.testing.assert_array_equal(parent_flag[valid] == 1, (fs.candidates == top[:, None] - 1)[valid])
    np.testing.assert_array_equal(child_flag[valid] == 1, (fs.candidates == top[:, None] + 1)[valid])
    assert parent_flag[top == 1].sum() == (top == 1).sum()        # bone 1's parent is always a candidate
    np.testing.assert_allclose(fs.prior.sum(axis=1), 1.0, atol=1e-5)  # all 3 bones are candidates
    assert (np.diff(fs.geodesic[:, :3], axis=1) >= -1e-6).all()      # nearest first
    # artist weights on input vertices -> welded candidate targets
    Wa = predict_weights(V, F, j, p, t)
    tgt, cov = fs.candidate_targets(Wa)
    np.testing.assert_allclose(cov, 1.0, atol=1e-9)
    np.testing.assert_allclose(scatter(fs.candidates, tgt, 3)[fs.vmap], Wa, atol=1e-9)


def test_geodesic_connects_floating_parts():
    V, F = cylinder()
    j, p, t = two_bones()
    box = np.array([0.8, 0, 1.7]) + 0.05 * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    bf = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                   [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    V2, F2 = np.concatenate([V, box]), np.concatenate([F, bf + len(V)])
    m = prepare_mesh(V2, F2)
    b = prepare_bones(m, j, p, t)
    h = bone_heat(m, b)
    seeds = np.zeros_like(h.dist, bool)
    ok = h.source_bone >= 0
    seeds[np.flatnonzero(ok), h.source_bone[ok]] = True
    G = bone_geodesics(m, h.dist, seeds)
    assert np.isfinite(G).all() and (G >= h.dist - 1e-9).all()
    boxv = m.vmap[len(V):]
    assert (G[boxv, 1] < G[boxv, 0]).all()                   # the box is nearer the upper bone
    assert np.ptp(G[boxv, 0]) > 0                            # not a constant on the part


class _OneHotModel:
    """A stand-in network: all weight on the geodesically nearest candidate."""
    def predict(self, fs):
        out = np.zeros(fs.candidates.shape)
        out[:, 0] = 1.0
        return out


def test_model_dispatch():
    V, F = cylinder()
    j, p, t = three_bones()
    W = predict_weights(V, F, j, p, t, model=_OneHotModel())
    check_rows(W, 3, 1)
    # the network's choice is the one used: the geodesically nearest bone, which away
    # from the joints (0.7 and 1.3, by more than a radius and a half) is the one alongside
    clear = np.abs(V[:, 2, None] - [0.7, 1.3]).min(axis=1) > 0.3
    np.testing.assert_array_equal(W[clear].argmax(axis=1), np.digitize(V[clear, 2], [0.7, 1.3]))
    Wp = predict_weights(V, F, j, p, t, model="prior")
    check_rows(Wp, 3)
    with pytest.raises(TypeError, match="model must be None, 'prior', a path"):
        predict_weights(V, F, j, p, t, model=42)


def test_prune_and_scatter():
    W = np.array([[0.1, 0.2, 0.3, 0.4, 0.5], [0, 0, 0, 0, 0], [np.nan, 1, 0, 0, 0]])
    out = prune(W, 2, fallback=np.array([0, 3, 0]))
    np.testing.assert_allclose(out[0], [0, 0, 0, 4 / 9, 5 / 9])
    np.testing.assert_allclose(out[1], [0, 0, 0, 1, 0])
    np.testing.assert_allclose(out[2], [0, 1, 0, 0, 0])
    S = scatter(np.array([[1, 1, 0]]), np.array([[0.25, 0.25, 0.5]]), 3)
    np.testing.assert_allclose(S, [[0.5, 0.5, 0]])
    S = scatter(np.array([[2, -1, 0]]), np.array([[0.25, 0.25, 0.5]]), 3)   # < 0: no bone
    np.testing.assert_array_equal(S, [[0.5, 0, 0.25]])


def test_prune_of_compact_rows_equals_dense():
    """The dense-mesh transfer prunes rows kept as their few (bone, weight) entries; the
    result is the dense prune's, repeated bones added, redistribution along the tree
    included."""
    from bonesmith.core.skinning.weights import merge_entries, to_dense
    rng = np.random.default_rng(3)
    J, n, m = 12, 500, 16
    parents = np.array([-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10])
    bones = rng.integers(0, J, (n, m))                       # repeats on purpose
    values = rng.random((n, m)) * (rng.random((n, m)) < 0.7)
    values[:, 0] += 0.1                                      # no empty row
    dense = to_dense(bones, values, J)
    assert np.allclose(dense.sum(1), values.sum(1))
    merged_bones, merged = merge_entries(bones, values)
    assert np.allclose(to_dense(merged_bones, merged, J), dense)
    assert all(len(set(b[v > 0])) == (v > 0).sum() for b, v in zip(merged_bones, merged))
    for parents_or_none in (parents, None):
        compact = prune(merged, 4, parents=parents_or_none, columns=merged_bones)
        assert np.allclose(to_dense(merged_bones, compact, J), prune(dense, 4, parents=parents_or_none))


def test_a_dense_mesh_is_weighted_on_a_proxy_as_well_as_in_full(monkeypatch):
    """Above prep.PROXY_VERTICES welded vertices the weights come from a decimated proxy
    and are carried back (949k vertices: 17 s and 1.1 GB instead of minutes and 6 GB).
    Here the threshold is lowered so that the sample subdivided once takes that path
    (its midpoints moved by 0.01 % of its size, so that it is no exact subdivision, which
    would be weighted on the original mesh): every row still sums to 1 within the
    influence limit, and the weights are as close to the artist's (interpolated onto the
    midpoints) as the full computation's."""
    from pathlib import Path
    from bonesmith.core.mesh import subdivide_midpoint, unique_edges
    from bonesmith.core.skinning import prep
    d = np.load(Path(__file__).resolve().parents[1] / "samples" / "quat_Male_Casual.npz")
    F0 = d["faces"].astype(np.int64)
    V, F = subdivide_midpoint(d["verts"].astype(np.float64), F0)
    n0 = len(d["verts"])
    V[n0:] += np.random.default_rng(0).normal(scale=1e-4 * np.ptp(V, axis=0).max(), size=(len(V) - n0, 3))
    e = unique_edges(F0)
    artist = np.vstack([d["weights"], 0.5 * (d["weights"][e[:, 0]] + d["weights"][e[:, 1]])])
    weighted = artist.sum(axis=1) > 0
    l1 = lambda W: np.abs(W - artist)[weighted].sum(axis=1).mean()   # noqa: E731
    args = (d["joints"], d["parents"], d["joint_tails"])
    full, info = predict_weights(V, F, *args, return_info=True)
    assert info["proxy_vertices"] is None and info["subdivisions_undone"] == 0
    monkeypatch.setattr(prep, "PROXY_VERTICES", 1500)
    proxied, info = predict_weights(V, F, *args, return_info=True)
    assert 700 < info["proxy_vertices"] <= 3000
    check_rows(proxied, len(args[0]))
    assert (proxied > 0).sum(axis=1).max() <= 4
    assert l1(proxied) <= 1.1 * l1(full)
