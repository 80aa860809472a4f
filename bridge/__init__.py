# SPDX-License-Identifier: GPL-3.0-or-later
"""The only place that converts between Blender data and core's numpy arrays.

Every module in here imports bpy; `core` never does. Import the submodules you need
(`from .bridge import mesh`), nothing is imported at package level.
"""
