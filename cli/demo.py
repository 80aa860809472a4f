# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith demo`: rig, skin and pose the bundled sample character; write an FBX
and a picture."""
from __future__ import annotations

from pathlib import Path

from ..core.errors import BonesmithError
from ..core.safe_write import check_writable
from . import common

SAMPLE_CHARACTER = Path(__file__).resolve().parents[1] / "samples" / "quat_Male_Casual.npz"   # in the zip too


HELP = "rig and skin the bundled sample character; write demo.fbx and demo.png"
DESCRIPTION = """\
Rig the bundled CC0 sample character (Quaternius 'Male Casual') end to end (Auto Skeleton +
Auto Skin), pose it, and write DIR/demo.fbx (rig, weights and the poses as an animation) and
a picture of the poses DIR/demo.png."""


def add_parser(commands) -> None:
    demo = commands.add_parser("demo", help=HELP, description=DESCRIPTION)
    demo.add_argument("--out", "-o", metavar="DIR", type=Path, default=Path("out"),
                      help="output folder (default: out)")
    demo.add_argument("--detail", type=float, default=1.0, help="joint density (default 1.0)")
    demo.set_defaults(run=run)


def _demo_poses(armature) -> list:
    """Four poses for the demo: rest, arms down mid-stride, waving, kicking while reaching
    forward. Bones are found by role along Auto Skeleton's chains (arm_NN.L, leg_NN.R...),
    so the poses survive changes in how many bones a chain gets."""
    from ..bridge.pose import bone_at, limb_chain

    def at(limb, side, fraction):
        return bone_at(armature, limb_chain(armature, limb, side), fraction)

    arm_l, arm_r = at("arm", ".L", 0.3), at("arm", ".R", 0.3)
    elbow_l, elbow_r = at("arm", ".L", 0.66), at("arm", ".R", 0.66)
    thigh_l, thigh_r = at("leg", ".L", 0.15), at("leg", ".R", 0.15)
    knee_l, knee_r = at("leg", ".L", 0.45), at("leg", ".R", 0.45)
    spine, neck = at("spine", "", 0.0), at("neck", "", 0.0)
    poses = [
        [],
        [(arm_l, "Y", 70), (arm_r, "Y", -70), (elbow_l, "X", -30), (elbow_r, "X", -30),
         (thigh_l, "X", -30), (thigh_r, "X", 20), (knee_r, "X", 40)],
        [(arm_r, "Y", 45), (elbow_r, "Y", 60), (arm_l, "Y", 75), (spine, "Y", 8), (neck, "Z", 25)],
        [(thigh_l, "X", -70), (knee_l, "X", 25), (thigh_r, "X", 10), (knee_r, "X", 25),
         (arm_l, "Z", -80), (arm_r, "Z", 80), (spine, "X", 12)],
    ]
    return [[entry for entry in pose if entry[0] is not None] for pose in poses]


def _keyframe_poses(armature, poses) -> None:
    """The poses as an action, one per frame from 1, for the FBX."""
    import bpy
    from ..bridge.pose import apply_pose, reset_pose

    scene = bpy.context.scene
    for frame, pose in enumerate(poses, start=1):
        apply_pose(armature, pose)
        for pose_bone in armature.pose.bones:
            pose_bone.keyframe_insert("location", frame=frame)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
    scene.frame_start, scene.frame_end = 1, len(poses)
    scene.frame_set(1)
    reset_pose(armature)


def run(args) -> int:
    if not SAMPLE_CHARACTER.is_file():
        raise BonesmithError(f"The sample character is missing: {SAMPLE_CHARACTER} "
                             "(reinstall the extension, or check out the repository again)")
    check_writable(args.out / "demo.fbx")
    common.empty_scene()
    from ..bridge import fbx as bridge_fbx
    from ..bridge import file_import, render

    meshes = [file_import.load_npz(SAMPLE_CHARACTER)]
    skeleton, armature, seconds, n_vertices = common.rig(meshes, args.detail)
    weights, skin_seconds, _ = common.skin(meshes, armature)
    poses = _demo_poses(armature)
    fbx_path, png_path = args.out / "demo.fbx", args.out / "demo.png"
    render.render_poses(png_path, meshes, armature, poses)
    _keyframe_poses(armature, poses)
    bridge_fbx.export_fbx(fbx_path, armature, meshes, bake_anim=True)
    print(f"Bonesmith demo: {SAMPLE_CHARACTER.name} (Quaternius, CC0)")
    print(f"  vertices  {n_vertices}")
    print(f"  joints    {len(skeleton)}")
    print(f"  seconds   {seconds:.2f} skeleton, {skin_seconds:.2f} skin")
    print(f"  weights   at most {int((weights > 0).sum(axis=1).max())} bones per vertex, "
          f"{int(((weights > 0).sum(axis=1) == 0).sum())} vertices unweighted")
    print(f"  poses     {len(poses)} (rest, stride, wave, kick), also in the FBX as frames 1-{len(poses)}")
    print(f"  fbx       {fbx_path}")
    print(f"  picture   {png_path}")
    return 0
