"""A fork server for lit and the command-line tools of the lit suite and
of the documentation's console transcripts, so that neither a test file's
lit nor a RUN line's or a transcript's ``rev-opt`` imports its modules
again (``served_tools`` in ``conftest.py`` starts one per worker).

Most of a tool's start is importing its modules: xDSL and revmlir's
dialects, about 0.35 s of a ``rev-opt``'s 0.45 s (decision 65), and xDSL's
interpreters, NumPy and llvmlite besides, about 1.2 s of a ``rev-run``'s
1.3 s; the suite starts some 300 tools and a lit per test file.  The server imports them once; every tool is then a
small client (``client``, run by ``python -S`` from a script named after
the tool) that hands the server its arguments, environment, working
directory and its own standard input, output and error, and exits as the
tool did.  For each request the server forks a handler, which forks the
tool's process: it takes those files as its 0, 1 and 2, that directory
and that environment, and runs the tool's ``main`` as the installed
script does.  The handler waits for it and sends its status back.  Exit
codes, signals, pipes and redirections are those of a process of its
own, so lit (``not`` included) sees what it sees with the installed
tools.

``python tool_server.py SOCKET`` serves until it is terminated, or until
the process that started it ends; it prints ``ready`` once it listens.
``shims(directory, socket)`` writes the clients.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import sys
import traceback

TOOLS = {
    "lit": "lit.main",
    "rev-opt": "revmlir.tools.rev_opt",
    "rev-run": "revmlir.tools.rev_run",
    "rev-translate": "revmlir.tools.rev_translate",
    "filecheck": "filecheck.main",
}
"""The tools served, and the module whose ``main`` each runs.  All are
imported before the server forks, ``rev-run`` too: its NumPy starts
OpenBLAS's worker thread, which a fork does not copy, but OpenBLAS stops
its threads before a fork (``pthread_atfork``) and a child starts its own
on its first use, as in any forked NumPy process."""
STREAMS = 3


def client(path: str, tool: str) -> None:
    """Run ``tool`` with this process's arguments, environment, directory
    and standard files in the server listening at ``path``, and end as it
    ended."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        request = {"tool": tool, "argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(connection, [json.dumps(request).encode()], list(range(STREAMS)))
        connection.shutdown(socket.SHUT_WR)
        answer = _read_all(connection)
    status = exit_status(answer, tool, path)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


def exit_status(answer: bytes, tool: str, path: str) -> int:
    """The wait status the server at ``path`` answered for ``tool``.  An
    answer that is none (empty where the handler died before sending it)
    is an error that says what came and from
    where, not a bare ``ValueError`` of ``int``."""
    if answer.isdigit():
        return int(answer)
    raise ValueError(
        f"{tool}: the tool server at {path} answered {answer!r}, not the wait status of the {tool} it ran "
        "(its handler ended without sending one?)"
    )


def shims(directory: str, path: str) -> None:
    """Write into ``directory`` a script per tool that runs it in the
    server at ``path``."""
    here = os.path.dirname(os.path.abspath(__file__))
    for tool in TOOLS:
        script = os.path.join(directory, tool)
        with open(script, "w") as file:
            file.write(
                f"#!{sys.executable} -S\n"
                "import sys\n"
                f"sys.path.insert(0, {here!r})\n"
                "from tool_server import client\n"
                f"client({path!r}, {tool!r})\n"
            )
        os.chmod(script, 0o755)


def _read_all(connection: socket.socket) -> bytes:
    chunks = []
    while chunk := connection.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def serve(path: str) -> None:
    for module in TOOLS.values():
        importlib.import_module(module)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
    parent = os.getppid()
    print("ready", flush=True)
    while os.getppid() == parent:  # ends with the process that started it
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        connection.settimeout(None)
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _handle(connection)
        connection.close()


def _handle(connection: socket.socket) -> None:
    """Fork the requested tool's process, wait for it and send its
    status; never returns."""
    message, files, _, _ = socket.recv_fds(connection, 1 << 16, STREAMS)
    request = json.loads(message + _read_all(connection))
    tool = os.fork()
    if tool == 0:
        code = 1
        try:
            connection.close()
            for target, file in enumerate(files):
                os.dup2(file, target)
            for file in files:
                if file >= STREAMS:
                    os.close(file)
            _reopen_streams()
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.argv = request["argv"]
            code = _run(request["tool"])
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    for file in files:
        os.close(file)
    _, status = os.waitpid(tool, 0)
    connection.sendall(str(status).encode())
    os._exit(0)


def _reopen_streams() -> None:
    """``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` made anew on files
    0 to 2, as Python's start makes them (the server's knew other files:
    whether they can seek, whether they are a terminal)."""
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        lines = name == "stderr" or os.isatty(number)
        mode = "r" if number == 0 else "w"
        stream = open(number, mode, 1 if lines else -1, old.encoding, old.errors, closefd=False)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run(tool: str) -> int:
    """Run ``tool``'s ``main`` as its installed script does, and return
    the exit code the process would have had."""
    try:
        code = importlib.import_module(TOOLS[tool]).main()
    except SystemExit as exit:
        code = exit.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except OSError:
        return 120  # as Python's exit when it cannot flush them
    return 0 if code is None else int(code)


if __name__ == "__main__":
    del sys.path[0]  # this directory: the tools see the modules an installed script sees
    serve(sys.argv[1])
