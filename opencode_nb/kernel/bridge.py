"""The live kernel as tools see it: `ctx.kernel`, filled only when the workspace runs in a kernel.

Tools never import IPython or this package; they receive this object through their context, typed by
`opencode_nb.tool.context.KernelBridge`, and a workspace outside a kernel simply has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..config.schema import SandboxMode
from ..sandbox.confine import MECHANISMS, Mechanism, warm
from ..tool.context import SandboxRefused
from ..values import CodeRun
from .notebook.journal import Journal, LiveRun
from .python.live import LiveRunner

SANDBOX_MEMORY_MB = 4096
"""A sandboxed run's memory budget beyond what the kernel already holds."""


class IPythonBridge:
    def __init__(self, shell: Any, notebook_path: Callable[[], str | None], journal: Journal | None = None) -> None:
        """`journal`: where live runs are recorded for the turn that made them (`%agent undo`).

        Built with the workspace, off the kernel's main thread: the sandbox's modules are imported and its
        confinement prepared here, so the person's cells never wait for that at the first sandboxed run.
        """
        self._shell = shell
        self._notebook_path = notebook_path
        self.journal = journal if journal is not None else Journal()
        self.live = LiveRunner(shell)
        self.sandbox_memory_mb = SANDBOX_MEMORY_MB
        """The memory a sandboxed run may use beyond what it shares with the kernel; past it, it is killed."""
        self.use_fork = True
        """Whether sandboxed code may run in a fork; off, every run goes to a worker given copies (slower, and it
        sees only the variables the code names)."""
        self.confine_with: tuple[Mechanism, ...] = MECHANISMS
        """The OS confinements a fork may use, strongest first; narrowed to see what a machine without the
        stronger ones gets."""
        from ..sandbox.bwrap import jupyter_runtime
        from .python import fork, worker  # noqa: F401  (imported here, off the main thread)

        warm()
        jupyter_runtime()

    @property
    def language(self) -> str:
        """What the kernel reports as its language; IPython's is python."""
        kernel = getattr(self._shell, "kernel", None)
        info = getattr(kernel, "language_info", None) or {}
        return str(info.get("name") or "python")

    @property
    def notebook_path(self) -> str | None:
        """Read at each use: the front end may say which notebook it is only after the workspace is built."""
        return self._notebook_path()

    @property
    def user_ns(self) -> Mapping[str, Any]:
        return self._shell.user_ns

    async def run_live(self, code: str, *, timeout_s: float, on_output: Callable[[str], None]) -> CodeRun:
        run = await self.live.run(code, timeout_s=timeout_s, on_output=on_output)
        if run.run_id is not None:
            self.journal.record(LiveRun(run.run_id))
        return run

    async def run_sandboxed(self, code: str, *, timeout_s: float, on_output: Callable[[str], None],
                            sandbox: SandboxMode = "auto") -> CodeRun:
        """A fork when it is safe (fast, and sees everything); a worker given copies when it is not. Either is
        confined by the OS unless `sandbox` is off; `required` refuses to run without that."""
        from .python.fork import fork_refusal, run_forked
        from .python.worker import run_in_worker, worker_refusal

        namespace = self._shell.user_ns
        why_not_fork = fork_refusal(code, namespace) if self.use_fork else "forks are turned off in this kernel"
        if why_not_fork is None:
            return await run_forked(code, self._shell, timeout_s=timeout_s, memory_mb=self.sandbox_memory_mb,
                                    on_output=on_output, mechanisms=() if sandbox == "off" else self.confine_with,
                                    required=sandbox == "required")
        why_not_worker = worker_refusal(code, namespace)
        if why_not_worker is not None:
            raise SandboxRefused(why_not_worker)
        run = await run_in_worker(code, namespace, timeout_s=timeout_s, memory_mb=self.sandbox_memory_mb,
                                  on_output=on_output, confine=sandbox != "off", required=sandbox == "required")
        return run.model_copy(update={"notes": [f"Not forked: {why_not_fork}", *run.notes]})

    def undo(self, run_id: str | None = None) -> str:
        return self.live.undo(run_id)
