# SPDX-License-Identifier: GPL-3.0-or-later
"""Learned correctives (docs/correctives.md) from the UI.

- Learn Correctives: the selected character's own deformation (its modifier stack, shape
  keys, drivers) is sampled in random poses or the frames of its action, and core fits
  refined weights + pose correctives to it. Sampling runs on Blender's main thread a few
  poses per timer tick, fitting in a thread (numpy only); Esc cancels either. The model
  goes to the extension's user folder and its path onto the armature.
- Bake Correctives: the model onto "<mesh>_LBS" copies that only have a plain Armature
  modifier: refined vertex groups and shape keys, driven live by the bones or keyed on the
  action's frames, so plain LBS + shape keys (what engines run) reproduce the original.
- Train Joint Regressor / Fit Armature: joints from the rest mesh, learned on several
  characters that share a topology and bone names, applied to another one.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np
from bpy.props import IntProperty, StringProperty

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import correctives as bridge
from ..bridge import selection
from ..bridge.armature import deform_bones
from ..bridge.mesh import combine_rest
from ..core import correctives
from ..core.mesh import bbox_diagonal
from ..core.errors import BonesmithError
from . import options
from .base import BonesmithOperator, run_in_background, to_object_mode
from .job import Job
from .model_files import read_json, safe_name, save_atomic, write_json
from .options import LIVE_BUDGET_MS, LearnOptions

MODEL_PROPERTY = "bonesmith_correctives"          # on the armature: its learned model's path
REGRESSOR_PROPERTY = "bonesmith_joint_regressor"  # on the scene: the last trained regressor
FAMILY_PROPERTY = "bonesmith_correctives_family"  # on the scene: the last family model learned
SAMPLE_SECONDS = 0.1   # ground-truth sampling per timer tick (the UI stays responsive)
CHANGED = 1e-4         # of the mesh size: rest vertices or joints that moved since learning


def models_dir() -> Path:
    """Learned correctives and joint regressors (a subfolder, so that the skin-model list,
    which shows the .npz files of user_models_dir(), does not offer them)."""
    return preferences.user_models_dir() / "correctives"


# -- what is selected ---------------------------------------------------------------------------

def find_character(context, label: str):
    """(armature, meshes): the active or one selected armature, else the one the selected
    meshes are rigged to. Meshes: the selected ones it deforms, else all it deforms in the
    view layer; bake copies ("_LBS") are left out. Sorted by name (a stable row order)."""
    selected = list(context.selected_objects)
    active = context.active_object
    if not selected:
        raise BonesmithError(f"Nothing is selected: {label} needs a character (its armature "
                             "or its rigged meshes)")
    if active is not None and active.type == 'ARMATURE' and active.select_get():
        armature = active
    else:
        armature = selection.the_armature(
            selected, several="The selection belongs to several armatures ({names}): "
                              "make the character's armature the active object",
            missing=f"No armature: {label} needs a mesh rigged to an armature "
                    "(Armature modifier + vertex groups); rig it first (Auto Rig)")
    def own(obj):
        return (obj.type == 'MESH' and not bridge.is_lbs_copy(obj)
                and selection.find_armature(obj) == armature)
    meshes = ([o for o in selected if own(o)]
              or [o for o in selection.in_view_layer(context, selection.rig_meshes(armature)) if own(o)])
    if not meshes:
        raise BonesmithError(f"The armature '{armature.name}' deforms no mesh")
    return armature, sorted(meshes, key=lambda o: o.name)


def _model_path(armature, family: bool = False) -> Path:
    """<blend file>_<armature>.npz (a family: <blend file>_family_<first armature>.npz):
    armatures of the same name in other files keep theirs."""
    blend = Path(bpy.data.filepath).stem if bpy.data.filepath else "untitled"
    kind = "family_" if family else ""
    return models_dir() / f"{safe_name(blend)}_{kind}{safe_name(armature.name)}{preferences.MODEL_SUFFIX}"


# -- Learn Correctives ----------------------------------------------------------------------------

@dataclass
class Member:
    """One character of a Learn Correctives run, read from Blender before it starts."""
    armature: str
    meshes: list
    vertex_counts: list
    character: dict
    rotations: np.ndarray            # the poses asked for
    source: str                      # "200 random poses", "action 'Walk'"
    posed: np.ndarray = None         # ground truth (P,V,3)
    read: np.ndarray = None          # the poses the bones took (constraints count)


@dataclass
class LearnPlan:
    """What the fit needs: one character, or a family (several that share one topology and
    one skeleton; docs/correctives.md#families)."""
    members: list
    source: str
    options: dict = field(default_factory=dict)

    @property
    def is_family(self) -> bool:
        return len(self.members) > 1


def plan_learning(context, op) -> LearnPlan:
    to_object_mode(context)
    identities = selected_identities(context)
    if len(identities) < 2:
        identities = [find_character(context, "Learn Correctives")]
    members, names = [], None
    for i, (armature, meshes) in enumerate(identities):
        member = _member(armature, meshes, op, seed=op.seed + i)
        if names is None:
            names, first = member.character["names"], member
        else:
            _check_family(member, first, armature)
            member.character = correctives.in_bone_order(
                dict(member.character, rotations=member.rotations), names, f"'{armature.name}'")
            member.rotations = member.character.pop("rotations")
        members.append(member)
    source = members[0].source
    if len(members) > 1:
        source = f"{op.poses} random poses each" if op.source != 'ACTION' else "their actions"
    # 0: as many keys as a live bake affords in LIVE_BUDGET_MS per frame for these meshes
    max_keys = op.max_keys or correctives.key_budget(len(members[0].character["vertices"]), LIVE_BUDGET_MS)
    return LearnPlan(members, source, {"max_keys": max_keys})


def _member(armature, meshes, op, seed: int) -> Member:
    character = bridge.character_arrays(armature, meshes)
    unweighted = int(character["unweighted"].sum())
    if unweighted:
        raise BonesmithError(f"{unweighted} vertices of {', '.join(repr(m.name) for m in meshes)} have no "
                             f"weights for the deforming bones of '{armature.name}': weight them "
                             "(Auto Skin) before learning correctives")
    if op.source == 'ACTION':
        action = armature.animation_data.action if armature.animation_data else None
        if action is None:
            raise BonesmithError(f"'{armature.name}' has no active action: give it one, or learn "
                                 "from Random Poses")
        frames = bridge.action_frames(action, op.frame_step)
        rotations = bridge.action_rotations(armature, character["names"], action, frames)
        source = f"action '{action.name}'"
    else:
        rotations = correctives.random_rotations(character["parents"], op.poses,
                                                 max_degrees=op.max_degrees, seed=seed)
        source = f"{op.poses} random poses"
    if len(rotations) < 2:
        raise BonesmithError(f"Learn Correctives needs at least 2 poses to learn from, {source} "
                             "gives 1 (50 or more give corrections that hold on new poses)")
    bridge.evaluated_vertices(meshes)  # a modifier that changes the vertex count fails here
    return Member(armature.name, [m.name for m in meshes], [len(m.data.vertices) for m in meshes],
                  character, rotations, source)


def _check_family(member: Member, first: Member, armature) -> None:
    a, b = member.character, first.character
    if len(a["vertices"]) != len(b["vertices"]) or not np.array_equal(a["faces"], b["faces"]):
        raise BonesmithError(
            f"'{armature.name}' ({len(a['vertices'])} vertices) and '{first.armature}' "
            f"({len(b['vertices'])} vertices) do not share one topology: learning a family needs "
            "characters with the same mesh (same vertices and faces), only reshaped; select one "
            "character to learn its own correctives")


def _objects(member: Member, label: str):
    armature = bpy.data.objects.get(member.armature)
    meshes = [bpy.data.objects.get(n) for n in member.meshes]
    if armature is None or armature.type != 'ARMATURE' or any(m is None or m.type != 'MESH' for m in meshes):
        raise BonesmithError(f"The character was removed or renamed while {label} ran")
    if [len(m.data.vertices) for m in meshes] != member.vertex_counts:
        raise BonesmithError(f"The meshes were edited while {label} ran: run it again")
    return armature, meshes


def fit(plan: LearnPlan, progress=None):
    """core.correctives.fit_correctives on the sampled ground truth (no bpy: runs in a
    thread); returns (model, errors on the training poses over all members)."""
    chars = [m.character for m in plan.members]
    first = chars[0]
    model = correctives.fit_correctives(
        [c["vertices"] for c in chars], first["faces"], [c["joints"] for c in chars], first["parents"],
        first["weights"], [m.read for m in plan.members], [m.posed for m in plan.members],
        progress=progress, names=list(first["names"]), **plan.options)
    pairs = [correctives.vertex_errors(model, ch["vertices"], ch["joints"], ch["weights"], m.read, m.posed)
             for m, ch in zip(plan.members, chars)]
    e_lbs, e_model = (np.concatenate([p[k] for p in pairs]) for k in (0, 1))
    errors = {"lbs_mean_pct": float(e_lbs.mean()), "lbs_max_pct": float(e_lbs.max()),
              "model_mean_pct": float(e_model.mean()), "model_max_pct": float(e_model.max())}
    for key in ("joints_leave_one_out_pct", "joints_shipped_error_pct"):
        if key in model.info:
            errors[key] = model.info[key]
    if model.regressor is not None and model.regressor.source:
        errors["joints_shipped"] = model.regressor.source
    return model, errors


class Sampling:
    """The ground-truth stage with Job's polled interface, stepped from the modal timer on
    the main thread (Blender data may only be touched there). `members`: (armature, meshes,
    rotations, bone names) per character, sampled one after the other; `result` is a list of
    (posed, read) per character."""

    def __init__(self, members, seconds=SAMPLE_SECONDS):
        self._members = list(members)
        self.count = sum(len(rotations) for _, _, rotations, _ in self._members)
        self._seconds = seconds
        self._results, self._posed, self._read = [], [], []
        self._samples = self._next_member()
        self.fraction, self.message = 0.0, "ground truth"
        self.result = self.error = None
        self.done = self.cancelled = False

    def _next_member(self):
        armature, meshes, rotations, names = self._members[len(self._results)]
        return bridge.iter_posed_vertices(armature, meshes, rotations, names)

    def start(self):
        return self

    def step(self) -> None:
        """Sample poses for about `seconds`; each character's pose is restored when its last
        is done."""
        deadline = time.perf_counter() + self._seconds
        try:
            while not self.done:   # at least one pose per step
                try:
                    _, vertices, pose = next(self._samples)
                except StopIteration:
                    self._results.append((np.array(self._posed), np.array(self._read)))
                    self._posed, self._read = [], []
                    if len(self._results) == len(self._members):
                        self.result, self.done = self._results, True
                        break
                    self._samples = self._next_member()
                    continue
                self._posed.append(vertices)
                self._read.append(pose)
                sampled = sum(len(p) for p, _ in self._results) + len(self._posed)
                self.fraction = sampled / self.count
                self.message = f"ground truth {sampled}/{self.count}"
                if time.perf_counter() >= deadline:
                    break
        except Exception as error:  # reported by the modal operator
            self.error, self.done = error, True
            self._samples.close()

    def cancel(self) -> None:
        self.cancelled = self.done = True
        self._samples.close()   # restores the pose

    def wait(self, timeout=None) -> bool:
        return self.done


class BONESMITH_OT_learn_correctives(LearnOptions, BonesmithOperator, bpy.types.Operator):
    """Learn refined skin weights and pose correctives from the selected character's own
    deformation (its modifiers, shape keys and drivers) in random poses or its action"""
    bl_idname = "bonesmith.learn_correctives"
    bl_label = "Learn Correctives"

    seed: IntProperty(name="Seed", description="Random seed of the poses", default=0, min=0)

    def read(self, context):
        return plan_learning(context, self)

    def in_background(self, context, plan):
        return run_in_background(context)   # whatever the size: sampling takes a while

    def job(self, plan):
        """The ground truth first: Sampling, stepped on the main thread by modal(), which
        then fits in a Job."""
        return Sampling(self._sampled(plan))

    def _sampled(self, plan) -> list:
        return [(*_objects(m, self.bl_label), m.rotations, m.character["names"]) for m in plan.members]

    def compute_now(self, context, plan):
        for member, (armature, meshes, rotations, names) in zip(plan.members, self._sampled(plan)):
            member.posed, member.read = bridge.sample_posed_vertices(armature, meshes, rotations,
                                                                     names, read_back=True)
        return fit(plan)

    def modal(self, context, event):
        job = self._job
        if isinstance(job, Sampling) and event.type == 'TIMER' and not job.done:
            job.step()
            if job.done and job.error is None:   # on to the fit, in a thread
                plan = self._input
                for member, (posed, read) in zip(plan.members, job.result):
                    member.posed, member.read = posed, read
                self._job = Job(lambda progress: fit(plan, progress)).start()
        return BonesmithOperator.modal(self, context, event)

    def apply(self, context, plan, result):
        """The model into the user folder, its path onto the armature(s); a family's also onto
        the scene, with its joint regressor for Fit Armature."""
        model, errors = result
        armatures = [_objects(m, self.bl_label)[0] for m in plan.members]
        names = plan.members[0].character["names"]
        path = _model_path(armatures[0], family=plan.is_family)
        path = save_atomic(model.save, path)
        poses = sum(len(m.read) for m in plan.members)
        write_json(path.with_suffix(".json"), dict(
            armature=armatures[0].name, bones=names, meshes=plan.members[0].meshes,
            vertex_counts=plan.members[0].vertex_counts, poses=poses, source=plan.source,
            training_error=errors, family=[m.armature for m in plan.members] if plan.is_family else None))
        for armature in armatures:
            armature[MODEL_PROPERTY] = str(path)
        if plan.is_family:
            context.scene[FAMILY_PROPERTY] = str(path)
            self._save_regressor(context, model, armatures, path)
        who = (f"a family of {len(armatures)} characters ({', '.join(a.name for a in armatures)})"
               if plan.is_family else f"'{armatures[0].name}'")
        text = (f"Learn Correctives: {poses} poses ({plan.source}) of {who}; "
                f"mean error on them {errors['lbs_mean_pct']:.3f} % → {errors['model_mean_pct']:.3f} % "
                f"of the size (max {errors['lbs_max_pct']:.2f} % → {errors['model_max_pct']:.2f} %), "
                f"plain LBS → learned; saved {path.name}")
        if "joints_shipped" in errors:
            text += (f"; joints of a new body from {errors['joints_shipped']} (within "
                     f"{errors['joints_shipped_error_pct']:.3f} % of the size on these characters)")
        elif "joints_leave_one_out_pct" in errors:
            text += (f"; joints of a left-out character within {errors['joints_leave_one_out_pct']:.3f} % "
                     "of its size")
        text += (". On a new body of the family: Fit Armature, then Bake Correctives" if plan.is_family
                 else ". Bake Correctives puts it on the meshes")
        # constraints (IK, Copy Transforms of Rigify's DEF bones...) may override the poses
        overridden = np.zeros(len(names), bool)
        for m in plan.members:
            overridden |= np.abs(m.read - m.rotations).max(axis=(0, 2, 3)) > 1e-3
        if overridden.any():
            bones = [n for n, o in zip(names, overridden) if o]
            listed = ", ".join(bones[:3]) + ("…" if len(bones) > 3 else "")
            self.report({'WARNING'}, f"{text}. Constraints changed the pose of {len(bones)} bones "
                                     f"({listed}): they learned the poses the bones took (learn "
                                     "from an action of the controls)")
        else:
            self.report({'INFO'}, text)
        return {'FINISHED'}

    @staticmethod
    def _save_regressor(context, model, armatures, path) -> None:
        """The family's joint regressor as the scene's, so Fit Armature places a new body's bones."""
        target = path.with_name(path.stem + "_joints" + path.suffix)
        target = save_atomic(model.regressor.save, target)
        write_json(target.with_suffix(".json"), dict(
            bones=model.names, vertex_count=len(model.rest_verts), identities=[a.name for a in armatures],
            meshes_per_identity=None, leave_one_out_pct=None, family_model=str(path)))
        context.scene[REGRESSOR_PROPERTY] = str(target)


# -- Bake Correctives -----------------------------------------------------------------------------

@dataclass
class BakePlan:
    armature: object
    meshes: list
    names: list
    model: object
    frames: tuple = None


def plan_bake(context, mode: str) -> BakePlan:
    """Everything checked before the scene changes: the learned model, that the meshes and
    bones are still those it learned on (a family model: that they are of the family), and
    the action for a keyed bake."""
    to_object_mode(context)
    armature, selected_meshes = find_character(context, "Bake Correctives")
    stored = armature.get(MODEL_PROPERTY) or context.scene.get(FAMILY_PROPERTY)
    if not stored:
        raise BonesmithError(f"'{armature.name}' has no learned correctives: run Learn Correctives first "
                             "(on it, or on several characters of its family)")
    path = Path(stored)
    if not path.is_file():
        raise BonesmithError(f"The correctives of '{armature.name}' are missing ({path}): learn them again")
    model = correctives.CorrectiveModel.load(path)
    info = read_json(path.with_suffix(".json"))
    names = info["bones"]
    joints, _, _, bones = deform_bones(armature)
    if sorted(bones) != sorted(names):
        what = "are not the family's" if model.is_family else "changed since the correctives were learned"
        raise BonesmithError(f"The deforming bones of '{armature.name}' {what}: learn them again")
    joints = joints[[bones.index(n) for n in names]]
    if model.is_family:
        meshes = selected_meshes
        rest = combine_rest(meshes).vertices
        if len(rest) != len(model.rest_verts):
            raise BonesmithError(
                f"The meshes of '{armature.name}' have {len(rest)} vertices, the family "
                f"{len(model.rest_verts)}: a family model fits bodies of its topology only")
        model = model.for_body(rest, joints)   # this body's size and joints (Fit Armature first)
    else:
        meshes = [bpy.data.objects.get(n) for n in info["meshes"]]
        if any(m is None or m.type != 'MESH' for m in meshes):
            raise BonesmithError(f"A mesh the correctives learned on ({', '.join(info['meshes'])}) is gone "
                                 "or renamed: learn them again")
        if [len(m.data.vertices) for m in meshes] != info["vertex_counts"]:
            raise BonesmithError("The meshes were edited since the correctives were learned: learn them again")
        rest = combine_rest(meshes).vertices
        size = bbox_diagonal(rest, 1.0)
        if (np.abs(rest - model.rest_verts).max() > CHANGED * size
                or np.abs(joints - model.joints).max() > CHANGED * size):
            raise BonesmithError("The meshes or bones moved or changed shape since the correctives were "
                                 "learned: learn them again")
    frames = None
    if mode == 'KEYED':
        action = armature.animation_data.action if armature.animation_data else None
        if action is None:
            raise BonesmithError(f"A keyed bake needs an action on '{armature.name}': give it one, "
                                 "or bake Live Drivers")
        frames = tuple(int(f) for f in bridge.action_frames(action)[[0, -1]])
    return BakePlan(armature, meshes, names, model, frames)


class BONESMITH_OT_bake_correctives(BonesmithOperator, bpy.types.Operator):
    """Bake the learned correctives onto plain-LBS copies of the character's meshes
    ("<name>_LBS": only an Armature modifier): refined vertex groups and shape keys, driven
    by the bones or keyed on the action. The originals are kept (hidden)"""
    bl_idname = "bonesmith.bake_correctives"
    bl_label = "Bake Correctives"

    mode: options.BAKE_MODE
    max_influences: IntProperty(name="Max Influences", default=0, min=0, max=16,
                                description="Most bones per vertex in the refined weights "
                                            "(0: keep the learned ones, which never exceed the artist's)")

    def read(self, context):
        return plan_bake(context, self.mode)

    def apply(self, context, plan, result):
        existing = {m.name + bridge.LBS_SUFFIX for m in plan.meshes} & set(bpy.data.objects.keys())
        copies = []
        try:
            keys = self._bake(context, plan, copies)
        except Exception:
            for copy in copies:   # no half-baked copies left behind
                if copy.name not in existing:
                    data = copy.data
                    bpy.data.objects.remove(copy)
                    if data.users == 0:
                        bpy.data.meshes.remove(data)
            raise
        for obj in plan.meshes:
            obj.hide_set(True)
        if self.mode == 'LIVE':
            what = f"{len(keys)} driven shape keys"
        elif self.mode == 'KEYED':
            what = f"{len(keys)} shape keys keyed on frames {plan.frames[0]}–{plan.frames[1]}"
        else:
            what = "refined weights only"
        self.report({'INFO'}, f"Bake Correctives: {what} on {', '.join(c.name for c in copies)} "
                              f"(the originals are hidden)")
        return {'FINISHED'}

    def _bake(self, context, plan: BakePlan, copies: list) -> list:
        for obj in plan.meshes:
            copies.append(bridge.lbs_copy(obj, plan.armature))
        context.view_layer.update()
        return bridge.bake_body(copies, combine_rest(copies), plan.armature, plan.model, plan.names,
                                mode=self.mode, max_influences=self.max_influences, frames=plan.frames)


# -- Joint regressor ----------------------------------------------------------------------------

def selected_identities(context) -> list:
    """[(armature, meshes sorted by name)] for every armature the selection belongs to."""
    by_armature = {}
    for obj in context.selected_objects:
        armature = selection.find_armature(obj)
        if armature is not None:
            by_armature.setdefault(armature.name, armature)
    identities = []
    for name, armature in sorted(by_armature.items()):
        meshes = [o for o in context.selected_objects if o.type == 'MESH' and not bridge.is_lbs_copy(o)
                  and selection.find_armature(o) == armature]
        if not meshes:
            meshes = [o for o in selection.in_view_layer(context, selection.rig_meshes(armature))
                      if not bridge.is_lbs_copy(o)]
        if meshes:
            identities.append((armature, sorted(meshes, key=lambda o: o.name)))
    return identities


def identity_arrays(identities) -> tuple:
    """(rest vertices list, joints list, bone names) in the first identity's bone order;
    BonesmithError unless all share topology and bone names."""
    first = None
    verts, joints = [], []
    for armature, meshes in identities:
        mesh_set = combine_rest(meshes)
        heads, _, _, names = deform_bones(armature)
        if first is None:
            first = (armature.name, mesh_set.faces, names)
        elif len(mesh_set.vertices) != len(verts[0]) or not np.array_equal(mesh_set.faces, first[1]):
            raise BonesmithError(
                f"'{armature.name}' ({len(mesh_set.vertices)} vertices) and '{first[0]}' "
                f"({len(verts[0])} vertices) do not share one topology: a joint regressor learns "
                "from characters with the same mesh (same vertices and faces), only reshaped")
        elif sorted(names) != sorted(first[2]):
            raise BonesmithError(f"'{armature.name}' and '{first[0]}' have different deforming bones: "
                                 "a joint regressor needs one skeleton (the same bone names)")
        verts.append(mesh_set.vertices)
        joints.append(heads[[names.index(n) for n in first[2]]])
    return verts, joints, first[2]


class BONESMITH_OT_train_joint_regressor(BonesmithOperator, bpy.types.Operator):
    """Learn where the joints sit from the rest meshes of the selected characters (two or
    more, each rigged to its own armature, sharing one topology and bone names)"""
    bl_idname = "bonesmith.train_joint_regressor"
    bl_label = "Train Joint Regressor"

    model_name: options.REGRESSOR_NAME

    def read(self, context):
        """(identities, rest vertices, joints, bone names): see identity_arrays."""
        to_object_mode(context)
        identities = selected_identities(context)
        if len(identities) < 2:
            raise BonesmithError("Train Joint Regressor needs two or more characters: select the "
                                 "rigged meshes of characters that share one topology, each with "
                                 "its own armature")
        return (identities, *identity_arrays(identities))

    def computation(self, inp):
        """(regressor, how it was chosen: core.correctives.family_joint_regressor)."""
        _, verts, joints, names = inp
        return lambda progress: correctives.family_joint_regressor(verts, joints, names)

    def apply(self, context, inp, result):
        """The regressor into the user folder, its path onto the scene."""
        identities, verts, _, names = inp
        regressor, info = result
        loo = info.get("joints_leave_one_out_pct")
        name = f"{safe_name(self.model_name)}{preferences.MODEL_SUFFIX}"
        path = save_atomic(regressor.save, models_dir() / name)
        write_json(path.with_suffix(".json"), dict(
            bones=names, vertex_count=len(verts[0]), identities=[a.name for a, _ in identities],
            meshes_per_identity=len(identities[0][1]), leave_one_out_pct=loo, shipped=regressor.source))
        context.scene[REGRESSOR_PROPERTY] = str(path)
        check = (f"; joints of a left-out character within {loo:.2f} % of its size on average"
                 if loo is not None else "")
        if regressor.source:
            check = (f"; the shipped {regressor.source} places their joints within "
                     f"{info['joints_shipped_error_pct']:.3f} % of their size"
                     + (f", better than one fitted on them places a left-out character's ({loo:.3f} %)"
                        if loo is not None else "") + ": saved that one")
        self.report({'INFO'}, f"Train Joint Regressor: {len(identities)} characters, {len(names)} "
                              f"joints; saved {path.name}{check}")
        return {'FINISHED'}


@dataclass
class FitPlan:
    armature: object
    names: list
    regressor: object
    rest: np.ndarray        # the character's rest vertices (V,3)
    old_heads: np.ndarray   # the bones' world-space heads now


class BONESMITH_OT_fit_armature(BonesmithOperator, bpy.types.Operator):
    """Move the bones of the selected character's armature to where the joint regressor
    puts them for its rest mesh (a reshaped character of the training topology)"""
    bl_idname = "bonesmith.fit_armature"
    bl_label = "Fit Armature"

    filepath: StringProperty(name="Joint Regressor", subtype='FILE_PATH', default="",
                             description="The joint regressor file (empty: the last one trained)")

    def read(self, context) -> FitPlan:
        to_object_mode(context)
        armature, meshes = find_character(context, "Fit Armature")
        stored = self.filepath or context.scene.get(REGRESSOR_PROPERTY, "")
        if not stored:
            raise BonesmithError("No joint regressor: run Train Joint Regressor first (or pick a file)")
        path = Path(bpy.path.abspath(stored))
        if not path.is_file():
            raise BonesmithError(f"The joint regressor {path} is missing: train it again")
        regressor = correctives.JointRegressor.load(path)
        names = read_json(path.with_suffix(".json"))["bones"]
        bridge_armature.require_bones(armature, names, of="of the joint regressor",
                                      fix="it needs the training skeleton")
        return FitPlan(armature, names, regressor, combine_rest(meshes).vertices,
                       bridge_armature.bone_ends(armature, names)[0])

    def computation(self, plan: FitPlan):
        """The new heads (J,3)."""
        return lambda progress: plan.regressor.predict(plan.rest)

    def apply(self, context, plan: FitPlan, heads):
        bridge.fit_bones(plan.armature, plan.names, heads)
        moved = float(np.linalg.norm(heads - plan.old_heads, axis=1).max())
        self.report({'INFO'}, f"Fit Armature: {len(plan.names)} bones of '{plan.armature.name}' moved "
                              f"(at most {moved:.4g} units)")
        return {'FINISHED'}


classes = (BONESMITH_OT_learn_correctives, BONESMITH_OT_bake_correctives,
           BONESMITH_OT_train_joint_regressor, BONESMITH_OT_fit_armature)
