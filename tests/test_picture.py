# SPDX-License-Identifier: GPL-3.0-or-later
"""core.picture: the numpy front view and PNG writer used where Workbench cannot run."""
import struct
import zlib

import numpy as np

from bonesmith.core import picture


def read_png(path) -> np.ndarray:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    assert (depth, kind) == (8, 2)
    start = data.index(b"IDAT") + 4
    length = struct.unpack(">I", data[start - 8:start - 4])[0]
    rows = np.frombuffer(zlib.decompress(data[start:start + length]), np.uint8).reshape(height, -1)
    assert (rows[:, 0] == 0).all()  # filter type "none" on every row
    return rows[:, 1:].reshape(height, width, 3)


def test_write_png_round_trip(tmp_path):
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    picture.write_png(tmp_path / "x.png", rgb)
    assert np.array_equal(read_png(tmp_path / "x.png"), rgb)


def test_front_view_paints_the_mesh_and_the_bones(tmp_path):
    # a square in the XZ plane (facing the camera) and one vertical bone beside it
    vertices = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]], float)
    faces = np.array([[0, 1, 2], [0, 2, 3]])
    bones = (np.array([[2.0, 0, 0]]), np.array([[2.0, 0, 1]]))
    everything = np.vstack([vertices, *bones])
    picture.draw_front_view(tmp_path / "v.png", vertices, faces, bones, everything, 100)
    image = read_png(tmp_path / "v.png").astype(int)
    assert image.shape[1] == 100 and image.shape[0] < 100  # the longer side is X
    background = np.round(np.array(picture.BACKGROUND) * 255)
    h, w, _ = image.shape
    assert np.abs(image[2, 2] - background).max() <= 1                   # corner: empty
    square = image[h // 2, int(w * 0.25)]                                # inside the square
    assert np.abs(square - background).max() > 20 and square[0] == square[1]  # grey, lit
    bone = image[h // 2, int(w * 0.95)]                                  # on the bone
    assert bone[0] > 200 and bone[2] < 100                               # orange
