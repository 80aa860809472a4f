# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared helpers for the benchmarks: records, graph statistics, sandboxed workers.

A `Worker` is a separate Python process (spawned, not forked) that runs one task at a
time; a task that raises, crashes the process or runs past its timeout is reported as
a failure and the process is replaced, so a hanging or crashing competitor never
stalls or kills the benchmark.
"""
from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import resource
import time
import traceback
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA_DEFAULT = REPO.parent / "shared" / "data"
RESULTS = REPO / "bench" / "results"
SOURCES = ("quat_", "quatU_", "mpfb_", "kenney_", "ojg_", "zad_", "gdq_", "m2m_")


def source_of(name: str) -> str:
    for s in SOURCES:
        if name.startswith(s):
            return s
    return "other"


def list_records(data_dir, only=None, limit=None):
    """Sorted record paths (*.npz) whose stem starts with `only` (comma-separated prefixes)."""
    paths = sorted(Path(data_dir).glob("*.npz"))
    if only:
        prefixes = tuple(p.strip() for p in only.split(",") if p.strip())
        paths = [p for p in paths if p.stem.startswith(prefixes)]
    if limit:
        paths = paths[:limit]
    return paths


def load_record(path) -> dict:
    """The arrays a skeleton benchmark needs from one record (core/records.py)."""
    from bonesmith.core import records

    d = records.read(path, records.MESH + ("joints", "joint_tails", "parents"))
    return {
        "name": Path(path).stem,
        "verts": d["verts"].astype(np.float64),
        "faces": d["faces"].astype(np.int64),
        "joints": d["joints"].astype(np.float64),
        "tails": d["joint_tails"].astype(np.float64),
        "parents": d["parents"].astype(np.int64),
    }


def subdivided(V, F, W, levels: int, jitter: float = 0.0):
    """(V, F, W) midpoint-subdivided `levels` times, the weights (V, J) interpolated onto
    the midpoints: the same character at about 4**levels the vertices, with its artist's
    weights as the reference (W None: the mesh only). jitter > 0: the new vertices then
    moved at random (seeded) by about that share of the size, so that the mesh is no exact
    subdivision (Auto Skin would weight the original under one:
    docs/auto_skin.md#subdivided-meshes)."""
    from bonesmith.core.mesh import subdivide_midpoint, unique_edges
    n0 = len(V)
    for _ in range(levels):
        e = unique_edges(F)            # subdivide_midpoint's order of the new vertices
        V, F = subdivide_midpoint(V, F)
        if W is not None:
            W = np.vstack([W, 0.5 * (W[e[:, 0]] + W[e[:, 1]])])
    if jitter > 0 and len(V) > n0:
        V = V.copy()
        V[n0:] += np.random.default_rng(0).normal(scale=jitter * np.ptp(V, axis=0).max(), size=(len(V) - n0, 3))
    return V, F, W


def normalise(V):
    """Centre on the bounding-box centre and scale the largest extent to 1.

    Returns (Vn, centre, scale) with V = Vn * scale + centre."""
    V = np.asarray(V, dtype=np.float64)
    lo, hi = V.min(axis=0), V.max(axis=0)
    centre = 0.5 * (lo + hi)
    scale = float((hi - lo).max()) or 1.0
    return (V - centre) / scale, centre, scale


def graph_tree_stats(n_nodes: int, edges) -> tuple[int, bool]:
    """(connected components, is one tree) of an undirected graph on n_nodes nodes."""
    from bonesmith.core.mesh import edge_components
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if n_nodes == 0:
        return 0, False
    n_comp, _ = edge_components(n_nodes, edges)
    return int(n_comp), bool(n_comp == 1 and len(edges) == n_nodes - 1)


def parents_tree_stats(parents) -> tuple[int, bool]:
    """(number of roots, parents form exactly one tree) for a parent array (-1 = root)."""
    p = np.asarray(parents, dtype=np.int64).reshape(-1)
    n = len(p)
    if n == 0:
        return 0, False
    roots = int(np.count_nonzero(p < 0))
    if np.any(p >= n) or np.any(p == np.arange(n)):
        return roots, False
    # every joint must reach a root within n steps (no cycles)
    cur = p.copy()
    for _ in range(n):
        nxt = np.where(cur >= 0, p[np.maximum(cur, 0)], -1)
        if np.array_equal(nxt, cur):
            break
        cur = nxt
    acyclic = bool(np.all(cur < 0))
    return roots, bool(roots == 1 and acyclic)


# --------------------------------------------------------------------------- workers

def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def _current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def _proc_peak_rss_mb(pid: int) -> float:
    """RSS high-water mark (VmHWM) of a running process, from /proc; nan if unknown."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return float("nan")


def _worker_main(conn, quiet: bool):
    if quiet:
        # Competitors print from C code; keep the benchmark's own output readable.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg is None:
            break
        target, args, kwargs = msg
        module, _, func = target.partition(":")
        try:
            fn = getattr(importlib.import_module(module), func)
            baseline = _current_rss_mb()
            out = fn(*args, **kwargs)
            reply = {"ok": True, "result": out}
        except BaseException as exc:  # noqa: BLE001 - report anything the method raises
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc(limit=6)}
            baseline = float("nan")
        reply["peak_rss_mb"] = _peak_rss_mb()
        reply["baseline_rss_mb"] = baseline
        conn.send(reply)


class Worker:
    """A spawned process that runs `module:function(*args, **kwargs)` calls one at a time."""

    def __init__(self, quiet: bool = True):
        self.quiet = quiet
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None

    def _start(self):
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_worker_main, args=(child, self.quiet), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent

    def close(self):
        if self._proc is None:
            return
        try:
            self._conn.send(None)
            self._proc.join(5)
        except (OSError, BrokenPipeError):
            pass
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()
        self._proc = None

    def kill(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
            self._conn.close()
            self._proc = None

    def call(self, target: str, *args, timeout: float = 120.0, **kwargs) -> dict:
        """Run target in the worker. Returns a dict with "status" ok / error / timeout /
        crash, "result" when ok, "error" text otherwise, "wall" seconds seen from here and
        the worker's "peak_rss_mb" (high-water mark of the whole worker process)."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        t0 = time.perf_counter()
        try:
            self._conn.send((target, args, kwargs))
            ready = self._conn.poll(timeout)
        except (OSError, BrokenPipeError, EOFError) as exc:
            self.kill()
            return {"status": "crash", "error": f"worker died: {exc}", "wall": time.perf_counter() - t0}
        if not ready:
            peak = _proc_peak_rss_mb(self._proc.pid)   # read before the process goes
            self.kill()
            return {"status": "timeout", "error": f"no answer within {timeout:g} s",
                    "wall": time.perf_counter() - t0, "peak_rss_mb": peak}
        try:
            reply = self._conn.recv()
        except (EOFError, OSError) as exc:
            code = self._proc.exitcode if self._proc is not None else None
            self.kill()
            return {"status": "crash", "error": f"worker died (exit code {code}): {exc}",
                    "wall": time.perf_counter() - t0}
        reply["wall"] = time.perf_counter() - t0
        reply["status"] = "ok" if reply.pop("ok") else "error"
        return reply

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def fmt(x, digits=2) -> str:
    """Number for a markdown table; '–' for missing."""
    if x is None:
        return "–"
    try:
        if isinstance(x, float) and not np.isfinite(x):
            return "–"
    except TypeError:
        pass
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}f}"


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
