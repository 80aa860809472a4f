# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify's Generate Rig on the Auto Skeleton metarig of every character (docs/auto_skeleton.md#rigify-metarig-for-any-character).

    PYTHONPATH=... python bench/rigify_generate.py [--data DIR] [--only quat_,zad_] [--limit N] [--timeout 300]

For each record: Auto Skeleton with naming "rigify" (core), the metarig armature
(bridge/armature.py), then Rigify's *Generate Rig* (bridge/rigify.py's generate_rig, in
an empty scene of PyPI bpy, each record in a sandboxed worker process). A success is a
generated rig with a DEF- bone for every metarig bone (a humanoid's heel markers: their
parent's; bridge/rigify.py deforming_copy). Category from the rig itself:
humanoid (recognised as one), quadruped (4 side chains standing on the ground), other.
Tables per category and per source prefix: characters, success rate, IK limb rigs per
generated metarig (limbs.arm / leg / paw / front_paw / rear_paw; a humanoid's standard
metarig has 4), seconds (skeleton, generate: medians), and the failure messages grouped. Writes bench/results/rigify_generate.md.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, Worker, list_records, markdown_table, source_of  # noqa: E402


def run_one(path) -> dict:
    """Auto Skeleton (naming "rigify") and Generate Rig on one record, in a fresh scene."""
    import time

    import bpy

    from bonesmith.bridge import armature as bridge_armature
    from bonesmith.bridge import rigify as bridge_rigify
    from bonesmith.core import records
    from bonesmith.core.skeleton import extract_skeleton

    bpy.ops.wm.read_factory_settings(use_empty=True)
    d = records.read(path)
    t = time.perf_counter()
    sk = extract_skeleton(d["verts"].astype(np.float64), d["faces"].astype(np.int64), naming="rigify")
    skeleton_s = time.perf_counter() - t
    metarig_info = sk.info.get("rigify", {})
    out = {"humanoid": bool(sk.info["humanoid"]), "legs": metarig_info.get("legs", 0),
           "types": metarig_info.get("summary", {}), "bones": len(sk.names), "skeleton_s": skeleton_s}
    metarig = bridge_armature.skeleton_to_armature(sk, name="metarig")
    t = time.perf_counter()
    try:
        rig = bridge_rigify.generate_rig(metarig)
    except Exception as error:        # noqa: BLE001 - Rigify's message is the result
        out.update(ok=False, error=str(error), generate_s=time.perf_counter() - t)
        return out
    out["generate_s"] = time.perf_counter() - t
    # a humanoid leg rig's heel is a marker without a deforming copy: its parent's takes its weights
    own = [b.name for b in metarig.data.bones if f"DEF-{b.name}" in rig.data.bones]
    missing = [b.name for b in metarig.data.bones if bridge_rigify.deforming_copy(b, rig.data.bones) is None]
    out.update(ok=not missing, own_def=len(own), error=f"no DEF bone for {len(missing)} metarig bones" if missing else "")
    return out


def category(result: dict) -> str:
    if result.get("humanoid"):
        return "humanoid"
    return "quadruped" if result.get("legs") == 4 else "other"


def error_group(message: str) -> str:
    """A failure message without its bone names and numbers, to group alike failures."""
    line = next((s for s in message.splitlines() if "Error" in s or "error" in s), message.splitlines()[0] if message else "")
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", line)
    return re.sub(r"\d+(\.\d+)?", "N", line).strip()[:160]


IK_LIMBS = ("limbs.arm", "limbs.leg", "limbs.paw", "limbs.front_paw", "limbs.rear_paw")


def ik_limbs(result: dict) -> int:
    """Limb rigs with IK of a non-humanoid metarig (a humanoid's: its 2 arms and 2 legs)."""
    return 4 if result.get("humanoid") else sum(n for t, n in result.get("types", {}).items() if t in IK_LIMBS)


def summary_rows(groups: dict) -> list:
    rows = []
    for key, results in groups.items():
        ok = [r for r in results if r.get("ok")]
        sk = [r["skeleton_s"] for r in results if "skeleton_s" in r]
        gen = [r["generate_s"] for r in results if "generate_s" in r]
        ik = [ik_limbs(r) for r in ok]
        rows.append([key, len(results), len(ok), f"{100 * len(ok) / len(results):.1f} %",
                     f"{np.mean(ik):.2f}" if ik else "–", sum(k >= 4 for k in ik),
                     f"{np.median(sk):.1f}" if sk else "–", f"{np.median(gen):.2f}" if gen else "–"])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA_DEFAULT))
    ap.add_argument("--only", default=None, help="comma-separated record name prefixes")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    paths = list_records(args.data, args.only, args.limit)
    results = {}
    with Worker() as worker:
        for path in paths:
            reply = worker.call("rigify_generate:run_one", str(path), timeout=args.timeout)
            if reply["status"] == "ok":
                res = reply["result"]
            else:                                      # Auto Skeleton raised, or the worker died
                res = {"ok": False, "error": reply.get("error", reply["status"]), "stage": "skeleton"}
            results[path.stem] = res
            print(f"{path.stem}: {'ok' if res['ok'] else 'FAILED ' + res['error'][:200]} "
                  f"[{category(res)}] {res.get('types', '')}", flush=True)
    by_category, by_source = defaultdict(list), defaultdict(list)
    for name, res in results.items():
        by_category[category(res)].append(res)
        by_source[source_of(name)].append(res)
    header = ["", "characters", "generated", "success", "IK limbs (mean)", "with 4+ IK limbs",
              "skeleton s (median)", "generate s (median)"]
    everything = summary_rows({"all": list(results.values())})
    text = ["# Rigify Generate Rig on every character", "",
            f"`bench/rigify_generate.py` over {len(results)} records of {args.data}"
            + (f" (only {args.only})" if args.only else "") + ": Auto Skeleton with naming \"rigify\", "
            "then Rigify's Generate Rig; success = a rig with a DEF- bone for every metarig bone "
            "(a humanoid's heel markers: their parent's).", "",
            "## Per category", "", markdown_table(header, summary_rows(dict(sorted(by_category.items()))) + everything), "",
            "## Per source", "", markdown_table(header, summary_rows(dict(sorted(by_source.items())))), ""]
    types = Counter()
    for res in results.values():
        if not res.get("humanoid"):
            types.update(res.get("types", {}))
    text += ["## Rigify types on the non-humanoids (chains)", "",
             markdown_table(["type", "chains"], types.most_common()), ""]
    failures = defaultdict(list)
    for name, res in results.items():
        if not res.get("ok"):
            failures[error_group(res.get("error", ""))].append(name)
    text += ["## Failures", ""]
    text += [f"- {msg} ({len(names)}): {', '.join(names[:8])}{' …' if len(names) > 8 else ''}"
             for msg, names in sorted(failures.items(), key=lambda kv: -len(kv[1]))] or ["none"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "rigify_generate.md").write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
