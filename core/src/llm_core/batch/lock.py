"""One runner per output: a lock on a file beside it (``OUT.jsonl.job.lock``) held for the
whole run, so that a second runner on the same output refuses at once instead of calling and
writing every item a second time.

The lock is the operating system's (``flock`` on POSIX, ``msvcrt.locking`` on Windows): the
kernel releases it when its holder exits, however it exits (``kill -9`` included), so a lock
left behind never blocks the next run. The file holds who took it (pid, host, start time) for
the refusal to name; the holder removes it when it is done.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llm_core.batch.errors import BatchBusyError
from llm_core.errors import InvalidInputError

# The holder writes who it is after a leading byte: on Windows the locked byte cannot be read.
_INFO_AT = 1
#: How long a refused runner waits for a holder that has just taken the lock to say who it is.
_INFO_WAIT = 0.2


def lock_path(output: Path) -> Path:
    """The lock of ``output``: ``OUT.jsonl`` → ``OUT.jsonl.job.lock``."""
    return output.with_name(output.name + ".job.lock")


def _try_lock(fd: int) -> bool:
    """Take the lock of ``fd`` without waiting; ``False`` when another open file holds it."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except PermissionError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _holder(fd: int) -> dict[str, Any]:
    """Who holds the lock, as it wrote it (empty when it has not yet, or wrote nonsense)."""
    deadline = time.monotonic() + _INFO_WAIT
    while True:
        os.lseek(fd, _INFO_AT, os.SEEK_SET)
        text = os.read(fd, 4096)
        try:
            info = json.loads(text)
        except ValueError:
            info = None
        if isinstance(info, dict):
            return info
        if time.monotonic() >= deadline:
            return {}
        time.sleep(0.01)


class RunLock:
    """``with RunLock(output): ...``: the run's hold on ``output``, or :class:`BatchBusyError`
    naming the runner that has it."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.path = lock_path(output)
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        # A holder that is done removes the file: a runner that opened it just before must
        # lock the new file instead, so it checks that the file it locked is still there.
        for _ in range(100):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise InvalidInputError(f"cannot write beside {self.output}: {exc.strerror} ({self.path})") from exc
            try:
                if not _try_lock(fd):
                    raise self._busy(_holder(fd))
                if not _same_file(fd, self.path):
                    os.close(fd)
                    continue
                info = {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, b"\n" + json.dumps(info).encode() + b"\n")
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            return
        raise BatchBusyError(f"{self.output} is being taken and given up by other runners faster than it can be locked")

    def _busy(self, holder: dict[str, Any]) -> BatchBusyError:
        pid, host, started = holder.get("pid"), holder.get("host"), holder.get("started")
        pid = pid if isinstance(pid, int) else None
        host = host if isinstance(host, str) else None
        started = started if isinstance(started, str) else None
        who = f"pid {pid} on {host}, started {started}" if pid is not None else "a runner that has just started"
        return BatchBusyError(
            f"{self.output} is being written by another runner ({who}); wait for it to finish or stop it, "
            f"or choose another output (its lock: {self.path})",
            pid=pid,
            host=host,
            started=started,
        )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if _same_file(fd, self.path):
                # removed while still held: the next runner cannot lock this file by mistake
                self.path.unlink(missing_ok=True)
        except OSError:  # Windows cannot remove an open file: it stays, unlocked
            pass
        finally:
            _unlock(fd)
            os.close(fd)


__all__ = ["RunLock", "lock_path"]
