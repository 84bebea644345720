"""pyright's (or basedpyright's) language server, one per project, kept alive across edits.

The language server protocol over stdio: `initialize`, then for each changed file `didOpen` (the first time)
or `didChange` with the whole text, and the server's `publishDiagnostics` for that file and version is the
answer. Only errors (severity 1) are kept. A check waits at most its timeout: the first one also waits for
the server to start and read the project, so it may come back empty (`None`), and the next edit gets the
findings; an edit never hangs on a slow server. A server that died is started again at the next check.

The server is Node's, run as a plain subprocess with the kernel's environment without its secrets: it reads
the project and writes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import secrets
from .findings import Finding

SERVERS = (("pyright", "pyright-langserver"), ("basedpyright", "basedpyright-langserver"))
"""The checker's name and its language server's program, in the order looked for."""


def find_server(path: str | None = None) -> tuple[str, list[str]] | None:
    """The installed language server: its name and the command that starts it on stdio; None without one."""
    for name, program in SERVERS:
        found = shutil.which(program, path=path)
        if found:
            return name, [found, "--stdio"]
    return None


class LanguageServer:
    """A running language server for the project at `root`."""

    def __init__(self, name: str, argv: Sequence[str], root: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.root = root
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._versions: dict[str, int] = {}
        self._published: dict[str, tuple[int | None, list[dict[str, Any]]]] = {}
        self._changed = asyncio.Condition()

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def check(self, path: Path, text: str, timeout_s: float) -> list[Finding] | None:
        """The server's errors in `text`, the new content of `path`; None when it did not answer in time."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        if not self.alive:
            await self._start()
        assert self._ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), max(0.0, deadline - loop.time()))
        except TimeoutError:
            return None
        uri = path.resolve().as_uri()
        version = self._versions.get(uri, 0) + 1
        self._versions[uri] = version
        if version == 1:
            self._notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                   "version": version, "text": text}})
        else:
            self._notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                    "contentChanges": [{"text": text}]})
        self._published.pop(uri, None)

        def answered() -> bool:
            got = self._published.get(uri)
            return not self.alive or (got is not None and (got[0] is None or got[0] >= version))

        try:
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(answered), max(0.0, deadline - loop.time()))
        except TimeoutError:
            return None
        if uri not in self._published:
            raise ConnectionError(f"{self.name} exited")
        return [_finding(d, self.name) for d in self._published[uri][1] if d.get("severity", 1) == 1]

    async def _start(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            *self.argv, cwd=self.root, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=secrets.child_env(os.environ), start_new_session=True)
        self._versions.clear()
        self._published.clear()
        self._reader = asyncio.create_task(self._read(self._process))
        self._ready = asyncio.ensure_future(self._initialize())

    async def _initialize(self) -> None:
        root = self.root.resolve()
        await self._request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True},
                                              "synchronization": {"didSave": False}},
                             "workspace": {"configuration": True, "workspaceFolders": True}},
        })
        self._notify("initialized", {})

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self._process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def _request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"id": self._next_id, "method": method, "params": params})
        return await future

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            while True:
                length = 0
                while (header := await process.stdout.readline()) not in (b"\r\n", b"\n"):
                    if not header:
                        return
                    name, _, value = header.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                message = json.loads(await process.stdout.readexactly(length))
                await self._dispatch(message)
        except (asyncio.IncompleteReadError, ValueError, ConnectionError):
            return
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"{self.name} exited"))
            self._pending.clear()
            with contextlib.suppress(Exception):  # a check waiting for an answer learns there will be none
                await process.wait()
                async with self._changed:
                    self._changed.notify_all()

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # a response to one of ours
            future = self._pending.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(message.get("result"))
            return
        if "id" in message:  # the server asks: settings are the project's own, the rest needs no answer
            items = (message.get("params") or {}).get("items", [])
            result = [None] * len(items) if method == "workspace/configuration" else None
            self._send({"id": message["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            params = message.get("params") or {}
            async with self._changed:
                self._published[params.get("uri", "")] = (params.get("version"), list(params.get("diagnostics", [])))
                self._changed.notify_all()

    def close(self) -> asyncio.subprocess.Process | None:
        """Stop the server and whatever it started; safe to call at any time, from any code. Returns the
        stopped process, for `aclose` to reap."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        if self._reader is not None:
            self._reader.cancel()
        if self._ready is not None:
            self._ready.cancel()
        return process

    async def aclose(self) -> None:
        """`close`, then wait until the process is reaped, so nothing of it outlives the event loop."""
        process = self.close()
        if process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 5)


def _finding(data: dict[str, Any], source: str) -> Finding:
    start = (data.get("range") or {}).get("start") or {}
    code = data.get("code")
    if isinstance(code, dict):
        code = code.get("value")
    return Finding(line=int(start.get("line", 0)) + 1, column=int(start.get("character", 0)) + 1,
                   code=str(code or "error"), message=" ".join(str(data.get("message", "")).split()), source=source)
