# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith batch IN_DIR --out OUT_DIR`: Auto Rig every character file of a folder.

Each file is rigged by its own subprocess, `python -m bonesmith skin FILE --auto-skeleton
--out ...` (the tested `skin` path), at most --jobs at a time: a crash, a hang or a memory
blow-up in one file costs that file only. The child writes into OUT_DIR/.bonesmith-partial/
and the output is moved into place only when the child succeeded; the report
(OUT_DIR/report.json, or report-I-of-N.json for a --shard) is rewritten atomically after
every finished file, so an interrupted batch leaves a valid report and no partial outputs.
No bpy here: the parent only schedules.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..core.errors import BonesmithError
from ..core.safe_write import check_writable, save_atomic

CHARACTER_FORMATS = (".obj", ".ply", ".fbx", ".glb", ".gltf", ".blend", ".npz")
BATCH_FORMATS = ("glb", "fbx", "blend", "npz")
PARTIAL_FOLDER = ".bonesmith-partial"
GB_PER_JOB = 2.0
POLL_SECONDS = 0.1
STOP_SECONDS = 5.0   # after Ctrl-C, how long a child gets to end before it is killed
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ERROR_PREFIX = "bonesmith: error:"
EXIT_INTERRUPTED = 130
EXTENSION_PACKAGE = __package__.rpartition(".")[0]   # what `python -m` runs: bonesmith, not bonesmith.cli


def add_parser(commands) -> None:
    batch = commands.add_parser(
        "batch", help="Auto Rig every character file of a folder (one process per file)",
        description="Auto Rig (Auto Skeleton + Auto Skin, as `skin FILE --auto-skeleton`) every "
                    f"character file ({' '.join(CHARACTER_FORMATS)}) under IN_DIR, each in its own "
                    "process, and write OUT_DIR/<sub-folder>/<name>.<format> (a.obj and a.fbx in "
                    "one folder: a_obj.<format>, a_fbx.<format>) and a report "
                    "OUT_DIR/report.json (with --shard I/N: OUT_DIR/report-I-of-N.json). Exit "
                    "status 0 when every file was rigged, 1 when some failed (the others are "
                    "kept), 130 when interrupted.")
    batch.add_argument("in_dir", metavar="IN_DIR", type=Path,
                       help="folder of characters, searched recursively (OUT_DIR inside it is skipped)")
    batch.add_argument("--out", "-o", metavar="OUT_DIR", type=Path, required=True,
                       help="output folder; sub-folders of IN_DIR are mirrored")
    batch.add_argument("--jobs", "-j", type=int, default=None,
                       help="files rigged at once (default: the CPUs, at most one per 2 GB of "
                            "available memory)")
    batch.add_argument("--format", choices=BATCH_FORMATS, default="glb",
                       help="output format (default glb)")
    batch.add_argument("--shard", metavar="I/N", default=None,
                       help="rig only the I-th of N shares of the files (sorted paths, every N-th "
                            "from the I-th), e.g. one per task of a job array; the report is then "
                            "OUT_DIR/report-I-of-N.json")
    batch.add_argument("--resume", action="store_true",
                       help="skip files whose output already exists (they stay ok in the report)")
    batch.add_argument("--timeout", metavar="SECONDS", type=float, default=900.0,
                       help="a file taking longer fails and its process is killed (default 900)")
    batch.add_argument("--detail", type=float, default=1.0,
                       help="joint density of Auto Skeleton (default 1.0)")
    from ..core.rig.presets import PRESETS
    batch.add_argument("--naming", choices=PRESETS, default="bonesmith",
                       help="bone names, as `skin --naming` (humanoids get the standard skeleton)")
    batch.add_argument("--markers", metavar="FILE.json", type=Path, default=None,
                       help="one markers file for every character (as `skin --markers`): for a batch "
                            "of characters that share their joints and frame, e.g. variants of one "
                            "body; rig characters that differ one by one")
    batch.set_defaults(run=run)


