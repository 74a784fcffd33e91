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
A root another user owns, or one group or others may write to (anyone could plant a
link in it), is refused (:class:`UnsafeRoot`, exit 2, naming the fix) before anything is
written in it, and the lock file is opened without following a symbolic link.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Optional

import stat

from memory_core.core.errors import FalsifyError, InputError, RootBusy  # noqa: F401  (re-exported)
from memory_core.store import settings

PRIVATE_FILE = 0o600
LOCK_NAME = "writer.lock"


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


class UnsafeRoot(InputError):
    """The data root is another user's, or others may write in it, or its lock file is a
    link: FALSIFY writes nothing there (exit 2; the message names the path and the fix)."""


def refuse_unsafe_root(root: Path) -> None:
    """Refuse (:class:`UnsafeRoot`) a data root that exists and is not this user's own: owned
    by another user, or writable by its group or by others (who could replace the lock file
    or the journal with links to files of this user's). A missing root is made private later."""
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return
    except OSError as error:
        raise RootNotWritable(f"the data root {root} cannot be read ({error.strerror or error})") from None
    if not stat.S_ISDIR(st.st_mode):
        return  # not a folder: opening its lock file says it is not writable (RootNotWritable)
    if st.st_uid != os.getuid():
        raise UnsafeRoot(
            f"the data root {root} belongs to another user (uid {st.st_uid}), and FALSIFY writes only in a root "
            f"this user owns (another user could point its lock and journal at your files): use a root of your own "
            f"(--root DIR or FALSIFY_HOME), or have it handed over (chown {os.getuid()} {root})"
        )
    if st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("its group", 0o020), ("other users", 0o002)) if st.st_mode & bit)
        raise UnsafeRoot(
            f"the data root {root} can be written by {who} (mode {stat.S_IMODE(st.st_mode):04o}): they could "
            f"plant links to your files in it. Make it private first: chmod 700 {root}"
        )
    lock = Path(root) / LOCK_NAME
    try:
        planted = os.lstat(lock)
    except FileNotFoundError:
        return
    except OSError:
        return  # the open reports it
    if stat.S_ISLNK(planted.st_mode):
        raise UnsafeRoot(_link_refused(lock))


def _link_refused(lock: Path) -> str:
    return (
        f"{lock} is a symbolic link, and FALSIFY never follows one for its lock file (it would write where the "
        f"link points): remove it (rm {lock}); it is made again as a plain file"
    )


def default_timeout(timeout: Optional[float] = None) -> float:
    """``timeout`` if given, else ``FALSIFY_LOCK_TIMEOUT``'s default (the opened stores' locks are
    given their settings' value)."""
    return settings.Settings.lock_timeout if timeout is None else timeout


RECORD_LIMIT = 400  # bytes of the holder's record (written and read)


def holder_record(purpose: str) -> str:
    """What the lock file says of its holder, for the message a waiting process prints: its pid
    and its command line (``pid 4242 (python main.py load)``). A purpose that is not the CLI's
    own command line (a host program's ``Falsify.open``, the viewer, the demo) adds the process's
    command line, secrets masked: ``pid 4242 (falsify: python host.py --flag)``."""
    import shlex
    import sys

    from memory_core.store.environment import redact_argv

    if purpose.startswith("python main.py"):
        return f"pid {os.getpid()} ({purpose})"
    command = " ".join(("python " + shlex.join(redact_argv(list(sys.argv)))).split())
    if len(command) > 160:
        command = command[:157] + "..."
    return f"pid {os.getpid()} ({purpose}: {command})"


class WriterLock:
    def __init__(self, path: Path, purpose: str = "falsify", timeout: Optional[float] = None):
        self.path = Path(path)
        self.purpose = purpose
        self.timeout = timeout  # seconds to wait; None: FALSIFY_LOCK_TIMEOUT's default when acquiring
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
        refuse_unsafe_root(self.path.parent)
        make_private(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise UnsafeRoot(_link_refused(self.path)) from None
            raise RootNotWritable(
                f"the data root {self.path.parent} is not writable ({error.strerror or error}: {self.path.name}); "
                "FALSIFY writes its lock, journal and databases there: use a root you can write "
                "(--root DIR or FALSIFY_HOME)"
            ) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            os.close(fd)
            raise UnsafeRoot(
                f"{self.path} is not a plain file of this user's (a device, a folder or another user's "
                f"file): remove it (rm {self.path}); it is made again"
            )
        try:
            if st.st_mode & 0o077:
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
        holder = os.pread(fd, RECORD_LIMIT, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        if holder.split(" ")[:2] == ["pid", str(os.getpid())]:
            holder = f"this process ({holder}): this process holds it (close the Falsify that holds it first)"
        raise RootBusy(
            f"the data root {self.path.parent} is in use by {holder}; waited {timeout:g}s "
            "(set FALSIFY_LOCK_TIMEOUT to wait longer)"
        ) from None

    def _took(self, fd: int) -> "WriterLock":
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder_record(self.purpose).encode()[:RECORD_LIMIT], 0)
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
