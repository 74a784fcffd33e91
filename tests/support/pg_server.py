"""A throwaway PostgreSQL server with pgvector, from the PyPI wheel ``pgserver``.

The wheel ``pgserver`` (pinned in requirements.txt) ships PostgreSQL 16 binaries with the
pgvector extension (``vector.so``), so a fresh machine gets a server from the package
registry alone. PostgreSQL refuses to run as root, so when we are root the data directory
is created for, and the server runs as, a dedicated system user (``falsify-pg`` by
default, created with ``useradd`` if missing).

Usage::

    with PgServer() as server:          # initdb + start on a free loopback port
        url = server.create_database("t1")   # a fresh database with the vector extension

or ``python -m tests.pg_server`` to run one in the foreground and print its URL.
The same code serves the pytest fixtures (tests/conftest.py) and the benchmark.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_USER = os.environ.get("FALSIFY_PG_OS_USER", "falsify-pg")


def pg_bin_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pgserver")  # the wheel's package; its binaries live beside it
    if spec is None or not spec.origin:
        raise RuntimeError("the pgserver wheel is not installed (pip install -r requirements.txt)")
    path = Path(spec.origin).resolve().parent / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise RuntimeError(f"no PostgreSQL binaries in {path}")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_os_user(name: str = PG_USER) -> pwd.struct_passwd | None:
    """The non-root user the server runs as (None when we are not root: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=False,
            capture_output=True,
            text=True,
        )
        return pwd.getpwnam(name)


class PgServer:
    """initdb + pg_ctl start in a temporary directory; ``stop()`` removes everything."""

    def __init__(self, port: int | None = None, base: str | os.PathLike | None = None, durable: bool = False):
        # durable=False (tests): fsync off - the server itself is never killed in the tests,
        # only its clients are; the benchmark uses durable=True (PostgreSQL's defaults).
        self.durable = durable
        self.bin = pg_bin_dir()
        self.port = port or free_port()
        self.user = ensure_os_user()
        self.dir = Path(tempfile.mkdtemp(prefix="falsify-pg-", dir=base))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.started = False
        self.password = "falsify"

    # -- process helpers -------------------------------------------------------------------
    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        kwargs = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "HOME": str(self.dir)}
        proc = subprocess.run(
            list(args), capture_output=True, text=True, env=env, cwd=self.dir, timeout=timeout, **kwargs
        )
        if check and proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr or proc.stdout}\n{log}")
        return proc

    def start(self) -> "PgServer":
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-instructions",
            "--no-sync",
        )
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=300"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        self.started = True
        # every database created afterwards (CREATE DATABASE copies template1) has pgvector
        self.sql("CREATE EXTENSION IF NOT EXISTS vector", database="template1")
        self.sql("CREATE EXTENSION IF NOT EXISTS vector", database="postgres")
        # trust authentication accepts any password, but cognee's adapters insist on one
        self.sql(f"ALTER ROLE postgres PASSWORD '{self.password}'")
        return self

    def stop(self) -> None:
        if self.started:
            self._run(
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "-w",
                "stop",
                check=False,
                timeout=60,
            )
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "PgServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- SQL ---------------------------------------------------------------------------------
    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, database: str = "postgres"):
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall() if cur.description else None
        finally:
            conn.close()


def main() -> None:  # pragma: no cover - manual helper
    server = PgServer().start()
    print(server.url(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()


# ---- the test sessions' view: one database per data root --------------------------------------
# A FALSIFY process serves one data root; on the postgres backend its data live in a database.
# The tests give every root its own database (named after the root's path) on one server, so a
# fresh root is a fresh database and a copied root is a copied database, as on the embedded
# backend. ADMIN_ENV holds the server's URL for child processes (it is not a FALSIFY_ setting,
# so the harness's clean environments keep it).
ADMIN_ENV = "PGTEST_ADMIN_URL"
_session_server: PgServer | None = None


def database_name(root) -> str:
    import hashlib

    return "falsify_" + hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:20]


def _admin_sql(statement: str, admin_url: str | None = None):
    import psycopg2

    conn = psycopg2.connect(admin_url or os.environ[ADMIN_ENV])
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()


def _with_database(admin_url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(admin_url)
    return urlunsplit(parts._replace(path="/" + name))


def root_env(root, fresh: bool = False) -> dict:
    """The environment that points a FALSIFY process for ``root`` at the root's database
    (created if missing; dropped and recreated when ``fresh``)."""
    admin = os.environ[ADMIN_ENV]
    name = database_name(root)
    exists = _admin_sql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'", admin)
    if fresh and exists:
        _admin_sql(f'DROP DATABASE "{name}" WITH (FORCE)', admin)
        exists = False
    if not exists:
        try:
            _admin_sql(f'CREATE DATABASE "{name}"', admin)
        except Exception as error:  # another process created it first
            if "already exists" not in str(error):
                raise
    return {
        "FALSIFY_BACKEND": "postgres",
        "FALSIFY_DATABASE_URL": _with_database(admin, name),
        ADMIN_ENV: admin,
    }


def copy_database(src_root, dst_root) -> None:
    """``dst_root``'s database becomes a copy of ``src_root``'s (CREATE DATABASE ... TEMPLATE)."""
    admin = os.environ[ADMIN_ENV]
    src, dst = database_name(src_root), database_name(dst_root)
    _admin_sql(f'DROP DATABASE IF EXISTS "{dst}" WITH (FORCE)', admin)
    # a template must have no other connections
    _admin_sql(
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{src}' "
        "AND pid <> pg_backend_pid()",
        admin,
    )
    _admin_sql(f'CREATE DATABASE "{dst}" TEMPLATE "{src}"', admin)


def session_env(root) -> dict:
    """For a test session on the postgres backend: the server (started here and stopped at
    exit unless ``PGTEST_ADMIN_URL`` names one) and the environment for ``root``."""
    global _session_server
    if not os.environ.get(ADMIN_ENV):
        import atexit

        _session_server = PgServer().start()
        atexit.register(_session_server.stop)
        os.environ[ADMIN_ENV] = _session_server.url()
    return root_env(root, fresh=True)