# -- what to rig -----------------------------------------------------------------------------

@dataclass
class Task:
    index: int        # position in the sorted list of all files (before sharding)
    source: Path      # IN_DIR / relative
    relative: str     # path under IN_DIR, with "/"
    output: Path      # the final output file


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'I/N' -> (I, N) with 1 <= I <= N; None -> None."""
    if text is None:
        return None
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise BonesmithError(f"--shard {text}: use I/N, e.g. 3/8 for the third of eight shares") from None
    if not 1 <= index <= count:
        raise BonesmithError(f"--shard {text}: I must be from 1 to N (here N is {count})")
    return index, count


def find_characters(in_dir: Path, out_dir: Path) -> list[str]:
    """Paths (relative to in_dir, with '/') of the character files under in_dir, sorted;
    OUT_DIR, when inside in_dir, and partial-output folders are not searched."""
    out_real = os.path.realpath(out_dir)
    found = []
    for root, folders, files in os.walk(in_dir):
        folders[:] = [name for name in folders if name != PARTIAL_FOLDER
                      and os.path.realpath(os.path.join(root, name)) != out_real]
        for name in files:
            if Path(name).suffix.lower() in CHARACTER_FORMATS:
                found.append(Path(root, name).relative_to(in_dir).as_posix())
    return sorted(found)


def output_names(relatives: list[str], fmt: str) -> list[str]:
    """Output path (relative to OUT_DIR) of each input: same folder and stem, `fmt` suffix;
    inputs of one folder sharing a stem (a.obj, a.fbx) get a_obj.glb, a_fbx.glb."""
    def key(relative):
        path = Path(relative)
        return path.parent.as_posix(), path.stem.lower()

    counts = {}
    for relative in relatives:
        counts[key(relative)] = counts.get(key(relative), 0) + 1
    names = []
    for relative in relatives:
        path = Path(relative)
        stem = path.stem if counts[key(relative)] == 1 else f"{path.stem}_{path.suffix[1:].lower()}"
        names.append(path.with_name(f"{stem}.{fmt}").as_posix())
    _check_unique(relatives, names)
    return names


def _check_unique(relatives, names) -> None:
    seen = {}
    for relative, name in zip(relatives, names):
        other = seen.setdefault(name.lower(), relative)
        if other != relative:
            raise BonesmithError(f"{other} and {relative} would both be written to {name}: rename one")


def make_tasks(in_dir: Path, out_dir: Path, fmt: str, shard) -> list[Task]:
    relatives = find_characters(in_dir, out_dir)
    if not relatives:
        raise BonesmithError(f"No character files ({' '.join(CHARACTER_FORMATS)}) in {in_dir}")
    tasks = [Task(k, in_dir / relative, relative, out_dir / name)
             for k, (relative, name) in enumerate(zip(relatives, output_names(relatives, fmt)))]
    if shard is not None:
        index, count = shard
        tasks = [task for task in tasks if task.index % count == index - 1]
    return tasks


def report_path(out_dir: Path, shard) -> Path:
    return out_dir / ("report.json" if shard is None else f"report-{shard[0]}-of-{shard[1]}.json")


# -- resources -------------------------------------------------------------------------------

def cpu_count() -> int:
    """CPUs this process may use (a Slurm or taskset allocation, else the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def available_gb() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (AttributeError, ValueError, OSError):
        return None


def default_jobs() -> int:
    """One job per CPU, at most one per GB_PER_JOB of available memory."""
    jobs, memory = cpu_count(), available_gb()
    if memory is not None:
        jobs = min(jobs, int(memory // GB_PER_JOB))
    return max(1, jobs)


# -- one child process per file ----------------------------------------------------------------

@dataclass
class Running:
    task: Task
    partial: Path
    process: subprocess.Popen
    stderr: IO[bytes]
    started: float


def child_env(threads: int) -> dict:
    """This environment, with this process's import path (so the child imports this very
    package) and BLAS/OpenMP threads limited to this job's share unless already set."""
    env = dict(os.environ)
    paths = [os.path.abspath(p or os.curdir) for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if os.path.exists(p)))
    for name in THREAD_VARIABLES:
        env.setdefault(name, str(threads))
    return env


def child_command(task: Task, partial: Path, detail: float, naming: str = "bonesmith",
                  markers: Path | None = None) -> list[str]:
    return [sys.executable, "-m", EXTENSION_PACKAGE, "skin", str(task.source), "--auto-skeleton",
            "--detail", str(detail), "--naming", naming, "--out", str(partial),
            *(["--markers", str(Path(markers).resolve())] if markers is not None else [])]


def start(task: Task, partial_dir: Path, fmt: str, detail: float, env: dict,
          naming: str = "bonesmith", markers: Path | None = None) -> Running:
    partial = partial_dir / f"{task.index:05d}-{uuid.uuid4().hex[:12]}.{fmt}"
    stderr = tempfile.TemporaryFile()
    process = subprocess.Popen(child_command(task, partial, detail, naming, markers), env=env,
                               stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    return Running(task, partial, process, stderr, time.monotonic())


def signal_group(process: subprocess.Popen, signum: int) -> None:
    """`signum` to the child and everything it started (its own session)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signum)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def wait_group_gone(process: subprocess.Popen, seconds: float = STOP_SECONDS) -> None:
    """After the child itself ended: kill what it started (a forked worker carries the
    child's command line) and wait, at most `seconds`, until its session has no process
    left, so that nothing of the file's work outlives the batch."""
    if not hasattr(os, "killpg"):
        return
    signal_group(process, signal.SIGKILL)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.02)


def poll(running: Running, timeout: float) -> dict | None:
    """The report entry of a finished (or timed-out, then killed) child; None while it runs."""
    seconds = time.monotonic() - running.started
    if running.process.poll() is None:
        if seconds <= timeout:
            return None
        signal_group(running.process, signal.SIGKILL)
        running.process.wait()
        return finish(running, seconds, f"timed out after {timeout:g} s")
    return finish(running, seconds, None)


def finish(running: Running, seconds: float, error: str | None) -> dict:
    """Move the child's output into place when it succeeded; else remove what it left."""
    task, returncode = running.task, running.process.returncode
    running.stderr.seek(0)
    stderr = running.stderr.read().decode("utf-8", "replace")
    running.stderr.close()
    if error is None and returncode != 0:
        error = error_line(stderr, returncode)
    if error is None and not running.partial.is_file():
        error = "the child wrote no output"
    if error is None:
        error = move_into_place(running.partial, task.output)
    running.partial.unlink(missing_ok=True)
    return entry(task, error, seconds)


def move_into_place(partial: Path, output: Path) -> str | None:
    """None, or why the finished output could not replace `output` (that file fails, the
    batch goes on)."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        os.replace(partial, output)
    except OSError as error:
        return f"Cannot write {output}: {error.strerror or error}"
    return None


def error_line(stderr: str, returncode: int) -> str:
    """The child's last 'bonesmith: error:' message, else what killed it, else its last
    line of stderr, else its exit status."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(ERROR_PREFIX)]
    if errors:
        return errors[-1][len(ERROR_PREFIX):].strip()
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return lines[-1] if lines else f"exit status {returncode}"


def stop(children: list[Running]) -> None:
    """End children early (Ctrl-C, an error): terminate them, kill the ones that linger,
    drop their partial outputs."""
    for child in children:
        signal_group(child.process, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            signal_group(child.process, signal.SIGKILL)
            child.process.wait()
        wait_group_gone(child.process)
        child.stderr.close()
        child.partial.unlink(missing_ok=True)


def entry(task: Task, error: str | None, seconds: float) -> dict:
    return {"input": str(task.source), "status": "ok" if error is None else "failed", "error": error,
            "output": str(task.output) if error is None else None, "seconds": round(seconds, 2)}


_interrupt = {"held": False, "pending": False}


def _raise_interrupt(signum, frame):
    """SIGINT / SIGTERM handler: KeyboardInterrupt, or, while a child is being started,
    once it is started (an interrupt between the fork and `running.append` would leave
    that child running after the batch)."""
    if _interrupt["held"]:
        _interrupt["pending"] = True
        return
    raise KeyboardInterrupt


@contextmanager
def _interrupts_held():
    _interrupt["held"], _interrupt["pending"] = True, False
    try:
        yield
    finally:
        _interrupt["held"] = False
    if _interrupt["pending"]:
        _interrupt["pending"] = False
        raise KeyboardInterrupt


def run_all(tasks: list[Task], jobs: int, timeout: float, launch, on_done) -> None:
    """Run `launch(task) -> Running` for every task, at most `jobs` at once; `on_done(task,
    entry)` as each ends. On KeyboardInterrupt (or any error) the running children are
    stopped first."""
    pending, running = list(tasks), []
    try:
        while pending or running:
            while pending and len(running) < jobs:
                with _interrupts_held():       # a child just started is in `running` before Ctrl-C acts
                    running.append(launch(pending.pop(0)))
            time.sleep(POLL_SECONDS)
            for child in list(running):
                result = poll(child, timeout)
                if result is not None:
                    running.remove(child)
                    on_done(child.task, result)
    except BaseException:
        stop(running)
        raise


# -- report and progress -------------------------------------------------------------------------

def write_report(path: Path, entries: dict) -> None:
    """The entries (index -> entry) in input order, as JSON, atomically."""
    text = json.dumps([entries[k] for k in sorted(entries)], indent=2) + "\n"
    save_atomic(lambda partial: partial.write_text(text), path)


def previous_entries(path: Path) -> dict:
    """input -> entry of the ok entries of an earlier report ({} when there is none)."""
    try:
        entries = json.loads(path.read_text())
        return {e["input"]: e for e in entries if isinstance(e, dict) and e.get("status") == "ok"}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def resumed_entries(tasks: list[Task], report: Path) -> dict:
    """index -> entry of the tasks whose output already exists (--resume)."""
    previous = previous_entries(report)
    done = {}
    for task in tasks:
        if task.output.is_file():
            old = previous.get(str(task.source))
            done[task.index] = entry(task, None, old["seconds"] if old else 0.0)
    return done


def clock(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


class Progress:
    """One line per finished file on stderr (redrawn in place on a terminal):
    `[ 3/10] ok 2 failed 1 | 00:42 elapsed, ETA 01:30 | body.obj ok 12.3 s`."""

    def __init__(self, total: int, jobs: int, stream=None):
        self.total, self.jobs, self.stream = total, jobs, stream or sys.stderr
        self.live = self.stream.isatty()
        self.started, self.ok, self.failed, self.seconds, self.width = time.monotonic(), 0, 0, 0.0, 0

    def done(self, name: str, result: dict) -> None:
        ok = result["status"] == "ok"
        self.ok, self.failed = self.ok + ok, self.failed + (not ok)
        self.seconds += result["seconds"]
        finished = self.ok + self.failed
        remaining = self.total - finished
        eta = self.seconds / finished * remaining / max(1, min(self.jobs, remaining))
        n = len(str(self.total))
        line = (f"[{finished:>{n}}/{self.total}] ok {self.ok} failed {self.failed} | "
                f"{clock(time.monotonic() - self.started)} elapsed, ETA {clock(eta)} | "
                f"{name} {result['status']} {result['seconds']:.1f} s")
        if self.live:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.width:
            self.stream.write("\n")
            self.stream.flush()


def summary(tasks: list[Task], entries: dict, skipped: int, seconds: float, report: Path) -> str:
    failed = [(task, entries[task.index]) for task in tasks
              if entries.get(task.index, {}).get("status") == "failed"]
    ok = sum(e["status"] == "ok" for e in entries.values())
    lines = [f"batch: {len(tasks)} files, {ok} ok" + (f" ({skipped} skipped: done before)" if skipped else "")
             + f", {len(failed)} failed in {seconds:.1f} s", f"  report  {report}"]
    lines += [f"  failed {task.relative}: {result['error']}" for task, result in failed]
    return "\n".join(lines)


# -- the command -------------------------------------------------------------------------------------

def check_options(args):
    """(shard, jobs or None) after the usage checks that need no file system."""
    shard = parse_shard(args.shard)
    if args.jobs is not None and args.jobs < 1:
        raise BonesmithError("--jobs must be at least 1")
    if not args.timeout > 0:
        raise BonesmithError("--timeout must be more than 0 seconds")
    if getattr(args, "markers", None) is not None:   # refused once here, not once per file
        from ..core.rig.markers import load
        load(args.markers)
    return shard, args.jobs


def check_folders(in_dir: Path, out_dir: Path, report: Path) -> None:
    if not in_dir.exists():
        raise BonesmithError(f"Folder not found: {in_dir}")
    if not in_dir.is_dir():
        raise BonesmithError(f"{in_dir} is not a folder: batch rigs the character files of a folder "
                             "(for one file use `skin FILE --auto-skeleton`)")
    if os.path.realpath(in_dir) == os.path.realpath(out_dir):
        raise BonesmithError("--out must be another folder than IN_DIR (e.g. a sub-folder of it)")
    check_writable(report)


def run(args) -> int:
    shard, jobs = check_options(args)
    report = report_path(args.out, shard)
    check_folders(args.in_dir, args.out, report)
    tasks = make_tasks(args.in_dir, args.out, args.format, shard)
    entries = resumed_entries(tasks, report) if args.resume else {}
    todo = [task for task in tasks if task.index not in entries]
    jobs = max(1, min(jobs or default_jobs(), len(todo)))
    print(f"batch: {len(tasks)} character files" + (f" (shard {shard[0]}/{shard[1]})" if shard else "")
          + (f", {len(entries)} skipped: already rigged (--resume)" if args.resume else "")
          + f", {len(todo)} to rig with {jobs} job{'s' if jobs > 1 else ''}", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    partial_dir = args.out / PARTIAL_FOLDER
    partial_dir.mkdir(exist_ok=True)
    env = child_env(max(1, cpu_count() // jobs))
    progress = Progress(len(todo), jobs)

    def on_done(task, result):
        entries[task.index] = result
        write_report(report, entries)
        progress.done(task.relative, result)

    started = time.monotonic()
    previous_handler = signal.signal(signal.SIGTERM, _raise_interrupt)  # scancel, a job's time limit
    # Ctrl-C even when started with SIGINT ignored (a script's background job): Python then
    # installs no KeyboardInterrupt of its own
    previous_int = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        write_report(report, entries)
        run_all(todo, jobs, args.timeout,
                lambda task: start(task, partial_dir, args.format, args.detail, env, args.naming, args.markers),
                on_done)
    except KeyboardInterrupt:
        progress.close()
        write_report(report, entries)
        print(f"batch: interrupted; {len(entries)} of {len(tasks)} files in {report}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        signal.signal(signal.SIGINT, previous_int)
        _remove_if_empty(partial_dir)
    progress.close()
    print(summary(tasks, entries, len(tasks) - len(todo), time.monotonic() - started, report))
    return 0 if all(e["status"] == "ok" for e in entries.values()) else 1


def _remove_if_empty(folder: Path) -> None:
    """The partial folder goes when empty (another shard sharing OUT_DIR may still use it)."""
    try:
        folder.rmdir()
    except OSError:
        pass
