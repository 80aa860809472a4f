# SPDX-License-Identifier: GPL-3.0-or-later
"""Options that an operator and the sidebar's per-scene settings share, defined once.

The panels draw their settings and hand them to the operators, so both must offer the
same name, range and default. Each shared option is one property definition here,
annotated on the operator and on the settings group (under the settings' own name where
that differs, e.g. `train_epochs: EPOCHS`); a group of options goes in as a mixin
(LearnOptions), as glTF-Blender-IO's exporter mixes its options into its operators.
"""
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from ..bridge.skin import DEFAULT_MAX_INFLUENCES

LIVE_BUDGET_MS = 4.0   # default live-bake cost per frame (sets the number of shape keys)

# -- Auto Skeleton, Auto Skin, Auto Rig -----------------------------------------------------

NAMING = EnumProperty(
    name="Naming",
    description="Bone names. A humanoid (two legs, two arms, a head) gets the standard "
                "humanoid skeleton with the chosen names (with finger bones where the hands have "
                "fingers modelled apart); other characters keep generic names",
    items=[('bonesmith', "Generic", "spine_01, arm_02.L ... for any creature (no standard skeleton; "
                                    "a humanoid's separable fingers get thumb_01.L ... pinky_03.R, what "
                                    "hangs off its limbs extra_01.L ...)"),
           ('mixamo', "Mixamo", "mixamorig:Hips, mixamorig:LeftArm ... (Mixamo animations retarget by name)"),
           ('unreal', "Unreal", "pelvis, spine_01, upperarm_l ... (UE mannequin)"),
           ('unity', "Unity", "Hips, LeftUpperArm ... (Unity Humanoid avatar maps them)"),
           ('rigify', "Rigify Metarig", "spine, upper_arm.L ... with Rigify rig types: Generate Rig makes a control rig")],
    default='bonesmith',
)

DETAIL = FloatProperty(
    name="Detail",
    description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
    default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
)
MAX_INFLUENCES = IntProperty(
    name="Max Influences", description="Most bones that move one vertex (game engines take 4)",
    default=DEFAULT_MAX_INFLUENCES, min=1, max=8,
)

# -- Train Skin -------------------------------------------------------------------------------

EPOCHS = IntProperty(name="Epochs", description="Passes over the training characters (at most; "
                     "validation chooses how many are kept)", default=50, min=1, max=100_000)
TRAINED_MODEL_NAME = StringProperty(name="Model Name", default="skin_trained",
                                    description="File name (without .npz) of the trained model")

# -- Correctives ------------------------------------------------------------------------------

POSE_SOURCES = [
    ('RANDOM', "Random Poses", "Random rotations of every bone within Max Angle"),
    ('ACTION', "Active Action", "The frames of the armature's active action"),
]
BAKE_MODES = [
    ('LIVE', "Live Drivers", "Shape keys driven by the bones' rotations (simple expressions: "
                             "no Python runs per frame)"),
    ('KEYED', "Keyed", "Shape-key values keyframed on every frame of the active action "
                       "(FBX and glTF carry them to engines)"),
    ('WEIGHTS', "Weights Only", "Only the refined vertex groups"),
]
BAKE_MODE = EnumProperty(name="Bake", items=BAKE_MODES, default='LIVE')
REGRESSOR_NAME = StringProperty(name="Name", default="joint_regressor",
                                description="File name (without .npz) of the joint regressor")


class LearnOptions:
    """Learn Correctives' options (the operator adds its seed)."""
    source: EnumProperty(name="Poses From", items=POSE_SOURCES, default='RANDOM')
    poses: IntProperty(name="Poses", description="How many random poses to learn from",
                       default=200, min=1, max=100_000)
    max_degrees: FloatProperty(name="Max Angle", description="Largest random bone rotation (degrees)",
                               default=45.0, min=1.0, max=180.0)
    frame_step: IntProperty(name="Frame Step", description="Use every n-th frame of the action",
                            default=1, min=1)
    max_keys: IntProperty(name="Max Shape Keys", default=0, min=0,
                          description="Most shape keys the live bake may use: each costs Blender "
                                      "time per frame (about 0.05 ms on 15k vertices); 0: "
                                      f"automatic, about {LIVE_BUDGET_MS:g} ms per frame")
