"""The installable package: ``pip install .`` gives ``import memory_core`` and the
``falsify`` console script, which is exactly ``python main.py``.

The test installs the project (no dependencies: those come from this venv's
site-packages through a .pth file, the same pinned set) into a new venv, from a
copy of the sources, and runs the script from another directory so nothing is
imported from the checkout. pyproject.toml's pins must equal requirements.txt's.

The installed package is self-sufficient: the viewer's page and the allow-listed
vendor builds (copied by ``make ui`` into memory_core/web/static/vendor/) and the
demo's investigation are package data, so ``falsify --demo`` and ``falsify serve``
work from any directory.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import clean_env
from harness import viewer_url
from test_warm_cli import default_signals
from memory_core.web import vendor

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "memory_core" / "shell" / "demo_data" / "company_x.json"
STATIC = REPO / "memory_core" / "web" / "static"


def pins(text: str) -> dict[str, str]:
    return {
        m.group(1).lower(): m.group(2) for m in re.finditer(r'"?([A-Za-z0-9_.\-]+)==([0-9][^"\s,]*)', text)
    }


def test_pyproject_pins_match_requirements():
    declared = pins(
        (REPO / "pyproject.toml")
        .read_text()
        .split("[project.scripts]")[0]
        .split("[build-system]")[1]
        .split("[project]")[1]
    )
    required = pins((REPO / "requirements.txt").read_text())
    assert declared, "no pins found in pyproject.toml"
    for name, version in declared.items():
        assert required.get(name) == version, (
            f"{name}: pyproject {version}, requirements.txt {required.get(name)}"
        )


def test_the_examples_investigation_is_the_demo_seed():
    """examples/company_x.json (the README's examples) is the packaged demo seed, not a second copy."""
    example = REPO / "examples" / "company_x.json"
    assert example.resolve() == SEED.resolve() or example.read_bytes() == SEED.read_bytes()
    assert json.loads(SEED.read_text())["question"]["key"] == "Q"


def test_package_data_lists_the_viewer_and_the_demo_seed():
    text = (REPO / "pyproject.toml").read_text()
    data = text.split("[tool.setuptools.package-data]")[1]
    for line in [
        '"memory_core.web" = [',
        '"static/*.html"',
        '"static/*.js"',
        '"static/*.css"',
        '"static/vendor/*.js"',
        '"memory_core.shell" = ["demo_data/*.json"]',
    ]:
        assert line in data, line
    served = {p.name for p in STATIC.iterdir() if p.is_file()}
    assert {"graph.html", "app.js", "style.css"} <= served
    assert all(p.suffix in (".html", ".js", ".css") for p in STATIC.iterdir() if p.is_file()), served


def build(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]


PACKAGE_DATA = [
    "memory_core/py.typed",
    "memory_core/web/static/graph.html",
    "memory_core/web/static/app.js",
    "memory_core/web/static/style.css",
    "memory_core/web/static/vendor/THIRD_PARTY_LICENSES.txt",
    "memory_core/shell/demo_data/company_x.json",
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, its site-packages, a directory outside any checkout): a clean ``git clone`` of
    the repository (what is committed, nothing else: no node_modules, no npm), built into an
    sdist and a wheel; the wheel built from that sdist is installed with pip, non-editable."""
    from memory_core.web import vendor

    tmp_path = tmp_path_factory.mktemp("packaging")
    clone = tmp_path / "clone"
    build(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], tmp_path)
    dist = tmp_path / "dist"
    build(
        [sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(dist)!r})"],
        clone,
    )
    sdist = next(dist.glob("falsify-*.tar.gz"))
    build(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist / "direct"),
            str(clone),
        ],
        tmp_path,
    )
    build(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist / "from_sdist"),
            str(sdist),
        ],
        tmp_path,
    )
    import tarfile
    import zipfile

    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    wanted = PACKAGE_DATA + [f"memory_core/web/static/vendor/{name}" for name in vendor.VENDOR]
    assert not [f for f in wanted if f not in in_sdist], "missing from the sdist"
    wheels = [next((dist / kind).glob("falsify-*.whl")) for kind in ("direct", "from_sdist")]
    for wheel in wheels:
        names = set(zipfile.ZipFile(wheel).namelist())
        assert not [f for f in wanted if f not in names], f"missing from {wheel.parent.name}/{wheel.name}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    (site / "_falsify_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            str(wheels[1]),
        ],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return venv, site, elsewhere


@pytest.mark.slow
def test_pip_install_gives_the_falsify_command(installed):
    venv, site, elsewhere = installed
    help_ = subprocess.run(
        [str(venv / "bin" / "falsify"), "--help"], cwd=elsewhere, capture_output=True, text=True
    )
    assert help_.returncode == 0, help_.stderr
    assert "revise" in help_.stdout and "--root" in help_.stdout
    assert help_.stdout.startswith("usage: falsify ")  # the installed command's name, not main.py
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import memory_core, sys; print(memory_core.__file__); "
            "print(sorted(memory_core.__all__)[:3]); from memory_core.store import embedder; "
            "print(embedder._SHIPPED.is_dir())",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr
    path, _, shipped = where.stdout.splitlines()
    assert str(site) in path, path  # the installed copy, not the checkout
    assert shipped == "True"  # the model's metadata files are package data


def get(url: str, path: str):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.slow
def test_installed_demo_and_viewer_need_no_checkout(installed):
    """From another directory, with the installed package only: `falsify --demo` finds its seed
    (package data) and runs both sessions; `falsify serve` on that root serves the page, its
    modules and a vendor build (package data), and the demo's revised graph."""
    venv, site, elsewhere = installed
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from memory_core.shell import demo; "
            "from memory_core.web import app, vendor; print(demo.SEED); print(app.UI_DIR); "
            "print(vendor.vendor_file('react-force-graph-2d.min.js')); print(demo.PROG)",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr
    seed, ui_dir, vendored, prog = where.stdout.splitlines()
    for path in (seed, ui_dir, vendored):
        assert path.startswith(str(site)), path  # the installed copies, not the checkout's
    assert prog == "falsify"

    root = elsewhere / "demo-root"
    env = clean_env(PYTHONUNBUFFERED="1")
    demo = subprocess.run(
        [str(venv / "bin" / "falsify"), "--root", str(root), "--demo"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-3000:]
    assert "Session 1" in demo.stdout and "forward cascade: K invalidated" in demo.stdout
    assert (
        "started clean" not in demo.stdout
    )  # a fresh root: nothing to clear (tests/system/test_demo.py reruns on a used one)
    assert f"falsify --root {root} serve" in demo.stdout  # the hints name the installed command

    server = subprocess.Popen(
        [str(venv / "bin" / "falsify"), "--root", str(root), "serve", "--port", "0"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,  # stopped with SIGINT below, even when the suite runs in the background
    )
    try:
        url = viewer_url(server, 240)
        assert url, (
            f"falsify serve did not start: {server.stderr.read()[-3000:] if server.poll() is not None else ''}"
        )
        status, page = get(url, "/")
        installed_static = (
            site / "memory_core" / "web" / "static"
        )  # the clone's copy (the checkout may differ)
        assert status == 200 and page == (installed_static / "graph.html").read_bytes()
        assert get(url, "/app.js") == (200, (installed_static / "app.js").read_bytes())
        status, script = get(url, "/vendor/react-force-graph-2d.min.js")
        assert status == 200 and script == Path(vendored).read_bytes() and len(script) > 10_000
        for name in vendor.VENDOR:  # every vendor build, from the package (no npm, no checkout)
            status, body = get(url, f"/vendor/{name}")
            assert status == 200 and len(body) > 5_000, name
        status, graph = get(url, "/api/graph")
        states = {n["key"]: n["state"] for n in json.loads(graph)["nodes"]}
        assert status == 200 and states["E_qa"] == "refuted" and states["B"] == "alive" and "K" not in states
        render(url, states)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)


def render(url: str, states: dict) -> None:
    """The installed server's page in headless Chromium: React and the force graph load from
    the package's vendor builds, every node is listed, and the canvas is drawn."""
    try:
        from tests.browser import canvas_pixels, open_page
    except ImportError:
        from browser import canvas_pixels, open_page

    with open_page() as (page, requests, problems):
        page.goto(url)
        page.wait_for_function(
            "n => document.querySelectorAll('#node-list li').length === n", arg=len(states), timeout=30000
        )
        page.wait_for_timeout(1500)  # let the layout settle before looking at the canvas
        listed = page.eval_on_selector_all(
            "#node-list li", "els => Object.fromEntries(els.map(e => [e.dataset.key, e.dataset.state]))"
        )
        assert listed == states
        drawn = canvas_pixels(page)
        assert drawn > 500, "nothing drawn on the graph canvas"
        # not one console error: the CSP allows force-graph's injected <style> elements by hash
        assert not problems, problems
        assert all(any(r.endswith(f"/vendor/{name}") for r in requests) for name in vendor.VENDOR), requests


@pytest.mark.slow
def test_mypy_reads_the_installed_package(installed, mypy_cache):
    """Installed (non-editable), the package's py.typed is what makes mypy use its annotations."""
    from test_typing import TYPED, check_report, mypy

    venv, site, elsewhere = installed
    assert (site / "memory_core" / "py.typed").is_file()
    proc = mypy(
        TYPED / "client.py",
        TYPED / "mistakes.py",
        python=str(venv / "bin" / "python"),
        cwd=elsewhere,
        cache=mypy_cache,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    check_report(proc)
