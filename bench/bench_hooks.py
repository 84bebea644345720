"""What command hooks add to a tool call: one no-op `PreToolUse` hook (`exit 0`, unconfined and inside
bubblewrap where there is one), and no hooks configured (goals: ≤ 10 ms per call, median; nothing measurable).
For scale, the bash tool's own process for `exit 0` in bubblewrap (`ShellRun`), in the same rounds.

Each figure is the median of N calls of `CommandHooks.run` for a `bash` call, interleaved round by round with
the other configurations so that the machine's load falls on all alike. "No hooks" is `run` on a `CommandHooks`
with no entries: what every tool call pays when nobody configured any.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from opencode_nb.config import load_config
from opencode_nb.hook import CommandHooks, SessionInfo, hook_entries, sandboxed
from opencode_nb.sandbox.policy import Backend, ShellSandbox, find_backend
from opencode_nb.tool.shell.process import ShellRun

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
CALL = {"tool_input": {"command": "git status", "description": "Show the status"}, "tool_use_id": "call_1"}


def hooks(root: Path, command: str | None) -> CommandHooks:
    config = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
              } if command else {}
    loaded = load_config(root, config, env={"XDG_CONFIG_HOME": str(root / "xdg"), "HOME": str(root / "home")})
    return CommandHooks(hook_entries(loaded), project_dir=root, session_info=SessionInfo("ses_bench", root))


class BashInSandbox:
    """`exit 0` as the bash tool runs it in bubblewrap: the reference a confined hook is compared with."""

    def __init__(self, root: Path, sandbox: ShellSandbox) -> None:
        self.root, self.sandbox = root, sandbox

    async def run(self, *_: object, **__: object) -> None:
        launch = await self.sandbox.launch("bench", tell=False)
        await ShellRun("exit 0", cwd=self.root, output_dir=self.root / "data" / "out", launch=launch).wait(10)


async def timed(target: CommandHooks | BashInSandbox) -> float:
    start = time.perf_counter()
    await target.run("PreToolUse", CALL, tool_name="bash")
    return time.perf_counter() - start


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".git").mkdir()
        kinds: dict[str, CommandHooks | BashInSandbox] = {"no hooks": hooks(root, None),
                                                           "no-op hook": hooks(root, "exit 0")}
        if isinstance(find_backend(), Backend):
            sandbox = ShellSandbox("required", writable=[root])
            confined = hooks(root, "exit 0")
            confined.run_command = sandboxed(sandbox, quarantine=root / "data" / "quarantine")
            kinds["no-op hook in bwrap"] = confined
            kinds["bash `exit 0` in bwrap"] = BashInSandbox(root, sandbox)
        for target in kinds.values():  # warm: imports, the sandbox's probe
            await timed(target)
        times: dict[str, list[float]] = {name: [] for name in kinds}
        for _ in range(N):
            for name, target in kinds.items():
                times[name].append(await timed(target))
        for name, spent in times.items():
            spent.sort()
            print(f"{name:>22}: median {statistics.median(spent) * 1000:8.3f} ms, "
                  f"p90 {spent[int(len(spent) * 0.9)] * 1000:8.3f} ms  (N={N})")


if __name__ == "__main__":
    asyncio.run(main())
