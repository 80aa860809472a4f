# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender operators: thin wrappers that read the selection, call core through bridge/
and report errors to the user.

base.py      BonesmithOperator: the read -> compute -> apply lifecycle every operator
             follows (background jobs with progress and Esc, errors, undo) and its helpers
options.py   the options an operator shares with the sidebar's settings, defined once
job.py       Job / ProcessJob: work in a thread or a subprocess (no bpy)
model_files.py  safe file names and atomic saves in the extension's user folder
"""
import bpy

from .adjust_joints import classes as joint_classes
from .auto_rig import BONESMITH_OT_auto_rig
from .auto_skeleton import BONESMITH_OT_auto_skeleton
from .auto_skin import BONESMITH_OT_auto_skin
from .correctives import classes as corrective_classes
from .export_fbx import BONESMITH_OT_export_fbx
from .generate_rig import BONESMITH_OT_generate_rig
from .train_skin import BONESMITH_OT_train_skin

classes = (BONESMITH_OT_auto_skeleton, BONESMITH_OT_auto_skin, BONESMITH_OT_auto_rig,
           *joint_classes, BONESMITH_OT_train_skin, BONESMITH_OT_export_fbx, BONESMITH_OT_generate_rig,
           *corrective_classes)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
