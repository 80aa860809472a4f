# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith correctives INPUT... --out MODEL`: learn pose correctives of a rigged
character or a family of bodies; `--apply MODEL BODY`: a family model on a new body."""
from __future__ import annotations

import time
from pathlib import Path

from ..core.errors import BonesmithError
from ..core.safe_write import check_writable
from . import common

HELP = ("learn pose correctives of a rigged character or a family of bodies "
        "(no torch needed); --apply a family model to a new body")
DESCRIPTION = """\
Learn refined skin weights and pose correctives (shape keys driven by the bones) that make
plain linear blend skinning reproduce a character's own deformation, and write the model
(.npz). INPUT: a Bonesmith .npz record with poses (pose_rot (P,J,3,3) and pose_verts
(P,V,3), P >= 2), or a .blend/.fbx/.glb/.gltf file whose meshes deform by an armature: their
deformer stack (Preserve Volume, Corrective Smooth, ...) is sampled in random poses as the
ground truth. Several INPUTs that share one topology and one skeleton learn a family model
(one Pose_net for all, and a joint regressor). --apply MODEL BODY: a family model's joints,
weights and correctives for a new body of the family, with no poses of it: BODY.npz (a
record; OUT .npz: the body's model) or a rigged BODY.blend/.fbx/.glb (its armature is
fitted, refined weights and driven shape keys written; OUT .blend/.fbx/.glb/.npz)."""


def add_parser(commands) -> None:
    learn = commands.add_parser("correctives", help=HELP, description=DESCRIPTION)
    common.inputs_argument(learn, "INPUT", ".npz record or rigged file (several: a family); with --apply: the body")
    common.model_out_argument(learn, "OUT", "the model file to write (.npz); with --apply also .blend/.fbx/.glb")
    learn.add_argument("--apply", metavar="MODEL", type=Path, default=None,
                       help="apply this family model to the body INPUT instead of learning")
    learn.add_argument("--body-joints", action="store_true",
                       help="with --apply: keep the body's own joints (its record's or armature's) "
                            "instead of the family's predicted ones")
    learn.add_argument("--poses", type=int, default=200,
                       help="random poses sampled from a rigged file (default 200)")
    learn.add_argument("--max-degrees", type=float, default=45.0,
                       help="largest random bone rotation in degrees (default 45)")
    learn.add_argument("--max-keys", type=int, default=0,
                       help="most live shape keys (default 0: about 4 ms per frame in Blender)")
    learn.add_argument("--seed", type=int, default=0, help="random seed of the poses (default 0)")
    learn.set_defaults(run=run)


def _correctives_data(path: Path, args, seed: int) -> dict:
    """Rest arrays, bone names (None if the record has none), poses and ground truth from a
    record or a rigged file."""
    from ..core import correctives, records

    if path.suffix.lower() == ".npz":
        data = records.read(path, records.RIG + records.POSES, optional=("joint_names",),
                            needed_for="a rigged record with poses")
        names = data["joint_names"].tolist() if "joint_names" in data else None
        return dict(vertices=data["verts"], faces=data["faces"], joints=data["joints"],
                    parents=data["parents"], weights=data["weights"], rotations=data["pose_rot"],
                    posed=data["pose_verts"], names=names)
    from ..bridge import correctives as bridge

    armature, meshes = _rigged_character(path)
    character = bridge.character_arrays(armature, meshes)
    rotations = correctives.random_rotations(character["parents"], args.poses,
                                             max_degrees=args.max_degrees, seed=seed)
    posed, read = bridge.sample_posed_vertices(armature, meshes, rotations, character["names"],
                                               read_back=True)
    return dict(vertices=character["vertices"], faces=character["faces"], joints=character["joints"],
                parents=character["parents"], weights=character["weights"], rotations=read, posed=posed,
                names=list(character["names"]))


def _rigged_character(path: Path):
    """(armature, meshes) of a rigged file, imported into an empty scene."""
    common.empty_scene()
    from ..bridge.file_import import import_file
    from ..bridge.selection import armatures_of, rig_meshes

    armatures = armatures_of(import_file(path))
    if len(armatures) != 1:
        raise BonesmithError(f"{path.name} must hold one armature that deforms its meshes "
                             f"(found {len(armatures)})")
    armature = armatures.pop()
    return armature, rig_meshes(armature)


def _print_errors(label: str, data: dict, model) -> None:
    """Mean and max vertex error of plain LBS and of the model on the training poses."""
    from ..core import correctives

    errors = correctives.vertex_errors(model, data["vertices"], data["joints"], data["weights"],
                                       data["rotations"], data["posed"])
    for what, error in zip(("plain LBS", "learned"), errors):
        print(f"  {label}{what:10s}  mean {error.mean():.4f} %  max {error.max():.3f} % of the size "
              "(training poses)")


def run(args) -> int:
    from ..core import correctives

    check_writable(args.out)
    if args.apply is not None:
        return _apply_correctives(args)
    start = time.perf_counter()
    bodies = []
    for i, path in enumerate(args.inputs):
        data = _correctives_data(path, args, args.seed + i)
        if bodies and data["names"] is not None and bodies[0]["names"] is not None:
            data = correctives.in_bone_order(data, bodies[0]["names"], path.name)
        bodies.append(data)
    first = bodies[0]
    max_keys = args.max_keys or correctives.key_budget(len(first["vertices"]))
    poses = sum(len(b["rotations"]) for b in bodies)
    what = f"{len(bodies)} bodies, " if len(bodies) > 1 else ""
    print(f"correctives: {what}{len(first['vertices'])} vertices, {len(first['joints'])} joints, "
          f"{poses} poses, at most {max_keys} shape keys", flush=True)
    model = correctives.fit_correctives(
        [b["vertices"] for b in bodies], first["faces"], [b["joints"] for b in bodies], first["parents"],
        first["weights"], [b["rotations"] for b in bodies], [b["posed"] for b in bodies], max_keys=max_keys,
        names=first["names"])
    model.save(args.out)
    for path, data in zip(args.inputs, bodies):
        label = f"{path.name}: " if len(bodies) > 1 else ""
        _print_errors(label, data, model)
    if "joints_leave_one_out_pct" in model.info:
        print(f"  joints of a left-out body: {model.info['joints_leave_one_out_pct']:.4f} % of its size "
              "on average (leave-one-out)")
    if model.regressor is not None and model.regressor.source:
        print(f"  joints of a new body: {model.regressor.source} (on these bodies "
              f"{model.info['joints_shipped_error_pct']:.4f} % of their size)")
    print(f"  seconds     {time.perf_counter() - start:.1f}")
    print(f"  wrote       {args.out}")
    return 0


def _apply_correctives(args) -> int:
    """A family model onto a new body: a record gives the body's model; a rigged file gets
    its armature fitted, refined weights and driven shape keys."""
    from ..core import correctives, records

    if len(args.inputs) != 1:
        raise BonesmithError("--apply takes one body: correctives --apply MODEL.npz BODY --out OUT")
    body_path, out = args.inputs[0], args.out
    model = correctives.CorrectiveModel.load(args.apply)
    rigged = body_path.suffix.lower() != ".npz"
    formats = (".npz", ".blend", ".fbx", ".glb") if rigged else (".npz",)
    if out.suffix.lower() not in formats:
        raise BonesmithError(f"Cannot write {out.name} from {body_path.name}: use "
                             f"{', '.join(formats)}" + ("" if rigged else " (a record body gives "
                                                        "its model; a rigged file can be written rigged)"))
    if not model.is_family and not args.body_joints:
        raise BonesmithError(f"{args.apply.name} was learned from one character, so it cannot place "
                             "a new body's joints: learn it from several bodies, or pass --body-joints")
    if not rigged:
        data = records.read(body_path, records.MESH, optional=("joints",), needed_for="a body mesh")
        if args.body_joints and "joints" not in data:
            raise BonesmithError(f"{body_path.name} has no joints: leave out --body-joints")
        body = model.for_body(data["verts"], data["joints"] if args.body_joints else None)
        body.save(out)
        _print_applied(model, body, data.get("joints"), out)
        return 0
    return _apply_to_rigged(args, model, body_path, out)


def _apply_to_rigged(args, model, body_path, out) -> int:
    from ..bridge import correctives as bridge

    if model.names is None:
        raise BonesmithError(f"{args.apply.name} holds no bone names (learned from records without "
                             "joint_names): apply it to a record body")
    armature, meshes = _rigged_character(body_path)
    body, own, keys = bridge.apply_family(armature, meshes, model, body_joints=args.body_joints)
    if out.suffix.lower() == ".npz":
        body.save(out)
    else:
        common.write(out, None, armature, meshes)
    _print_applied(model, body, own, out, keys=len(keys))
    return 0


def _print_applied(model, body, own_joints, out, keys=None) -> None:
    import numpy as np

    from ..core.mesh import bbox_diagonal

    identities = int(model.info.get("identities", 1))
    print(f"correctives --apply: a model of {identities} bodies on {len(body.rest_verts)} vertices, "
          f"{len(body.joints)} joints, correctives scaled x{body.info.get('body_scale', 1.0):.3f}")
    if own_joints is not None:
        moved = np.linalg.norm(body.joints - own_joints, axis=1) / bbox_diagonal(body.rest_verts, 1.0) * 100
        print(f"  joints: {moved.mean():.4f} % of the size from the body's own on average "
              f"(max {moved.max():.3f} %)")
    if keys is not None:
        print(f"  {keys} driven shape keys")
    print(f"  wrote       {out}")
