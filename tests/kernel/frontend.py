"""A front end in a test: drives a real kernel through jupyter_client the way JupyterLab does.

It collects every iopub and shell message on a pump thread, keeps the widget models the kernel opens
(their state, updated by `echo_update`/`update` messages), reports a rendered view for every widget
the kernel displays (the `_view_count` update JupyterLab sends), and can click a button exactly as
`@jupyter-widgets/controls` does: a `comm_msg` with `{"method": "custom", "content": {"event": "click"}}`,
optionally on a kernel subshell as JupyterLab 4.6 sends it.

Given a `FakeExtension`, it also plays the opencode_nb JupyterLab extension (labextension/PROTOCOL.md):
it says hello on the `opencode_nb` comm, answers every request from an in-memory nbformat notebook and
records it, and runs cells as the notebook does (an execute request carrying the cell's id), sending
`cell_done` after each. Replies never hold up the pump: slow ones are sent from a timer, cell runs from
a thread of their own.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import nbformat
from jupyter_client.manager import start_new_kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CAPABILITIES = ["read_cells", "insert_cells", "replace_cell", "delete_cells", "run_cells", "active_cell"]


class FakeExtension:
    """The JupyterLab extension's side of the `opencode_nb` comm, over an in-memory notebook.

    Args:
        cells: the notebook's cells: a source string (a code cell) or `{"cell_type", "source", "id", ...}`.
        delays: action → seconds before its reply is sent.
        failures: action → the `error` of an `ok: false` reply.
        silent: actions that are never answered.
        subshell: send replies on a kernel subshell, as JupyterLab 4.6 sends comm messages.
    """

    def __init__(self, cells: list[str | dict[str, Any]] | None = None, *, path: str = "work/analysis.ipynb",
                 capabilities: list[str] | None = None, frontend: str = "JupyterLab 4.6.6", version: str = "0.1.0",
                 delays: dict[str, float] | None = None, failures: dict[str, str] | None = None,
                 silent: set[str] | None = None, subshell: bool = False) -> None:
        self.nb = nbformat.v4.new_notebook()
        for i, cell in enumerate(cells or []):
            spec = {"source": cell} if isinstance(cell, str) else dict(cell)
            kind = spec.pop("cell_type", "code")
            spec.setdefault("id", f"c{i}")
            self.nb.cells.append(nbformat.v4.new_markdown_cell(**spec) if kind == "markdown"
                                 else nbformat.v4.new_code_cell(**spec))
        self.path = path
        self.capabilities = CAPABILITIES if capabilities is None else capabilities
        self.frontend = frontend
        self.version = version
        self.delays = delays or {}
        self.failures = failures or {}
        self.silent = silent or set()
        self.subshell = subshell
        self.requests: list[dict[str, Any]] = []
        """Every request received, in order, each with the `comm_id` it came on."""
        self.active: str | None = self.nb.cells[0].id if self.nb.cells else None
        self.running: str | None = None
        self.lock = threading.RLock()

    def hello(self, *, page: str | None = None, user: dict[str, str] | None = None) -> dict[str, Any]:
        """The hello; `page` and `user` as the extension names the page and the person signed in to it."""
        extra: dict[str, Any] = {"page": page} if page else {}
        if user is not None:
            extra["user"] = user
        return {"hello": "jupyterlab", "version": self.version, "capabilities": list(self.capabilities),
                "path": self.path, "frontend": self.frontend, **extra}

    # ------------------------------------------------------------------------------------------ the notebook

    def ids(self) -> list[str]:
        with self.lock:
            return [c.id for c in self.nb.cells]

    def cell(self, cell_id: str) -> Any:
        with self.lock:
            return next(c for c in self.nb.cells if c.id == cell_id)

    def source(self, cell_id: str) -> str:
        return self.cell(cell_id).source

    def actions(self) -> list[str]:
        with self.lock:
            return [r["action"] for r in self.requests]

    def describe(self, cell: Any, max_chars: int | None = None) -> dict[str, Any]:
        outputs = copy.deepcopy(list(cell.get("outputs", [])))
        if max_chars is not None:
            outputs = [_summarised(o, max_chars) for o in outputs]
        return {"id": cell.id, "cell_type": cell.cell_type, "source": cell.source, "metadata": dict(cell.metadata),
                "execution_count": cell.get("execution_count"), "outputs": outputs, "running": cell.id == self.running}

    # ------------------------------------------------------------------------------------------ requests

    def answer(self, data: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request other than run_cells, exactly as the protocol says."""
        request_id, action = data.get("request_id"), data.get("action")
        if action in self.failures:
            return {"reply_to": request_id, "ok": False, "error": self.failures[action]}
        try:
            with self.lock:
                result = getattr(self, f"_{action}")(data)
        except LookupError as exc:
            return {"reply_to": request_id, "ok": False, "error": str(exc.args[0])}
        return {"reply_to": request_id, "ok": True, **result}

    def _index(self, cell_id: str) -> int:
        for i, cell in enumerate(self.nb.cells):
            if cell.id == cell_id:
                return i
        raise LookupError(f"There is no cell with id {cell_id} in {self.path}.")

    def _read_cells(self, data: dict[str, Any]) -> dict[str, Any]:
        wanted = data.get("cell_ids")
        cells = self.nb.cells if wanted is None else [self.nb.cells[self._index(i)] for i in wanted]
        limit = data.get("max_output_chars", 2000)
        return {"path": self.path, "cells": [self.describe(c, limit) for c in cells], "total": len(self.nb.cells),
                "active_cell": self.active, "running_cell": self.running}

    def _insert_cells(self, data: dict[str, Any]) -> dict[str, Any]:
        after = data.get("after")
        if data.get("index") is not None:
            index = min(int(data["index"]), len(self.nb.cells))
        else:
            index = self._index(after) + 1 if after is not None else len(self.nb.cells)
        made = []
        for spec in data["cells"]:
            maker = nbformat.v4.new_markdown_cell if spec.get("cell_type") == "markdown" else nbformat.v4.new_code_cell
            made.append(maker(source=spec.get("source", ""), metadata=spec.get("metadata") or {}))
        self.nb.cells[index:index] = made
        return {"ids": [c.id for c in made], "index": index}

    def _replace_cell(self, data: dict[str, Any]) -> dict[str, Any]:
        index = self._index(data["cell_id"])
        cell = self.nb.cells[index]
        previous = self.describe(cell)
        if data.get("cell_type") and data["cell_type"] != cell.cell_type:
            maker = nbformat.v4.new_markdown_cell if data["cell_type"] == "markdown" else nbformat.v4.new_code_cell
            cell = maker(source=cell.source, metadata=cell.metadata, id=cell.id)
            self.nb.cells[index] = cell
        for key in ("source", "metadata", "outputs", "execution_count"):
            if key in data and (cell.cell_type == "code" or key in ("source", "metadata")):
                cell[key] = copy.deepcopy(data[key])
        return {"previous": previous}

    def _delete_cells(self, data: dict[str, Any]) -> dict[str, Any]:
        indexes = sorted(self._index(i) for i in data["cell_ids"])
        deleted = [{**self.describe(self.nb.cells[i]), "index": i} for i in indexes]
        for i in reversed(indexes):
            del self.nb.cells[i]
        return {"deleted": deleted}

    def _notify(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("cell_id") is not None:
            self._index(data["cell_id"])
        return {}

    def _show_pending(self, data: dict[str, Any]) -> dict[str, Any]:
        return {}  # the request itself is the record a test reads

    def _active_cell(self, data: dict[str, Any]) -> dict[str, Any]:
        index = self._index(self.active) if self.active is not None else None
        return {"cell_id": self.active, "index": index}


def _summarised(output: dict[str, Any], limit: int) -> dict[str, Any]:
    out = dict(output)
    if isinstance(out.get("text"), str) and len(out["text"]) > limit:
        out["text"] = f"{out['text'][:limit]}…[{len(out['text']) - limit} more characters]"
    if isinstance(out.get("data"), dict):
        out["data"] = {k: f"[{k}: {len(v) * 3 // 4} bytes]" if k.startswith("image/") else v
                       for k, v in out["data"].items()}
    return out


class FakeFrontend:
    def __init__(self, cwd: str, env: dict[str, str], *, render_views: bool = True,
                 hello: dict[str, Any] | None = None, extra_arguments: list[str] | None = None,
                 extension: FakeExtension | None = None) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd, env=env,
                                            extra_arguments=extra_arguments or [])
        self.render_views = render_views
        self.extension = extension
        self.hello = extension.hello() if extension is not None and hello is None else hello
        """What the JupyterLab extension answers on the `opencode_nb` comm; None: no extension."""
        self.iopub: list[dict[str, Any]] = []
        self.shell: list[dict[str, Any]] = []
        self.models: dict[str, dict[str, Any]] = {}
        self.extension_comms: list[str] = []
        """The `opencode_nb` comms the extension answers on, oldest first."""
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._stop = False
        self._subshell = self.create_subshell() if extension is not None and extension.subshell else None
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------------------------------ pump

    def _pump(self) -> None:
        while not self._stop:
            channels = ((self.kc.get_iopub_msg, self.iopub, 0.05), (self.kc.get_shell_msg, self.shell, 0.01))
            for get, box, timeout in channels:
                try:
                    msg = get(timeout=timeout)
                except queue.Empty:
                    continue
                except Exception:
                    if self._stop:
                        return
                    continue
                with self._lock:
                    box.append(msg)
                if box is self.iopub:
                    self._observe(msg)

    def _observe(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == "opencode_nb" and self.hello is not None:
            self.extension_comms.append(content["comm_id"])
            self.send_comm(content["comm_id"], self.hello, self._subshell)
        elif kind == "comm_msg" and content.get("comm_id") in self.extension_comms and self.extension is not None:
            self._request(content["comm_id"], content.get("data") or {})
        elif kind == "comm_open" and content.get("target_name") == "jupyter.widget":
            state = dict(content["data"].get("state", {}))
            with self._lock:
                self.models[content["comm_id"]] = state
        elif kind == "comm_msg":
            data = content.get("data", {})
            if data.get("method") in ("update", "echo_update"):
                with self._lock:
                    self.models.setdefault(content["comm_id"], {}).update(data.get("state", {}))
        elif kind in ("display_data", "update_display_data") and WIDGET_VIEW in content.get("data", {}) \
                and self.render_views:
            model_id = content["data"][WIDGET_VIEW]["model_id"]
            self.send_comm(model_id, {"method": "update", "state": {"_view_count": 1}, "buffer_paths": []})

    # ------------------------------------------------------------------------------------------ the extension

    def _request(self, comm_id: str, data: dict[str, Any]) -> None:
        ext = self.extension
        assert ext is not None
        if "request_id" not in data:
            return
        with ext.lock:
            ext.requests.append({**data, "comm_id": comm_id})
        action = data.get("action")
        if action in ext.silent:
            return
        if action == "run_cells" and action not in ext.failures:
            threading.Thread(target=self._run_cells, args=(comm_id, data), daemon=True).start()
            return
        reply = ext.answer(data)
        delay = ext.delays.get(str(action), 0)
        if delay:
            threading.Timer(delay, self.send_comm, (comm_id, reply, self._subshell)).start()
        else:
            self.send_comm(comm_id, reply, self._subshell)

    def _run_cells(self, comm_id: str, data: dict[str, Any]) -> None:
        """As the notebook runs cells: one execute request each, carrying the cell's id; stop at an error."""
        ext = self.extension
        assert ext is not None
        time.sleep(ext.delays.get("run_cells", 0))
        results: list[dict[str, Any]] = []
        failed = False
        for cell_id in data["cell_ids"]:
            try:
                cell = ext.cell(cell_id)
            except StopIteration:
                self.send_comm(comm_id, {"reply_to": data["request_id"], "ok": False,
                                         "error": f"There is no cell with id {cell_id} in {ext.path}."}, self._subshell)
                return
            if failed:
                result = {"id": cell_id, "status": "aborted", "execution_count": None, "outputs": []}
            elif cell.cell_type != "code":
                result = {"id": cell_id, "status": "ok", "execution_count": None, "outputs": []}
            else:
                ext.running = cell_id
                result = self.execute_cell(cell_id)
                ext.running = None
                failed = result["status"] == "error" and data.get("stop_on_error", True)
            results.append(result)
            self.send_comm(comm_id, {"event": "cell_done", "request_id": data["request_id"], "result": result},
                           self._subshell)
        self.send_comm(comm_id, {"reply_to": data["request_id"], "ok": True, "results": results}, self._subshell)

    def execute_cell(self, cell_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """Run a cell of the extension's notebook as Shift+Enter does, and put its outputs into it."""
        ext = self.extension
        assert ext is not None
        msg_id = self.execute_cell_async(cell_id)
        reply = self.done(msg_id, timeout)
        outputs = [nbformat.v4.output_from_msg(m) for m in self.outputs(msg_id)
                   if m["msg_type"] != "update_display_data"]
        with ext.lock:
            cell = ext.cell(cell_id)
            cell.outputs = outputs
            cell.execution_count = reply["content"].get("execution_count")
        status = "ok" if reply["content"]["status"] == "ok" else "error"
        return {"id": cell_id, "status": status, "execution_count": cell.execution_count,
                "outputs": copy.deepcopy(outputs)}

    def execute_cell_async(self, cell_id: str) -> str:
        """Send a cell of the extension's notebook for execution, with its id; returns the request's id."""
        ext = self.extension
        assert ext is not None
        return self.execute(ext.source(cell_id), metadata={"cellId": cell_id})

    def open_comm(self) -> str:
        """Open an `opencode_nb` comm from the front end, as the extension does after a page reload."""
        import uuid

        comm_id = uuid.uuid4().hex
        self.extension_comms.append(comm_id)
        msg = self.kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": "opencode_nb", "data": {}})
        self._send(msg)
        if self.hello is not None:
            self.send_comm(comm_id, self.hello, self._subshell)
        return comm_id

    # ------------------------------------------------------------------------------------------ sending

    def _send(self, msg: dict[str, Any]) -> None:
        with self._send_lock:
            self.kc.shell_channel.send(msg)

    def execute(self, code: str, subshell_id: str | None = None, metadata: dict[str, Any] | None = None) -> str:
        msg = self.kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                                      "user_expressions": {}, "allow_stdin": False,
                                                      "stop_on_error": True}, metadata=metadata)
        if subshell_id:
            msg["header"]["subshell_id"] = subshell_id
        self._send(msg)
        return msg["header"]["msg_id"]

    def send_comm(self, comm_id: str, data: dict[str, Any], subshell_id: str | None = None, *,
                  session: str | None = None) -> None:
        """`session`: send as another client of the kernel would (another page: its own client session id)."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        if subshell_id:
            msg["header"]["subshell_id"] = subshell_id
        if session:
            msg["header"]["session"] = session
        self._send(msg)

    def click(self, comm_id: str, subshell_id: str | None = None, *, session: str | None = None) -> None:
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}}, subshell_id, session=session)

    def html_of(self, css_class: str) -> list[str]:
        """The values of the kernel's HTML widgets that show `css_class`."""
        with self._lock:
            values = [str(s.get("value", "")) for s in self.models.values()]
        return [v for v in values if css_class in v]

    def set_value(self, comm_id: str, **state: Any) -> None:
        self.send_comm(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def create_subshell(self) -> str:
        self.kc.control_channel.send(self.kc.session.msg("create_subshell_request", {}))
        return self.kc.get_control_msg(timeout=10)["content"]["subshell_id"]

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    # ------------------------------------------------------------------------------------------ waiting

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise TimeoutError(f"timed out after {timeout} s waiting for {what}")

    def reply(self, msg_id: str, timeout: float = 30.0) -> dict[str, Any]:
        def found() -> Any:
            with self._lock:
                return next((m for m in self.shell if m["parent_header"].get("msg_id") == msg_id), None)

        return self.wait_for(found, timeout, f"the execute_reply of {msg_id}")

    def reply_or_none(self, msg_id: str) -> dict[str, Any] | None:
        with self._lock:
            return next((m for m in self.shell if m["parent_header"].get("msg_id") == msg_id), None)

    def done(self, msg_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """The execute_reply, after the cell's last output has arrived (iopub idle)."""
        reply = self.reply(msg_id, timeout)

        def idle() -> bool:
            with self._lock:
                return any(m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id
                           and m["content"]["execution_state"] == "idle" for m in self.iopub)

        self.wait_for(idle, timeout, "iopub idle")
        return reply

    def run(self, code: str, timeout: float = 30.0) -> dict[str, Any]:
        return self.done(self.execute(code), timeout)

    def run_id(self, code: str, timeout: float = 30.0) -> str:
        """Run `code` to the end and return its message id (to read its outputs)."""
        msg_id = self.execute(code)
        self.done(msg_id, timeout)
        return msg_id

    def outputs(self, msg_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [m for m in self.iopub if m["parent_header"].get("msg_id") == msg_id
                    and m["msg_type"] in ("stream", "display_data", "update_display_data", "execute_result", "error")]

    def final_outputs(self, msg_id: str) -> list[dict[str, Any]]:
        """Outputs as a saved notebook would hold them: display updates applied in place."""
        shown: list[dict[str, Any]] = []
        for msg in self.outputs(msg_id):
            display_id = msg["content"].get("transient", {}).get("display_id")
            if msg["msg_type"] == "update_display_data":
                for i, old in enumerate(shown):
                    if old["content"].get("transient", {}).get("display_id") == display_id:
                        shown[i] = msg
            else:
                shown.append(msg)
        return shown

    def text(self, msg_id: str) -> str:
        parts = []
        for msg in self.final_outputs(msg_id):
            content = msg["content"]
            if msg["msg_type"] == "stream":
                parts.append(content["text"])
            elif msg["msg_type"] == "error":
                parts.append(f"{content['ename']}: {content['evalue']}")
            else:
                parts.append(content.get("data", {}).get("text/plain", ""))
        return "\n".join(parts)

    def html(self, msg_id: str) -> str:
        return "\n".join(m["content"].get("data", {}).get("text/html", "") for m in self.final_outputs(msg_id))

    def buttons(self, description: str) -> list[str]:
        """Comm ids of the button models with this description, oldest first."""
        with self._lock:
            return [cid for cid, state in self.models.items()
                    if state.get("_model_name") == "ButtonModel" and state.get("description") == description]

    def wait_button(self, description: str, timeout: float = 20.0, enabled: bool = True) -> str:
        def found() -> str | None:
            with self._lock:
                for cid, state in self.models.items():
                    if state.get("_model_name") == "ButtonModel" and state.get("description") == description \
                            and (not enabled or not state.get("disabled")):
                        return cid
            return None

        return self.wait_for(found, timeout, f"a button {description!r}")

    def close(self) -> None:
        self._stop = True
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
