# SPDX-License-Identifier: GPL-3.0-or-later
"""Pictures without Blender: a numpy rasterizer for front views of a mesh and its bones,
and a PNG writer. bridge/render.py uses it when Workbench cannot run (no EGL/GPU);
it needs numpy only.
"""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np

BONE_COLOR = (1.0, 0.42, 0.05)
MESH_COLOR = (0.72, 0.72, 0.75)
BACKGROUND = (0.16, 0.17, 0.19)


def framing(vertices: np.ndarray, size: int):
    """Bounds, centre, the orthographic extent (10 % margin) and a resolution whose longer
    side is `size` pixels, for a front view (X right, Z up)."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    center = (lo + hi) / 2
    width, height = max(hi[0] - lo[0], 1e-9), max(hi[2] - lo[2], 1e-9)
    extent = 1.1 * max(width, height)
    margin = extent - max(width, height)
    resolution = tuple(max(64, int(round(size * (side + margin) / extent))) for side in (width, height))
    return lo, hi, center, extent, resolution


def draw_front_view(filepath, vertices, faces, bones, everything, size: int) -> None:
    """Paint a front view (paint_front_view) and write it as a PNG whose longer side is
    `size` pixels."""
    write_png(filepath, to_bytes(paint_front_view(vertices, faces, bones, everything, size)))


def to_bytes(image: np.ndarray) -> np.ndarray:
    """An (H, W, 3) float image in [0, 1] as uint8."""
    return (np.clip(image, 0, 1) * 255 + 0.5).astype(np.uint8)


def paint_front_view(vertices, faces, bones, everything, size: int, *, lines=()) -> np.ndarray:
    """A front view (X right, Z up, looking along +Y) of a mesh (V,3)/(F,3) and bones
    (heads (J,3), tails (J,3)) framed on `everything` (N,3), with the painter's algorithm:
    an (H, W, 3) float image whose longer side is `size` pixels. `lines`: more segments
    drawn thin on top, as (starts (K,3), ends (K,3), colour) triples (a rig's control
    shapes, say)."""
    lo, hi, center, extent, (width, height) = framing(everything, size)
    scale = max(width, height) / extent

    def project(points):
        px = (points[:, 0] - center[0]) * scale + width / 2
        py = height / 2 - (points[:, 2] - center[2]) * scale
        return np.stack([px, py], axis=1)

    image = np.empty((height, width, 3), dtype=np.float64)
    image[:] = BACKGROUND
    if len(faces):
        tri = vertices[faces]  # (F, 3, 3)
        normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-20)
        light = np.array([-0.3, -0.8, 0.5])
        light /= np.linalg.norm(light)
        shade = 0.35 + 0.65 * np.abs(normal @ light)
        depth = tri[:, :, 1].mean(axis=1)
        projected = project(tri.reshape(-1, 3)).reshape(-1, 3, 2)
        mesh_layer = np.full((height, width), np.nan)
        for f in np.argsort(-depth):  # far to near: painter's algorithm
            _fill_triangle(mesh_layer, projected[f], shade[f])
        covered = ~np.isnan(mesh_layer)
        color = np.asarray(MESH_COLOR)[None] * mesh_layer[covered][:, None]
        image[covered] = 0.25 * image[covered] + 0.75 * color
    heads, tails = bones[0], bones[1]
    radius = max(1.5, 0.004 * max(width, height))
    if len(heads):
        ends = project(np.vstack([heads, tails])).reshape(2, -1, 2)
        for a, b in zip(ends[0], ends[1]):
            _draw_segment(image, a, b, radius, BONE_COLOR)
            _draw_segment(image, a, a, radius * 2.0, (1.0, 0.85, 0.3))
    for starts, stops, color in lines:
        if len(starts):
            ends = project(np.vstack([starts, stops])).reshape(2, -1, 2)
            for a, b in zip(ends[0], ends[1]):
                _draw_segment(image, a, b, max(1.0, 0.5 * radius), color)
    return image


def _fill_triangle(layer, corners, value) -> None:
    x0, y0 = np.floor(corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, layer.shape[1] - 1), min(y1, layer.shape[0] - 1)
    if x0 > x1 or y0 > y1:
        return
    ys, xs = np.mgrid[y0:y1 + 1, x0:x1 + 1]
    px, py = xs + 0.5, ys + 0.5
    (ax, ay), (bx, by), (cx, cy) = corners
    area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    if abs(area) < 1e-12:
        return
    w0 = ((bx - px) * (cy - py) - (by - py) * (cx - px)) / area
    w1 = ((cx - px) * (ay - py) - (cy - py) * (ax - px)) / area
    inside = (w0 >= 0) & (w1 >= 0) & (w0 + w1 <= 1)
    layer[ys[inside], xs[inside]] = value


def _draw_segment(image, a, b, radius, color) -> None:
    steps = max(2, int(np.linalg.norm(b - a) * 2) + 1)
    points = a[None] + np.linspace(0, 1, steps)[:, None] * (b - a)[None]
    r = int(math.ceil(radius))
    offsets = np.mgrid[-r:r + 1, -r:r + 1].reshape(2, -1).T
    offsets = offsets[(offsets ** 2).sum(axis=1) <= radius ** 2]
    pixels = (np.floor(points)[:, None, :] + offsets[None]).reshape(-1, 2).astype(int)
    keep = ((pixels[:, 0] >= 0) & (pixels[:, 0] < image.shape[1])
            & (pixels[:, 1] >= 0) & (pixels[:, 1] < image.shape[0]))
    image[pixels[keep, 1], pixels[keep, 0]] = color


def write_png(filepath, rgb: np.ndarray) -> None:
    """Write an (H, W, 3) uint8 array as an 8-bit RGB PNG."""
    height, width, _ = rgb.shape
    rows = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(filepath, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")
        fh.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        fh.write(chunk(b"IDAT", zlib.compress(rows, 6)))
        fh.write(chunk(b"IEND", b""))
