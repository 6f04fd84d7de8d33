"""How many threads irr-audit runs at once: one per core, within a cap.

Sheets are parsed, ids looked up and bootstrap replicates drawn on a pool of
threads (pyarrow and numpy release the GIL). One per core keeps every core busy;
the cap bounds the memory that work in flight holds (each thread holds a parsed
sheet, or a chunk of replicates) on a machine with many cores. Results never
depend on the count: each pool's results are taken in submission order.

Threads only ever make irr-audit faster, so a system that refuses to start one (a
limit on address space such as `ulimit -v` on a shared cluster node, where each new
thread reserves its stack and an allocator arena; a container's limit on processes)
costs speed, not the run: a ``Workers`` pool then runs each task on the thread that
submits it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

MAX_THREADS = 4


def thread_count() -> int:
    """Threads for one parallel step: the cores the system reports, from 1 to MAX_THREADS."""
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))


P = ParamSpec("P")
T = TypeVar("T")


class Workers(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` that runs a task on the submitting thread once the system
    refuses to start one of its threads (and every later task too: the threads it did start
    keep taking what was queued for them). Each task runs exactly once, whichever thread
    takes it."""

    def __init__(self, max_workers: int) -> None:
        super().__init__(max_workers=max_workers)
        self._refused = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        task = _Task(lambda: fn(*args, **kwargs))
        if not self._refused:
            try:
                super().submit(task.run)
                return task.future
            except RuntimeError as error:
                if not thread_refused(error):
                    raise
                # the pool queued the task before it tried to start a thread for it: a thread it
                # started earlier may take it now, else it runs here (``_Task`` runs it once)
                self._refused = True
        task.run()
        return task.future


def thread_refused(error: BaseException) -> bool:
    """Whether ``error`` is the system refusing to start a thread (Python's message for it)."""
    return isinstance(error, RuntimeError) and "can't start new thread" in str(error)


class _Task:
    """A call whose outcome goes to ``future``, made by whichever thread runs it first."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.future: Future[Any] = Future()
        self._call = call
        self._taken = threading.Lock()

    def run(self) -> None:
        if not self._taken.acquire(blocking=False):
            return  # another thread took it
        if not self.future.set_running_or_notify_cancel():
            return  # cancelled before it ran
        try:
            result = self._call()
        except BaseException as error:  # as the pool's own threads hand any failure to the future
            self.future.set_exception(error)
        else:
            self.future.set_result(result)
