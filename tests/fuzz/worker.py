"""A child process that runs fuzz cases one at a time, so that a case which
crashes the process (native code) or hangs becomes an outcome, not the end
of the fuzzer.  Children are spawned, not forked: the parent may be
multithreaded (JAX in the test suite), and a forked child could deadlock."""

from __future__ import annotations

import faulthandler
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

Case = TypeVar("Case")

# Native code compiled by a worker stays loaded in it; a fresh worker every
# few hundred cases keeps its memory bounded.
CASES_PER_WORKER = 200
# Starting a child imports the handler's module; that time does not count
# against a case.
STARTUP_LIMIT = 300.0


@dataclass(frozen=True)
class Died:
    """The worker ended without answering: ``hang`` (killed after the
    timeout) or ``crash`` (a signal or exit code)."""

    kind: str
    detail: str


def _serve(handler: Callable[[Any], Any], conn: Connection) -> None:
    faulthandler.disable()  # a crash is the parent's finding, not a dump here
    conn.send("ready")
    while True:
        case = conn.recv()
        conn.send(handler(case))


class Worker(Generic[Case]):
    """Runs ``handler(case)`` in a child process, which is started once and
    again after a crash, a hang or ``CASES_PER_WORKER`` cases.  The handler
    is a module-level function (the child imports it); it must return
    something picklable and catch what it expects."""

    def __init__(self, handler: Callable[[Case], Any], timeout: float):
        self.handler = handler
        self.timeout = timeout
        self.process: multiprocessing.Process | None = None
        self.conn: Connection | None = None
        self.served = 0

    def _start(self) -> tuple[multiprocessing.Process, Connection]:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(self.handler, child), daemon=True)
        process.start()
        child.close()
        try:
            ready = parent.poll(STARTUP_LIMIT) and parent.recv() == "ready"
        except EOFError:
            ready = False
        if not ready:
            process.kill()
            raise RuntimeError(f"the fuzz worker did not start within {STARTUP_LIMIT:.0f} s")
        self.process, self.conn, self.served = process, parent, 0
        return process, parent

    def run(self, case: Case) -> Any:
        if self.process is None or self.conn is None or self.served >= CASES_PER_WORKER:
            self.close()
            process, conn = self._start()
        else:
            process, conn = self.process, self.conn
        self.served += 1
        conn.send(case)
        if conn.poll(self.timeout):
            try:
                return conn.recv()
            except EOFError:
                pass
            process.join(5)
            self.process = None
            return Died("crash", f"worker died (exit code {process.exitcode})")
        self.close()
        return Died("hang", f"no answer within {self.timeout:.0f} s")

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None
