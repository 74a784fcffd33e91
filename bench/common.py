"""Measuring helpers the benchmarks share: the machine line, percentiles and
summaries, precision/recall, resident memory, disk use, stdout kept for JSON, a real
``serve`` started and stopped. Every benchmark prints the machine and date it measured
on; nothing here asserts a figure."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import queue
import resource
import signal
import statistics
import subprocess
import sys
import threading
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    values = sorted(values)
    if len(values) == 1:
        return values[0]
    pos = (len(values) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(pct(values, 0.5), 3),
        "p95": round(pct(values, 0.95), 3),
        "mean": round(statistics.fmean(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def scores(tp: int, fp: int, fn: int) -> dict:
    return {
        "precision": round(tp / (tp + fp), 6) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 6) if tp + fn else 1.0,
    }


def cpu_model() -> Optional[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine() -> dict:
    """Where and when a figure was measured (and at which commit)."""
    try:
        from importlib.metadata import version

        cognee_version = version("cognee")
    except Exception:  # noqa: BLE001
        cognee_version = None
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    commit = None
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "memory_core"], cwd=REPO, capture_output=True, text=True
        )
        if head.returncode == 0:
            commit = head.stdout.strip() + (
                " (memory_core has uncommitted changes)" if dirty.stdout.strip() else ""
            )
    except OSError:
        pass
    return {
        "commit": commit,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_gb": mem,
        "cognee": cognee_version,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def start_serve(root: Path, env: dict) -> subprocess.Popen:
    """A real ``python main.py --root ROOT serve --port 0`` in ``env``, returned once it printed its
    "FALSIFY viewer:" line (the root is open, the server answers). Its output goes on being read
    (a full pipe would stall it); a server that does not get there within 900 s is stopped."""
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), "--root", str(root), "serve", "--port", "0"],
        cwd=REPO,
        env=dict(env, PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        while not lines.get(timeout=900).startswith("FALSIFY viewer: "):
            pass
    except BaseException:
        stop_serve(proc)
        raise
    return proc


def stop_serve(proc: subprocess.Popen) -> None:
    """Stop a server from :func:`start_serve` as Ctrl-C does (killed when it has not ended in 120 s)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()


def machine_line() -> str:
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU(s) {cpu_model() or ''}, "
        f"Python {platform.python_version()}"
    )


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB


def rss_mb() -> float:
    """Resident set size now (VmRSS), in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def disk_usage(root: Path) -> dict:
    """Bytes on disk under the data root, by top-level part (graph, vectors, ...)."""
    sizes: dict[str, int] = {}
    for path in Path(root).rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(root).parts
                part = "/".join(rel[:3]) if rel[0] == "cognee_system" else rel[0]
                sizes[part] = sizes.get(part, 0) + path.stat().st_blocks * 512
        except OSError:
            continue
    return {"total": sum(sizes.values()), **dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:6])}


@contextlib.contextmanager
def stdout_to_stderr(active: bool):
    """Keep stdout for our JSON only: anything else (cognee's migrations, native
    prints) goes to stderr while the run lasts."""
    if not active:
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = os.fdopen(os.dup(saved), "w")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield real
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def save(result: dict, out: Optional[str]) -> None:
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1))


def fmt(value, unit="") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.1f}{unit}" if value >= 10 else f"{value:.2f}{unit}"
    return f"{value}{unit}"
