# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith: automatic skeletons and skin weights for Blender.

This module only registers the extension. Importing the package does not import
bpy, so `bonesmith.core` stays usable from plain Python (scripts, training jobs).
"""


def _modules():
    from . import preferences, operators, panels
    return (preferences, operators, panels)


def register():
    for module in _modules():
        module.register()


def unregister():
    for module in reversed(_modules()):
        module.unregister()
