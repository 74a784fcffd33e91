"""The FALSIFY launcher: a per-user process that has paid the start-up imports once and
forks one child per CLI command, so every command after the first starts warm.

A cold ``python main.py status`` spends most of its time importing cognee's third-party
stack (litellm, openai, dlt, pyarrow, sqlalchemy, ...). The launcher imports that
stack once -- never cognee, FALSIFY, lancedb, huggingface_hub or fastembed, which read
their settings (or start threads) at import -- and waits on a Unix socket. A command
(:func:`launch`, run by ``main.py`` and the ``falsify`` script before anything heavy is
imported: this module is standard library only) hands it its standard streams (the file
descriptors themselves, over the socket), arguments, environment, working directory and
umask; the launcher forks a child that takes them over and runs the CLI exactly as a cold
process would: it reads its settings from the caller's environment, configures its data
root, imports cognee itself, takes the writer lock (a second writer is refused as on the
cold path), and reaches a ``serve`` holding the root as today. The caller waits for its
exit status and passes on the signals it receives (Ctrl-C), to the child's process group.

Rules:

* **Keyed to the code it runs**: the socket's name carries a fingerprint of the install
  (this package's path, its files' sizes and times, the interpreter and its
  site-packages), so an edited checkout, an upgrade or another checkout never reaches a
  launcher that holds other code; and a digest of the environment variables the
  launcher's imports read (recorded while it imported) plus the ones native libraries and
  the interpreter read, so a command whose environment would change what those imports
  did gets a launcher of its own.
* **Private**: the socket is ``<runtime>/<key>.sock`` (0600) in a directory of the user's
  own (0700; ``$FALSIFY_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/falsify``, else
  ``<tmp>/falsify-<uid>``); a directory with other permissions or owner is not used, and
  the launcher answers only its own user (``SO_PEERCRED``).
* **Never twice**: the child writes its pid to the caller before it does anything; a
  caller that saw no pid may run the command itself (nothing ran), one that did never
  does. The child reports its exit code itself, so the command's result reaches the
  caller even if the launcher dies mid-command; the launcher reports a death by signal.
* **Starts itself, stops itself**: the first command starts the launcher (and waits for
  it: that command pays the cold start); it exits after ``FALSIFY_LAUNCHER_IDLE_S`` seconds
  without a command, when its socket is taken away, or when the code it was started
  for has changed.
* **Bypass**: ``FALSIFY_NO_SERVER=1`` or ``--cold`` (nothing forwarded, nothing launched),
  ``FALSIFY_LAUNCHER=0`` (no launcher; a ``serve`` on the root still answers); interpreter
  options the launcher was not started with (``-X``, ``-W``, ...) run the command cold.

``serve`` runs in the caller's own process (long-lived: its start-up is paid once anyway).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any, Optional, TypedDict

PROTOCOL = 1
EXIT_INTERRUPTED = 130  # Ctrl-C, as the CLI answers it (memory_core.shell.commands.run)
PACKAGE = Path(__file__).resolve().parent.parent  # memory_core/
# what the launcher imports before it forks: cognee's third-party stack and the MCP SDK
# (imports that start no thread and read no FALSIFY or cognee setting); not the packages a
# command's import of cognee gets stand-ins for (memory_core.store.lazy_imports.DEFERRED)
PRELOAD = (
    "litellm",
    "openai",
    "sqlalchemy",
    "sqlalchemy.orm",
    "sqlalchemy.ext.asyncio",
    "pyarrow",
    "pyarrow.dataset",
    "onnxruntime",
    "tokenizers",
    "alembic",
    "aiosqlite",
    "lance_namespace",
    "lance_namespace_urllib3_client",
    "pydantic",
    "pydantic_settings",
    "fastapi",
    "httpx",
    "numpy",
    "tiktoken",
    "instructor",
    "structlog",
    "psycopg2",
    "asyncpg",
    "redis",
    "rdflib",
    "fastapi_users",
    "fastapi_users_db_sqlalchemy",
    "cryptography",
    "PIL",
    "jwt",
    "argon2",
    "pwdlib",
    "filelock",
    "diskcache",
    "regex",
    "tzlocal",
    "wrapt",
    "filetype",
    "ladybug",
    "uvicorn",
    "starlette",
    "mcp",
    "mcp.server.mcpserver",
    "dotenv",
    "tenacity",
    "jinja2",
    "aiohttp",
    "playwright.async_api",
    "pyee",
    "loguru",
    "tqdm",
    "tqdm.auto",
    "overrides",
    "deprecated",
    "deprecation",
    "aiolimiter",
    "mmh3",
    "py_rust_stemmers",
    "sqlalchemy.dialects.sqlite",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "sqlalchemy.dialects.postgresql",
    "numpy.typing",
    "multiprocessing.sharedctypes",
    "symtable",
    "webbrowser",
    "http.server",
    "xml.sax.saxutils",
    "sqlalchemy.ext.mutable",
    "tqdm.contrib.concurrent",
)
# what only a command calling a hosted model imports (offline, cognee's import of litellm is deferred)
HOSTED_ONLY = ("litellm", "instructor")
# "package.*": the package and every module in it (pure data modules cognee's import loads one by one)
# never imported by the launcher: they read settings into constants (or start threads) at import
NEVER = ("cognee", "memory_core", "lancedb", "huggingface_hub", "fastembed", "transformers")
# environment variables that always key the launcher, read or not by a Python import:
# native libraries and the interpreter read them (locale, allocator, thread pools, paths)
ALWAYS = (
    "HOME",
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "FALSIFY_ARROW_POOL",
)
ALWAYS_PREFIXES = ("PYTHON", "LC_", "MALLOC_", "OMP_", "OPENBLAS_", "MKL_", "ARROW_")
NOT_LAUNCHED = frozenset({"serve"})
SOCKET_MAX = 104  # sun_path is 108 bytes on Linux (104 on the BSDs)


# ---- settings and places ---------------------------------------------------------------


def _lazy_imports():
    """memory_core.store.lazy_imports (standard library only), loaded on its own when memory_core
    is not imported, as :func:`_settings` loads remote.py."""
    if "memory_core.store.lazy_imports" in sys.modules:
        return sys.modules["memory_core.store.lazy_imports"]
    import importlib.util

    name = "falsify_lazy_imports"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, PACKAGE / "store" / "lazy_imports.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before it runs: its dataclasses look their module up
        spec.loader.exec_module(module)
    return module


def _settings():
    """FALSIFY's settings as this process's environment gives them (memory_core.store.settings,
    loaded on its own when memory_core is not imported: remote._settings)."""
    if "memory_core.shell.remote" in sys.modules:
        return sys.modules["memory_core.shell.remote"]._settings()
    import importlib.util

    name = "falsify_remote"
    remote = sys.modules.get(name)
    if remote is None:
        spec = importlib.util.spec_from_file_location(name, PACKAGE / "shell" / "remote.py")
        remote = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(remote)
        sys.modules[name] = remote
    return remote._settings()


def runtime_dir(settings) -> tuple[Optional[Path], str]:
    """(the user's private runtime directory, created 0700 if missing; or None, why not)."""
    if settings.runtime_dir:
        base = Path(settings.runtime_dir).expanduser()
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = Path(os.environ["XDG_RUNTIME_DIR"]) / "falsify"
    else:
        import tempfile

        base = Path(tempfile.gettempdir()) / f"falsify-{os.getuid()}"
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(base)
    except OSError as error:
        return None, f"runtime directory {base}: {error.strerror}"
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None, (
            f"runtime directory {base} is not private (it must be a directory of this user's, mode 0700)"
        )
    return base, ""


def fingerprint() -> str:
    """What the launcher's children run: this package (its path, and each source file's size
    and time), the interpreter (its path, version and binary) and its site-packages (a
    directory whose time changes when a package is installed, upgraded or removed)."""
    import hashlib

    h = hashlib.sha256()
    exe = os.path.realpath(sys.executable)
    st = os.stat(exe)
    h.update(
        repr(
            (
                PROTOCOL,
                str(PACKAGE),
                sys.executable,
                exe,
                st.st_size,
                st.st_mtime_ns,
                sys.version,
                sys.prefix,
                sys.base_prefix,
            )
        ).encode()
    )
    import site

    for folder in sorted(set(getattr(site, "getsitepackages", list)())):
        try:
            h.update(f"{folder}:{os.stat(folder).st_mtime_ns}\n".encode())
        except OSError:
            pass
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def interpreter_options() -> list:
    """The interpreter options a command runs with (``-X``, ``-W``, ``-O``, ``-u``, ...):
    a launcher's children have the launcher's."""
    return [list(sys.flags), sorted(sys.warnoptions), sorted(f"{k}={v}" for k, v in sys._xoptions.items())]


def environment_digest(keys: dict, env=None) -> str:
    """A digest of the environment variables that key a launcher, present or not: those its
    imports read (``keys["names"]``, and every variable starting with one of
    ``keys["prefixes"]``) and :data:`ALWAYS` / :data:`ALWAYS_PREFIXES`."""
    import hashlib

    env = os.environ if env is None else env
    prefixes = (*ALWAYS_PREFIXES, *keys.get("prefixes", ()))
    names = sorted({*keys.get("names", ()), *ALWAYS, *(k for k in env if k.startswith(prefixes))})
    return hashlib.sha256(json.dumps([[k, env.get(k)] for k in names]).encode()).hexdigest()


def _paths(base: Path, code: str) -> dict:
    return {
        "keys": base / f"L{code[:16]}.keys",
        "lock": base / f"L{code[:16]}.lock",
        "log": base / f"L{code[:16]}.log",
    }


def socket_path(base: Path, code: str, env_digest: str) -> Path:
    return base / f"L{code[:16]}-{env_digest[:16]}.sock"


def _read_keys(path: Path) -> Optional[dict]:
    try:
        keys = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(keys, dict) and all(
        isinstance(keys.get(f), list) and all(isinstance(k, str) for k in keys[f])
        for f in ("names", "prefixes")
    )
    return keys if ok else None


# ---- the caller ------------------------------------------------------------------------


class Outcome:
    """What :func:`launch` did: ``code`` is the command's exit code when the launcher ran it,
    None when the caller must run it itself (``reason`` says why, for ``status``)."""

    def __init__(self, code: Optional[int] = None, reason: str = ""):
        self.code = code
        self.reason = reason


def _command_of(argv: list[str]) -> Optional[str]:
    """The CLI command named on ``argv`` (None: none, e.g. ``--help`` or ``--demo``)."""
    takes_value = {"--root", "--database", "--session"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return argv[i + 1] if i + 1 < len(argv) else None
        if arg in takes_value:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg
    return None


def bypassed(argv: list[str], settings) -> str:
    """Why ``argv`` runs in this process without the launcher ('' when it may be launched)."""
    if "--cold" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        return "--cold"
    if settings.no_server:
        return "FALSIFY_NO_SERVER=1"
    if not settings.launcher:
        return "FALSIFY_LAUNCHER=0"
    if _command_of(argv) in NOT_LAUNCHED:
        return "serve runs in its own process"
    return ""


def launch(argv: list[str]) -> Outcome:
    """Run the CLI command line ``argv`` in a child of this user's launcher (starting the
    launcher first if none runs for this code and environment), with this process's standard
    streams, environment, working directory and umask; wait for it, passing on signals, and
    return its exit code. ``Outcome.code`` None: run it here (``Outcome.reason`` says why)."""
    sent: list = []
    try:
        return _launch(argv, sent)
    except Exception as error:  # noqa: BLE001  (a bug here must not stop the command, nor run it twice)
        if sent:
            print(
                f"error: the FALSIFY launcher's client failed after handing the command over "
                f"({type(error).__name__}: {error}); it may have run: run status (nothing was run a second time)",
                file=sys.stderr,
            )
            return Outcome(1, "launcher")
        return Outcome(None, f"the launcher's client failed ({type(error).__name__}: {error})")


def _launch(argv: list[str], sent: list) -> Outcome:
    try:
        settings = _settings()
    except ValueError:  # a FALSIFY_* value that does not parse: the command, run here, says which
        return Outcome(None, "a FALSIFY_* setting does not parse")
    why = bypassed(argv, settings)
    if why:
        return Outcome(None, why)
    base, why = runtime_dir(settings)
    if base is None:
        return Outcome(None, why)
    code = fingerprint()
    paths = _paths(base, code)
    keys = _read_keys(paths["keys"])
    started = False
    path: Optional[Path]
    for attempt in range(2):
        sock = None
        if keys is not None:
            path = socket_path(base, code, environment_digest(keys))
            sock = _connect(path)
        if sock is None:
            if attempt:
                return Outcome(None, "the launcher could not be reached")
            path, why = _start(base, code, paths, keys)
            if path is None:
                return Outcome(None, why)
            started = True
            sock = _connect(path)
            if sock is None:
                return Outcome(None, "the launcher could not be reached")
        result = _run(sock, argv, code, started, sent)
        if result is not None:
            return result
        sent.clear()  # no child took it: nothing ran
        # the launcher closed the connection before the command started (it was stopping):
        # nothing ran; once more, with a launcher started afresh if need be
        keys = _read_keys(paths["keys"])
    return Outcome(None, "the launcher did not take the command")


def _connect(path: Path) -> Optional[socket.socket]:
    if len(str(path)) >= SOCKET_MAX:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def _start(base: Path, code: str, paths: dict, keys) -> tuple[Optional[Path], str]:
    """Start this code's launcher with this process's environment (one starter at a time,
    under a lock) and wait until it listens: (its socket, '') or (None, why not)."""
    import fcntl
    import subprocess

    lock = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        keys = _read_keys(paths["keys"])  # another starter may have finished meanwhile
        if keys is not None:
            path = socket_path(base, code, environment_digest(keys))
            sock = _connect(path)
            if sock is not None:
                sock.close()
                return path, ""
        probe = socket_path(base, code, "0" * 64)
        if len(str(probe)) >= SOCKET_MAX:
            return None, f"runtime directory {base}: its path is too long for a Unix socket"
        log = os.open(paths["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--serve", str(base), code],
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(log)
        assert proc.stdout is not None  # stdout=subprocess.PIPE
        line = proc.stdout.readline().decode("utf-8", "replace").strip()
        proc.stdout.close()
        proc.returncode = 0  # it outlives this process: not a child to wait for
        if not line.startswith("ready "):
            return None, f"the launcher did not start (see {paths['log']})"
        path = Path(line[len("ready ") :])
        keys = _read_keys(paths["keys"])
        if keys is None or socket_path(base, code, environment_digest(keys)) != path:
            return None, "the launcher started with another environment"
        return path, ""
    finally:
        os.close(lock)


def _streams() -> list[int]:
    """This process's standard streams, to hand over (/dev/null for a closed one)."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def _run(sock: socket.socket, argv: list[str], code: str, started: bool, sent: list) -> Optional[Outcome]:
    """Send the command over ``sock`` and wait for its end. None: the launcher closed the
    connection before the command started (nothing ran)."""
    import signal

    umask = os.umask(0o077)
    os.umask(umask)
    request = {
        "protocol": PROTOCOL,
        "fingerprint": code,
        "argv": list(argv),
        "argv0": sys.argv[0],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": umask,
        "path": list(sys.path),
        "options": interpreter_options(),
        "started": started,
        "unbuffered": bool(getattr(sys.stdout, "write_through", False)),
    }
    body = json.dumps(request).encode()
    pending: list[int] = []
    child: dict[str, Optional[int]] = {"pgid": None}

    def relay(signum, _frame):
        if child["pgid"] is None:
            pending.append(signum)
            return
        try:
            os.killpg(child["pgid"], signum)
        except OSError:
            pass

    relayed = (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGWINCH,
    )
    previous = {s: signal.signal(s, relay) for s in relayed}
    try:
        try:
            sent.append(True)
            socket.send_fds(sock, [struct.pack("!I", len(body))], _streams())
            sock.sendall(body)
        except OSError:
            sent.clear()
            return None  # nothing was taken
        buf = b""
        while True:
            while b"\n" not in buf:
                try:
                    chunk = sock.recv(65536)
                except InterruptedError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    if child["pgid"] is None:
                        return None  # the launcher went away before the command started: nothing ran
                    print(
                        f"error: the FALSIFY command (pid {child['pgid']}) ended without reporting its exit status "
                        "(the launcher stopped while it ran); it may have applied its change: run status "
                        "(nothing was run a second time)",
                        file=sys.stderr,
                    )
                    return Outcome(1, "launcher")
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            message = json.loads(line)
            if "cold" in message:
                return Outcome(None, str(message["cold"]))
            if "pid" in message:
                child["pgid"] = int(message["pid"])
                for signum in pending:
                    relay(signum, None)
                pending.clear()
            elif "exit" in message:
                status = int(message["exit"])
                if status < 0:  # killed by a signal: end the same way
                    sys.stdout.flush()
                    signal.signal(-status, signal.SIG_DFL)
                    os.kill(os.getpid(), -status)
                    return Outcome(128 - status, "launcher")
                return Outcome(status, "launcher")
    finally:
        sock.close()
        for s, handler in previous.items():
            signal.signal(s, handler)


# ---- the launcher ----------------------------------------------------------------------


def _recording_environ():
    """os.environ replaced by a copy that records what is read through it (the one store
    underneath, so both see every change): each variable read by name, and the modules
    that scan the whole environment (``dict(os.environ)``, ``os.environ.items()``).
    Returns (restore, names read, scanning modules)."""
    names: set = set()
    scanners: set = set()
    scanning: set = set()  # code objects that iterated the environment: their reads are a scan
    real = os.environ

    def scanned(frame) -> None:
        while frame is not None and frame.f_globals.get("__name__") in ABC_MODULES:
            scanning.add(frame.f_code)  # Mapping.items, os.environ.copy, ...: every read is part of the scan
            frame = frame.f_back
        if frame is not None:
            scanning.add(frame.f_code)
            scanners.add(frame.f_globals.get("__name__", "?"))

    class Recording(type(real)):
        def __getitem__(self, key):
            caller = sys._getframe(1)
            if caller.f_code in scanning:
                pass
            elif caller.f_globals.get("__name__") in ABC_MODULES and caller.f_code.co_name == "__iter__":
                scanned(caller)  # items() / values(): a scan
            else:
                names.add(key)
            return super().__getitem__(key)

        def __contains__(self, key):
            names.add(key)
            return super().__contains__(key)

        def get(self, key, default=None):
            names.add(key)
            return super().get(key, default)

        def __iter__(self):
            scanned(sys._getframe(1))
            return super().__iter__()

        def keys(self):
            scanned(sys._getframe(1))
            return super().keys()

    os.environ = Recording(real._data, real.encodekey, real.decodekey, real.encodevalue, real.decodevalue)

    def restore():
        os.environ = real

    return restore, names, scanners


ABC_MODULES = ("_collections_abc", "collections.abc", "os")  # Mapping.items, os.environ.copy, ...
# the modules of the preload that scan the whole environment at import, and the variables they
# look for; a scan by any other module keys the launcher on the whole environment
SCANS = {"fsspec.config": ("FSSPEC_",), "networkx.utils.backends": ("NETWORKX_",), "tqdm.utils": ("TQDM_",)}


def _expand(names) -> list:
    """:data:`PRELOAD` with each ``package.*`` replaced by the package's modules."""
    import importlib.util
    import pkgutil

    out = []
    for name in names:
        if not name.endswith(".*"):
            out.append(name)
            continue
        package = name[:-2]
        try:
            spec = importlib.util.find_spec(package)
        except ImportError:
            continue
        if spec is not None and spec.submodule_search_locations:
            out.append(package)
            out.extend(f"{package}.{m.name}" for m in pkgutil.iter_modules(spec.submodule_search_locations))
    return out


class Inherited(TypedDict):
    """What the launcher's imports did to its environment (each child gets it again): the
    settings keys the preload read, their digest, and the variables set and unset."""

    keys: dict
    digest: str
    set: dict[str, str]
    unset: list[str]


def _preload() -> dict:
    """Import :data:`PRELOAD`; return what keys a launcher: the variables the imports read
    ({"names": [...], "prefixes": [...]})."""
    import importlib
    import threading

    restore, names, scanners = _recording_environ()
    try:
        # litellm only for a launcher whose commands call a hosted model: offline, cognee's import
        # gets a stand-in (memory_core.store.lazy_imports) and the real module is never imported
        # (LLM_API_KEY, read here, keys the launcher)
        hosted = bool(os.environ.get("LLM_API_KEY", "").strip())
        _lazy_imports().defer_pandas()  # before pyarrow's first conversion (PRELOAD has pyarrow.dataset)
        for name in _expand(n for n in PRELOAD if hosted or n not in HOSTED_ONLY):
            try:
                importlib.import_module(name)
            except Exception as error:  # noqa: BLE001  (an optional dependency missing: fine)
                print(f"launcher: not preloaded: {name} ({type(error).__name__}: {error})", file=sys.stderr)
    finally:
        restore()
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in NEVER)
    if leaked:
        raise SystemExit(f"launcher: the preload imported {leaked[:5]}, which read settings at import")
    if not hosted and "litellm" in sys.modules:
        print("launcher: the preload imported litellm: offline commands will hold it", file=sys.stderr)
    if "pandas" in sys.modules:
        print("launcher: the preload imported pandas: every command will hold it", file=sys.stderr)
    threads = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if threads:
        raise SystemExit(f"launcher: threads after the preload: {threads}")
    prefixes: set = set()
    for module in scanners:
        if module in SCANS:
            prefixes.update(SCANS[module])
        else:
            print(
                f"launcher: {module} scans the whole environment at import: every variable keys this launcher",
                file=sys.stderr,
            )
            prefixes.add("")
    return {"names": sorted(n for n in names if isinstance(n, str)), "prefixes": sorted(prefixes)}


def serve(base: Path, code: str) -> int:
    """The launcher's main loop (``python launcher.py --serve RUNTIME_DIR FINGERPRINT``)."""
    import gc
    import select
    import signal

    started = time.monotonic()
    if fingerprint() != code:
        print("launcher: the code changed while it started", file=sys.stderr)
        return 1
    start_env = dict(os.environ)
    # what memory_core.store.data_root.configure sets (unless the caller did) before cognee's imports:
    # no network fetch of litellm's price list, no telemetry, Arrow's allocator (store/process.py)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("TELEMETRY_DISABLED", "1")
    pool = _settings().arrow_pool
    if pool:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", pool)
    # no cyclic collection while the preload builds its ~400,000 long-lived objects (each full
    # collection would walk them all, about 1 s in total); collected once, frozen, then on again
    gc.disable()
    keys = _preload()
    # what the imports did to the environment: a cold process has it too, so each child gets it again
    state: Inherited = {
        "keys": keys,
        "digest": environment_digest(keys, start_env),
        "set": {k: v for k, v in os.environ.items() if start_env.get(k) != v},
        "unset": [k for k in start_env if k not in os.environ],
    }
    idle_s = _settings().launcher_idle_s
    paths = _paths(base, code)
    path = socket_path(base, code, state["digest"])
    tmp = paths["keys"].with_name(f".{paths['keys'].name}.{os.getpid()}")
    tmp.write_text(json.dumps(keys))
    os.replace(tmp, paths["keys"])
    probe = _connect(path)
    if probe is not None:  # one already listens for this code and environment: use it
        probe.close()
        print(f"ready {path}", flush=True)
        return 0
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(64)
    inode = os.stat(path).st_ino
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    gc.collect()
    gc.freeze()  # the children share these pages rather than copy them when their collector runs
    gc.enable()
    print(
        f"launcher: pid {os.getpid()} ready after {time.monotonic() - started:.1f} s on {path}",
        file=sys.stderr,
        flush=True,
    )
    print(f"ready {path}", flush=True)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.close(devnull)
    run = _Running(listener, (wake_r, wake_w), code, state)
    last = time.monotonic()
    checked = last
    try:
        while True:
            waiting: list[socket.socket | int] = [
                listener,
                wake_r,
                *(s for p, s in run.children.items() if p not in run.orphans),
            ]
            if run.spare is not None and not run.spare.ready:
                waiting.append(run.spare.sock)
            if _stopping:
                return 0  # SIGTERM: the finally clause takes the socket away
            readable, _, _ = select.select(waiting, [], [], 1.0)
            if _stopping:
                return 0
            now = time.monotonic()
            run.reap()  # first: a command that just ended leaves its spare for the next one
            for sock in readable:
                if sock is wake_r:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                elif sock is listener:
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        continue
                    last = now
                    run.take(conn)
                elif run.spare is not None and sock is run.spare.sock:
                    run.spare.heard()
                else:  # a caller's connection became readable while its command runs: it went away
                    pid = next((p for p, s in run.children.items() if s is sock), None)
                    if pid is not None and isinstance(sock, socket.socket) and _gone(sock):
                        # a child that reported its exit is ending anyway; one still running after a
                        # moment dies, as a cold process dies with its caller
                        run.orphans[pid] = now + ORPHAN_GRACE_S
            run.reap()
            for pid, deadline in list(run.orphans.items()):
                if pid not in run.children:
                    del run.orphans[pid]
                elif now >= deadline:
                    del run.orphans[pid]
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
            if run.children:
                last = now
                continue
            if run.spare is not None and now - run.spare.since > SPARE_IDLE_S:
                run.retire()
            if now - last > idle_s:
                return 0
            if now - checked > 30:
                checked = now
                try:
                    if os.stat(path).st_ino != inode:
                        return 0  # the socket was taken away (or another launcher took the name)
                except OSError:
                    return 0
                if fingerprint() != code:
                    return 0  # the code changed: the next command starts a launcher for the new code
    finally:
        run.retire()
        try:
            if os.stat(path).st_ino == inode:
                path.unlink()
        except OSError:
            pass
        listener.close()


_stopping: list = []


def _terminated(signum, frame):
    # a flag, not an exception: the handler may run inside an at-fork callback (logging's), which
    # would swallow one; the loop sees the flag at once (the signal wakes its select)
    _stopping.append(signum)


def _gone(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


# ---- spares ----------------------------------------------------------------------------
# After a command on a data root exits 0, the launcher forks a *spare* for the next command of
# the same kind: a child that becomes a process with that command's environment, directory,
# umask and interpreter path, and does what the CLI does before any command on that root --
# reads its settings and the project's .env, configures the root and imports cognee -- then
# waits. A command whose caller has exactly that environment (every variable), directory, umask
# and path, on the same root (the same directory, not one recreated meanwhile), is handed to the
# spare with its streams, and runs as it would in a fresh child, minus the cognee import;
# anything else gets a fresh child. One spare at a time; it goes after SPARE_IDLE_S unused.

ORPHAN_GRACE_S = 2.0
SPARE_COMMANDS = frozenset(
    {"load", "status", "revise", "explain", "recall", "undo", "check", "resolve", "mcp"}
)
SPARE_IDLE_S = 600.0


def _root_command(argv: list[str]) -> tuple[Optional[str], Optional[str], bool]:
    """(the CLI command, the --root value, whether anything rules out a spare) of ``argv``."""
    root, i = None, 0
    while i < len(argv):
        arg = argv[i]
        if arg in (
            "-h",
            "--help",
            "--cold",
            "--demo",
            "--keep",
            "--database",
            "--session",
            "--",
        ) or arg.startswith(("--database=", "--session=")):
            return None, None, True
        if arg == "--root" and i + 1 < len(argv):
            root, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--root="):
            root, i = arg.split("=", 1)[1], i + 1
            continue
        if arg.startswith("-"):
            return None, None, True  # an option this scan does not know
        rest = argv[i + 1 :]
        return arg, root, "-h" in rest or "--help" in rest
    return None, None, True


def spare_key(request: dict) -> Optional[str]:
    """What a spare prepared for ``request``'s command must share with the next one (None: no
    spare for it): the resolved data root (an existing one, and its inode), every environment
    variable, the directory, the umask, the interpreter path, and the settings files as they
    are (the project's .env, cognee's env file)."""
    command, root, excluded = _root_command(list(request.get("argv") or []))
    if excluded or command not in SPARE_COMMANDS:
        return None
    env = request.get("env") or {}
    cwd = Path(str(request.get("cwd") or "/"))
    home = (env.get("FALSIFY_HOME") or "").strip() or None
    where = (cwd / Path(root or home or ".falsify").expanduser()).resolve()
    try:
        inode = os.stat(where).st_ino
    except OSError:
        return None
    if not ((where / "falsify.json").is_file() or (where / "cognee_system").is_dir()):
        return None  # not a data root (yet): a command on it must be free to refuse or create it
    # the files the CLI and cognee read settings from before a command: the project's .env, cognee's
    # env file (FALSIFY's empty one in the root, or the caller's own)
    files = [PACKAGE.parent / ".env", where / "cognee.env"]
    if env.get("COGNEE_ENV_FILE"):
        files.append(cwd / Path(env["COGNEE_ENV_FILE"]).expanduser())
    stamps = []
    for file in files:
        try:
            st = os.stat(file)
            stamps.append([str(file), st.st_ino, st.st_size, st.st_mtime_ns])
        except OSError:
            stamps.append([str(file), None])
    return json.dumps(
        [str(where), inode, sorted(env.items()), str(cwd), request.get("umask"), request.get("path"), stamps]
    )


class _Spare:
    def __init__(self, pid: int, sock: socket.socket, key: str, request: dict):
        self.pid, self.sock, self.key, self.request = pid, sock, key, request
        self.ready = False
        self.since = time.monotonic()

    def heard(self) -> None:
        """The spare wrote to the launcher: ready (b"R"), or it ended (nothing)."""
        try:
            data = self.sock.recv(16)
        except OSError:
            data = b""
        if data.startswith(b"R"):
            self.ready = True
            self.since = time.monotonic()
        else:
            self.ready = False


class _Running:
    """The launcher's children (pid -> the caller's connection), their spare keys, the spare."""

    def __init__(self, listener: socket.socket, wake: tuple, code: str, state: Inherited):
        self.listener, self.wake, self.code, self.state = listener, wake, code, state
        self.children: dict[int, socket.socket] = {}
        self.keys: dict[int, str] = {}
        self.orphans: dict[int, float] = {}  # pid -> when to kill it: its caller went away
        self.spare: Optional[_Spare] = None

    def others(self) -> list:
        """What a child must close: the launcher's sockets, the other callers', the spare's."""
        return [self.listener, *self.children.values(), *([self.spare.sock] if self.spare else [])]

    def take(self, conn: socket.socket) -> None:
        """Read one request from ``conn`` and run it: in the spare when it matches, else in a
        fresh child. A request the launcher cannot run is answered {"cold": why}."""
        request, fds = _accept(conn, self.code, self.state)
        if request is None:
            return
        key = spare_key(request)
        spare = self.spare
        # a spare still importing takes it too: it reads the request once ready (were it to fail
        # first, the caller would see its connection close with no pid, and hand the command over again)
        if key is not None and spare is not None and spare.key == key:
            self.spare = None
            body = json.dumps(request).encode()
            try:
                socket.send_fds(spare.sock, [struct.pack("!I", len(body))], [conn.fileno(), *fds])
                spare.sock.sendall(body)
                sent = True
            except OSError:
                sent = False
            spare.sock.close()
            if sent:
                for fd in fds:
                    os.close(fd)
                self.children[spare.pid] = conn
                self.keys[spare.pid] = key
                return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(conn, request, fds, self.others(), self.wake, self.state)  # never returns
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        if key is not None:
            self.keys[pid] = key

    def reap(self) -> None:
        """Collect exited children; for one killed by a signal, tell its caller. A command that
        exited 0 on a data root gets a spare prepared for the next one like it."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and pid == self.spare.pid:
                self.spare.sock.close()
                self.spare = None
                continue
            sock = self.children.pop(pid, None)
            key = self.keys.pop(pid, None)
            if sock is None:
                continue
            if os.WIFSIGNALED(status):
                try:
                    sock.sendall(json.dumps({"exit": -os.WTERMSIG(status)}).encode() + b"\n")
                except OSError:
                    pass
            sock.close()
            if key is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and not self.children:
                self.prepare(key)

    def prepare(self, key: str) -> None:
        if self.spare is not None and self.spare.key == key:
            return
        self.retire()
        request = self._request_of(key)
        if request is None:
            return
        mine, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            mine.close()
            _spare(theirs, request, self.others(), self.wake, self.state)  # never returns
        theirs.close()
        self.spare = _Spare(pid, mine, key, request)

    @staticmethod
    def _request_of(key: str) -> Optional[dict]:
        try:
            root, _inode, env, cwd, umask, path, _files = json.loads(key)
        except (ValueError, TypeError):
            return None
        return {"root": root, "env": dict(env), "cwd": cwd, "umask": umask, "path": path}

    def retire(self) -> None:
        """Let the spare go (it exits when its socket closes)."""
        if self.spare is not None:
            self.spare.sock.close()
            self.spare = None


def _accept(conn: socket.socket, code: str, state: Inherited) -> tuple[Optional[dict], list]:
    """One request from ``conn``, checked: (request, its three descriptors), or (None, [])
    when it is not run here (the caller is told why, or simply dropped)."""
    conn.settimeout(10)
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            conn.close()
            return None, []
        request, fds = _recv_request(conn)
    except (OSError, ValueError):
        conn.close()
        return None, []
    conn.settimeout(None)
    why = ""
    if request.get("protocol") != PROTOCOL or request.get("fingerprint") != code:
        why = "the launcher runs other code"
    elif request.get("options") != json.loads(json.dumps(interpreter_options())):
        why = "interpreter options differ from the launcher's"
    elif environment_digest(state["keys"], request.get("env") or {}) != state["digest"]:
        why = "the environment differs from the launcher's"
    if why:
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(json.dumps({"cold": why}).encode() + b"\n")
        except OSError:
            pass
        conn.close()
        return None, []
    return request, fds


def _recv_request(conn: socket.socket, count: int = 3):
    header, fds, _flags, _addr = socket.recv_fds(conn, 4, count)
    body = b""
    try:
        if not header:
            raise ValueError("no request")
        while len(header) < 4:
            chunk = conn.recv(4 - len(header))
            if not chunk:
                raise ValueError("short header")
            header += chunk
        (size,) = struct.unpack("!I", header)
        while len(body) < size:
            chunk = conn.recv(min(size - len(body), 1 << 20))
            if not chunk:
                raise ValueError("short request")
            body += chunk
        request = json.loads(body)
        if len(fds) != count or not isinstance(request, dict):
            raise ValueError("not a request")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def _detach(others: list, wake: tuple) -> None:
    """In a forked child: drop the launcher's sockets and signal plumbing, take a process group
    of its own (the caller's signals go to it and to what it starts), and the signal
    dispositions a new interpreter has."""
    import signal

    signal.set_wakeup_fd(-1)
    for fd in wake:
        os.close(fd)
    for sock in others:
        sock.close()
    os.setpgid(0, 0)
    for sig in (
        signal.SIGTERM,
        signal.SIGCHLD,
        signal.SIGHUP,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
    ):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as CPython sets it at start-up


def _child(
    conn: socket.socket, request: dict, fds: list[int], others: list, wake: tuple, state: Inherited
) -> None:
    """In the forked child: become the caller's command, run it, report its exit code, exit."""
    code = 1
    taken = False
    try:
        _detach(others, wake)
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        _adopt(request, state)
        _take_streams(fds, bool(request.get("unbuffered")))
        taken = True
        code = _run_cli(request)
    except KeyboardInterrupt:
        code = _interrupted(None if taken else fds, request)
    except BaseException:  # noqa: BLE001
        _print_exc()
    finally:
        _end(conn, code)


def _interrupted(fds: Optional[list[int]], request: dict) -> int:
    """Ctrl-C before the command's own handling took over: what the command answers to it (one
    line, exit 130), on the caller's standard error (``fds``: not taken yet)."""
    try:
        if fds is not None:
            _take_streams(fds, bool(request.get("unbuffered")))
        print("interrupted", file=sys.stderr)
    except BaseException:  # noqa: BLE001
        pass
    return EXIT_INTERRUPTED


def _spare(sock: socket.socket, prepared: dict, others: list, wake: tuple, state: Inherited) -> None:
    """In a forked spare: become a process of ``prepared``'s environment, directory and root,
    do what the CLI does before a command on it, say so, wait for a command (the caller's
    connection and streams, and the request, over ``sock``), run it as :func:`_child` would."""
    import select

    code, conn = 1, None
    taken, request, fds = False, {}, []
    try:
        _detach(others, wake)
        _adopt(prepared, state)
        _warm(prepared["root"], lambda: bool(select.select([sock], [], [], 0)[0]))
        try:
            sock.sendall(b"R")
        except OSError:
            pass  # the launcher already handed a command over and closed its end: it is in the buffer
        try:
            request, fds = _recv_request(sock, 4)
        except (OSError, ValueError):
            os._exit(0)  # retired (or the launcher went away) before a command came
        conn = socket.socket(fileno=fds[0])
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        # the environment, directory, umask and path are the caller's already (the key says so), and
        # the environment holds what configuring the root added to it, as a cold process's would
        sys.argv = [request.get("argv0") or sys.argv[0], *(request.get("argv") or [])]
        _take_streams(fds[1:], bool(request.get("unbuffered")))
        taken = True
        code = _run_cli(request, spare=True)
    except KeyboardInterrupt:
        if conn is not None:  # a command was handed over: it answers the interruption
            code = _interrupted(None if taken else fds[1:], request)
    except BaseException:  # noqa: BLE001
        _print_exc()
    finally:
        _end(conn, code)


def _warm(root: str, waiting) -> None:
    """What the CLI does before a command on ``root`` opens it (memory_core/shell/cli.py, then
    Falsify.open): the private umask, this environment's settings and the project's .env, the
    root configured for cognee, cognee imported. Then, unless a command is ``waiting()``
    already, with the offline embedder, what a command that embeds (load, revise, recall) does
    first: LanceDB imported, the model loaded (cognee's embedding engine, built as the command
    would build it); a command that came meanwhile does it itself if it needs it."""
    os.umask(0o077)
    from memory_core.store import backends, data_root, embedder, settings as config

    config.reload()
    if data_root.load_dotenv_file():  # .env added settings: read them again
        config.reload()
    data_root.configure(root, backends.choose(config.current()))
    data_root.import_cognee()
    import memory_core.shell.cli  # noqa: F401

    if embedder.local_enabled() and not waiting():
        embedder.preload()


def _print_exc() -> None:
    try:
        import traceback

        traceback.print_exc()
    except BaseException:  # noqa: BLE001
        pass


def _end(conn: Optional[socket.socket], code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    if conn is not None:
        try:
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code)


def _adopt(request: dict, state: Inherited) -> None:
    """Take over the caller's directory, umask, environment, argv and sys.path."""
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ.update(state["set"])
    for name in state["unset"]:
        os.environ.pop(name, None)
    sys.dont_write_bytecode = bool(sys.flags.dont_write_bytecode)
    sys.argv = [request.get("argv0") or sys.argv[0], *(request.get("argv") or [])]
    sys.path[:] = request["path"]
    if "tempfile" in sys.modules:
        import tempfile  # already imported: the module itself

        tempfile.tempdir = None  # found again from this environment
    numpy: Any = sys.modules.get("numpy")  # Any: the type checker does not read numpy
    if numpy is not None and not getattr(numpy, "_falsify_seeded", False):
        numpy.random.seed()  # fresh entropy, as a new process has (random reseeds itself at fork)
        numpy._falsify_seeded = True


def _take_streams(fds: list[int], unbuffered: bool = False) -> None:
    """The caller's standard streams on 0, 1, 2, as the interpreter makes them at start-up."""
    import io
    import logging

    for i, fd in enumerate(fds):
        if fd != i:
            os.dup2(fd, i)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    old = {"stdout": sys.stdout, "stderr": sys.stderr}
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    sys.stdin = io.TextIOWrapper(
        io.open(0, "rb", closefd=False), encoding=sys.stdin.encoding, errors=sys.stdin.errors
    )
    sys.stdout = io.TextIOWrapper(
        io.open(1, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding=encoding,
        errors=errors,
        line_buffering=os.isatty(1),
        write_through=unbuffered,
    )
    sys.stderr = io.TextIOWrapper(
        io.open(2, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding=sys.stderr.encoding,
        errors="backslashreplace",
        line_buffering=True,
        write_through=unbuffered,
    )
    # typeshed declares them Final; a new process's start-up streams are what they name, so they are rebound
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]
    for handler in list(logging.Logger.manager.loggerDict.values()) + [logging.getLogger()]:
        for h in getattr(handler, "handlers", ()):
            if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler):
                if h.stream is old["stderr"]:
                    h.stream = sys.stderr
                elif h.stream is old["stdout"]:
                    h.stream = sys.stdout


def _run_cli(request: dict, spare: bool = False) -> int:
    """The CLI's entry point, as ``main.py`` runs it; its exit code as the interpreter would
    make it (SystemExit, an uncaught exception, Ctrl-C)."""
    import signal
    import threading

    try:
        from memory_core.shell.cli import main

        code = main(
            request["argv"],
            ran={
                "by": "launcher",
                "launcher_pid": os.getppid(),
                "spare": spare,
                "started": bool(request.get("started")),
            },
        )
        code = 0 if code is None else code
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code & 0xFF
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # before the CLI's own handling (it answers the same)
        print("interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except BaseException:  # noqa: BLE001  (what the interpreter prints for an uncaught exception)
        import traceback

        traceback.print_exc()
        code = 1
    try:  # what a normal interpreter exit does: wait for threads, run atexit, flush
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:  # noqa: BLE001
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        pass
    if code < 0:  # died of Ctrl-C, as the interpreter does: by the signal itself
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code & 0xFF


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)  # run as a script: its folder is not a place to import from
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        try:
            status = serve(Path(sys.argv[2]), sys.argv[3])
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
        sys.stderr.flush()
        # nothing of the preload's own exit handlers (litellm's flush its logging worker, which
        # can wait): the launcher ran no command itself, and its socket is already gone
        os._exit(status)
    raise SystemExit("usage: launcher.py --serve RUNTIME_DIR FINGERPRINT")
