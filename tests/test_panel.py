# SPDX-License-Identifier: GPL-3.0-or-later
"""The sidebar draws with every button wired to a real operator property (headless: the
panel's draw() runs against a recording layout that refuses unknown names)."""
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


@pytest.mark.parametrize("selection", ["nothing", "mesh", "mesh_and_armature"])
def test_panel_draws(ext, make_mesh, humanoid, bridge, humanoid_skeleton, selection):
    import bpy
    if selection != "nothing":
        obj = make_mesh("body", *humanoid)
        if selection == "mesh_and_armature":
            armature = bridge.armature.skeleton_to_armature(humanoid_skeleton())
            armature.select_set(True)
            obj.select_set(True)
    else:
        bpy.ops.object.select_all(action='DESELECT')
    panel = bpy.types.BONESMITH_PT_skeleton
    record = []

    class Self:
        layout = _Layout(record)

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
    if selection == "nothing":
        assert "Select mesh object(s) to rig" in labels
    elif selection == "mesh":
        assert "Auto Skin: also select an armature" in labels
    else:
        assert not [t for t in labels if t.startswith(("Select", "Auto Skin:"))]
