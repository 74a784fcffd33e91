"""One writer per data root: an exclusive ``flock`` on ``<root>/writer.lock``.

cognee's embedded Ladybug database admits one read-write process at a time, so
every process that opens a root's stores (CLI commands, the viewer server, the
benchmark) holds this lock for as long as it uses them. A second process waits
up to ``FALSIFY_LOCK_TIMEOUT`` seconds (default 30), then fails with a message
naming the holder. The kernel drops the lock when its holder dies, so a crashed
writer never blocks the next one (which then recovers its journal).

The data root is private, as a database's data directory is: taking the lock makes
the root directory 0700 (its owner only) and the lock file 0600, so no other local
user can read the graph or the log, nor ``flock`` the lock file to block every command.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Optional

from memory_core.core.errors import FalsifyError, RootBusy  # noqa: F401  (re-exported)
from memory_core.store import config

PRIVATE_FILE = 0o600


def make_private(path: Path) -> None:
    """Take group and other permissions off ``path`` (a directory or file this user owns);
    leave it alone otherwise (another user's directory is not ours to change)."""
    try:
        st = os.stat(path)
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(path, st.st_mode & 0o700)
    except OSError:
        pass


class RootNotWritable(FalsifyError):
    """The data root (or its lock file) cannot be written: every command needs to."""


def default_timeout(timeout: Optional[float] = None) -> float:
    """``timeout`` if given, else ``FALSIFY_LOCK_TIMEOUT`` of this process's settings."""
    return config.current().lock_timeout if timeout is None else timeout


class WriterLock:
    def __init__(self, path: Path, purpose: str = "falsify", timeout: Optional[float] = None):
        self.path = Path(path)
        self.purpose = purpose
        self.timeout = timeout  # seconds to wait; None: FALSIFY_LOCK_TIMEOUT when acquiring
        self._fd: int | None = None

    def acquire(self, timeout: float | None = None) -> "WriterLock":
        timeout = default_timeout(self.timeout) if timeout is None else timeout
        fd = self._open()
        deadline = time.monotonic() + timeout
        while not self._try(fd):
            if time.monotonic() >= deadline:
                self._busy(fd, timeout)
            time.sleep(0.05)
        return self._took(fd)

    async def acquire_async(self, timeout: float | None = None) -> "WriterLock":
        """:meth:`acquire` for the event loop: waits with ``asyncio.sleep`` (other tasks run)."""
        import asyncio

        timeout = default_timeout(self.timeout) if timeout is None else timeout
        fd = self._open()
        deadline = time.monotonic() + timeout
        try:
            while not self._try(fd):
                if time.monotonic() >= deadline:
                    self._busy(fd, timeout)
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            os.close(fd)
            raise
        return self._took(fd)

    def _open(self) -> int:
        make_private(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        except OSError as error:
            raise RootNotWritable(
                f"the data root {self.path.parent} is not writable ({error.strerror or error}: {self.path.name}); "
                "FALSIFY writes its lock, journal and databases there: use a root you can write "
                "(--root DIR or FALSIFY_HOME)") from None
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, PRIVATE_FILE)
        except OSError:
            pass
        return fd

    @staticmethod
    def _try(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _busy(self, fd: int, timeout: float):
        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        if holder.split(" ")[:2] == ["pid", str(os.getpid())]:
            holder = f"this process ({holder}): this process holds it (close the Falsify that holds it first)"
        raise RootBusy(f"the data root {self.path.parent} is in use by {holder}; waited {timeout:g}s "
                       "(set FALSIFY_LOCK_TIMEOUT to wait longer)") from None

    def _took(self, fd: int) -> "WriterLock":
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({self.purpose})".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc):
        self.release()
