"""A front end in a test: drives a real kernel through jupyter_client the way JupyterLab does.

It collects every iopub and shell message on a pump thread, keeps the widget models the kernel opens
(their state, updated by `echo_update`/`update` messages), reports a rendered view for every widget
the kernel displays (the `_view_count` update JupyterLab sends), and can click a button exactly as
`@jupyter-widgets/controls` does: a `comm_msg` with `{"method": "custom", "content": {"event": "click"}}`,
optionally on a kernel subshell as JupyterLab 4.6 sends it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from jupyter_client.manager import start_new_kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class FakeFrontend:
    def __init__(self, cwd: str, env: dict[str, str], *, render_views: bool = True,
                 hello: dict[str, Any] | None = None, extra_arguments: list[str] | None = None) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd, env=env,
                                            extra_arguments=extra_arguments or [])
        self.render_views = render_views
        self.hello = hello
        """What the JupyterLab extension answers on the `opencode_nb` comm; None: no extension."""
        self.iopub: list[dict[str, Any]] = []
        self.shell: list[dict[str, Any]] = []
        self.models: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._stop = False
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
            self.send_comm(content["comm_id"], self.hello)
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

    # ------------------------------------------------------------------------------------------ sending

    def execute(self, code: str, subshell_id: str | None = None) -> str:
        msg = self.kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                                      "user_expressions": {}, "allow_stdin": False,
                                                      "stop_on_error": True})
        if subshell_id:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def send_comm(self, comm_id: str, data: dict[str, Any], subshell_id: str | None = None) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        if subshell_id:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)

    def click(self, comm_id: str, subshell_id: str | None = None) -> None:
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}}, subshell_id)

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
