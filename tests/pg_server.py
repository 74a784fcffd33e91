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
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=False, capture_output=True, text=True)
        return pwd.getpwnam(name)


class PgServer:
    """initdb + pg_ctl start in a temporary directory; ``stop()`` removes everything."""

    def __init__(self, port: int | None = None, base: str | os.PathLike | None = None,
                 durable: bool = False):
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
        proc = subprocess.run(list(args), capture_output=True, text=True, env=env, cwd=self.dir,
                              timeout=timeout, **kwargs)
        if check and proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr or proc.stdout}\n{log}")
        return proc

    def start(self) -> "PgServer":
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-instructions", "--no-sync")
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=300"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
                  "-w", "-t", "60", "start")
        self.started = True
        # every database created afterwards (CREATE DATABASE copies template1) has pgvector
        self.sql("CREATE EXTENSION IF NOT EXISTS vector", database="template1")
        self.sql("CREATE EXTENSION IF NOT EXISTS vector", database="postgres")
        # trust authentication accepts any password, but cognee's adapters insist on one
        self.sql(f"ALTER ROLE postgres PASSWORD '{self.password}'")
        return self

    def stop(self) -> None:
        if self.started:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop",
                      check=False, timeout=60)
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

    def create_database(self, name: str) -> str:
        """A fresh database (dropped first if it exists) with pgvector; returns its URL."""
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)


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
