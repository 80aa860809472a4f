# SPDX-License-Identifier: GPL-3.0-or-later
"""The sidebar draws with every button wired to a real operator property (headless: the
panels' draw() runs against a recording layout that refuses unknown names), and its hint
fits the selection. (How it looks in a real Blender: tests/gui/, `make test-gui`.)"""
import pytest


class _OperatorProps:
    def __init__(self, idname):
        import bpy
        category, name = idname.split(".")
        self.__dict__["_idname"] = idname
        self.__dict__["_names"] = set(getattr(getattr(bpy.ops, category), name).get_rna_type().properties.keys())
        self.__dict__["values"] = {}

    def __setattr__(self, key, value):
        if key not in self._names:
            raise AttributeError(f"{self._idname} has no property {key!r}")
        self.values[key] = value


class _Layout:
    def __init__(self, record):
        self.record = record
        self.scale_y = 1.0

    def box(self, **kw):
        return _Layout(self.record)

    row = column = box

    def separator(self, **kw):
        pass

    def label(self, text="", icon='NONE'):
        self.record.append(("label", text))

    def prop(self, data, name, **kw):
        assert name in data.bl_rna.properties.keys(), f"{data} has no property {name!r}"
        self.record.append(("prop", name))

    def operator(self, idname, **kw):
        import bpy
        category, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, category), name), idname
        props = _OperatorProps(idname)
        self.record.append(("operator", idname, props))
        return props


# The main panel and the sub-panels folded under it (Correctives: test_correctives_operators.py).
PANELS = ("BONESMITH_PT_skeleton", "BONESMITH_PT_options", "BONESMITH_PT_train")


@pytest.mark.parametrize("selection", ["nothing", "mesh", "mesh_and_armature", "rigged_armature", "armature"])
def test_panel_draws(ext, make_mesh, humanoid, bridge, humanoid_skeleton, selection):
    import bpy
    obj = make_mesh("body", *humanoid) if selection != "nothing" else None
    if selection in ("mesh_and_armature", "rigged_armature", "armature"):
        armature = bridge.armature.skeleton_to_armature(humanoid_skeleton())
        if selection == "rigged_armature":     # what Auto Rig leaves selected
            obj.modifiers.new("Armature", 'ARMATURE').object = armature
        obj.select_set(selection == "mesh_and_armature")
        armature.select_set(True)
    elif selection == "nothing":
        bpy.ops.object.select_all(action='DESELECT')
    record = []

    class Self:
        layout = _Layout(record)

    for name in PANELS:
        panel = getattr(bpy.types, name)
        assert name == PANELS[0] or panel.bl_parent_id == PANELS[0]
        panel.draw(Self(), bpy.context)
    operators = {entry[1]: entry[2].values for entry in record if entry[0] == "operator"}
    assert set(operators) == {"bonesmith.auto_rig", "bonesmith.auto_skeleton", "bonesmith.auto_skin",
                              "bonesmith.train_skin", "bonesmith.export_fbx"}
    settings = bpy.context.scene.bonesmith
    assert operators["bonesmith.train_skin"] == {"epochs": settings.train_epochs,
                                                 "model_name": settings.train_model_name}
    assert operators["bonesmith.auto_skin"] == {"max_influences": settings.max_influences}
    labels = [entry[1] for entry in record if entry[0] == "label"]
    props = [entry[1] for entry in record if entry[0] == "prop"]
    assert "skin_model" in props and "train_epochs" in props
    hints = [t for t in labels if t.startswith(("Select", "Auto Skin:", "Rigged:"))]
    expected = {"nothing": ["Select mesh object(s) to rig"],
                "mesh": ["Auto Skin: also select an armature"],
                "mesh_and_armature": [],
                "rigged_armature": ["Rigged: pose it, or Export FBX"],
                "armature": ["Auto Skin: also select the mesh"]}[selection]
    assert hints == expected


def test_main_panel_shows_first_what_a_user_needs_first(ext):
    """Auto Rig is the panel's first button; the options and Train Skin are folded."""
    import bpy
    record = []

    class Self:
        layout = _Layout(record)

    bpy.types.BONESMITH_PT_skeleton.draw(Self(), bpy.context)
    assert [e[1] for e in record if e[0] == "operator"][0] == "bonesmith.auto_rig"
    for name in PANELS[1:]:
        assert getattr(bpy.types, name).bl_options == {'DEFAULT_CLOSED'}


# -- the sidebar's settings are the operators' own options ----------------------------------------

SHARED = [  # (scene settings group, its property, operator, the operator's property)
    ("bonesmith", "detail", "auto_skeleton", "detail"),
    ("bonesmith", "detail", "auto_rig", "detail"),
    ("bonesmith", "max_influences", "auto_skin", "max_influences"),
    ("bonesmith", "max_influences", "auto_rig", "max_influences"),
    ("bonesmith", "train_epochs", "train_skin", "epochs"),
    ("bonesmith", "train_model_name", "train_skin", "model_name"),
    *[("bonesmith_correctives", name, "learn_correctives", name)
      for name in ("source", "poses", "max_degrees", "frame_step", "max_keys")],
    ("bonesmith_correctives", "bake_mode", "bake_correctives", "mode"),
    ("bonesmith_correctives", "regressor_name", "train_joint_regressor", "model_name"),
]
DEFINITION = ("type", "name", "description", "default", "hard_min", "hard_max", "soft_min",
              "soft_max", "step", "precision")


def definition(prop) -> dict:
    found = {key: getattr(prop, key) for key in DEFINITION if hasattr(prop, key)}
    if prop.type == 'ENUM':
        found["items"] = [(i.identifier, i.name, i.description) for i in prop.enum_items]
    return found


@pytest.mark.parametrize("group, name, operator, op_name", SHARED)
def test_settings_show_the_operators_options(ext, group, name, operator, op_name):
    """What the panel shows (range, default...) is what the operator it feeds takes: the
    Max Influences field starts at Auto Skin's own default, not at a copy of it."""
    import bpy
    setting = getattr(bpy.context.scene, group).bl_rna.properties[name]
    option = getattr(bpy.ops.bonesmith, operator).get_rna_type().properties[op_name]
    assert definition(setting) == definition(option)
