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
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import clean_env
from harness import viewer_url

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "memory_core" / "shell" / "demo_data" / "company_x.json"
STATIC = REPO / "memory_core" / "web" / "static"


def pins(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r'"?([A-Za-z0-9_.\-]+)==([0-9][^"\s,]*)', text)}


def test_pyproject_pins_match_requirements():
    declared = pins((REPO / "pyproject.toml").read_text().split("[project.scripts]")[0].split("[build-system]")[1]
                    .split("[project]")[1])
    required = pins((REPO / "requirements.txt").read_text())
    assert declared, "no pins found in pyproject.toml"
    for name, version in declared.items():
        assert required.get(name) == version, f"{name}: pyproject {version}, requirements.txt {required.get(name)}"


def test_the_examples_investigation_is_the_demo_seed():
    """examples/company_x.json (the README's examples) is the packaged demo seed, not a second copy."""
    example = REPO / "examples" / "company_x.json"
    assert example.resolve() == SEED.resolve() or example.read_bytes() == SEED.read_bytes()
    assert json.loads(SEED.read_text())["question"]["key"] == "Q"


def test_package_data_lists_the_viewer_and_the_demo_seed():
    text = (REPO / "pyproject.toml").read_text()
    data = text.split("[tool.setuptools.package-data]")[1]
    for line in ['"memory_core.web" = [', '"static/*.html"', '"static/*.js"', '"static/*.css"', '"static/vendor/*.js"',
                 '"memory_core.shell" = ["demo_data/*.json"]']:
        assert line in data, line
    served = {p.name for p in STATIC.iterdir() if p.is_file()}
    assert {"graph.html", "app.js", "style.css"} <= served
    assert all(p.suffix in (".html", ".js", ".css") for p in STATIC.iterdir() if p.is_file()), served


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, its site-packages, a directory outside any checkout): the project installed
    with pip, non-editable, from a copy of the sources that holds `make ui`'s vendor copies."""
    from memory_core.web import vendor

    absent = [name for name in vendor.VENDOR if not (vendor.VENDOR_DIR / name).is_file()]
    if absent:
        pytest.fail(f"memory_core/web/static/vendor/ lacks {', '.join(absent)}: {vendor.FIX}")
    tmp_path = tmp_path_factory.mktemp("packaging")
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", ".falsify*", "__pycache__",
                                                             "*.egg-info", "build"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    (site / "_falsify_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                              "--no-deps", "--no-build-isolation", str(src)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return venv, site, elsewhere


@pytest.mark.slow
def test_pip_install_gives_the_falsify_command(installed):
    venv, site, elsewhere = installed
    help_ = subprocess.run([str(venv / "bin" / "falsify"), "--help"], cwd=elsewhere, capture_output=True, text=True)
    assert help_.returncode == 0, help_.stderr
    assert "revise" in help_.stdout and "--root" in help_.stdout
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import memory_core, sys; print(memory_core.__file__); "
                            "print(sorted(memory_core.__all__)[:3]); from memory_core.store import embedder; "
                            "print(embedder._SHIPPED.is_dir())"], cwd=elsewhere, capture_output=True, text=True)
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
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "from memory_core.shell import demo; "
                            "from memory_core.web import app, vendor; print(demo.SEED); print(app.UI_DIR); "
                            "print(vendor.vendor_file('react-force-graph-2d.min.js')); print(demo.PROG)"],
                           cwd=elsewhere, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    seed, ui_dir, vendored, prog = where.stdout.splitlines()
    for path in (seed, ui_dir, vendored):
        assert path.startswith(str(site)), path  # the installed copies, not the checkout's
    assert prog == "falsify"

    root = elsewhere / "demo-root"
    env = clean_env(PYTHONUNBUFFERED="1")
    demo = subprocess.run([str(venv / "bin" / "falsify"), "--root", str(root), "--demo"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=400)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-3000:]
    assert "Session 1" in demo.stdout and "forward cascade: K invalidated" in demo.stdout
    assert f"falsify --root {root} serve" in demo.stdout  # the hints name the installed command

    server = subprocess.Popen([str(venv / "bin" / "falsify"), "--root", str(root), "serve", "--port", "0"],
                              cwd=elsewhere, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = viewer_url(server, 240)
        assert url, f"falsify serve did not start: {server.stderr.read()[-3000:] if server.poll() is not None else ''}"
        status, page = get(url, "/")
        assert status == 200 and page == (STATIC / "graph.html").read_bytes()
        assert get(url, "/app.js") == (200, (STATIC / "app.js").read_bytes())
        status, script = get(url, "/vendor/react-force-graph-2d.min.js")
        assert status == 200 and script == Path(vendored).read_bytes() and len(script) > 10_000
        status, graph = get(url, "/api/graph")
        states = {n["key"]: n["state"] for n in json.loads(graph)["nodes"]}
        assert status == 200 and states["E_qa"] == "refuted" and states["B"] == "alive" and "K" not in states
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
