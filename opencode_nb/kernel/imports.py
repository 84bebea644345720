"""What the workspace's build thread imports before the magics may import anything themselves.

Python cannot import into one package from two threads while its `__init__` runs (see
`NotebookAgent.imports_settled`), so the build thread imports, up front, every part the kernel's magics,
views and plans reach lazily; the main thread waits for it once, and imports nothing new after that.
"""

from __future__ import annotations

import importlib

PARTS = (
    "opencode_nb.workspace",
    "opencode_nb.views",
    "opencode_nb.views.records",
    "opencode_nb.kernel.bridge",
    "opencode_nb.kernel.ending",
    "opencode_nb.kernel.notebook.cells",
    "opencode_nb.kernel.notebook.applying",
    "opencode_nb.kernel.plans.steps",
    "opencode_nb.kernel.plans.save",
    "opencode_nb.kernel.magics.listing",
    "opencode_nb.kernel.magics.preflight",
    "opencode_nb.kernel.python.gates",
)


def import_parts() -> None:
    for name in PARTS:
        importlib.import_module(name)
    from .fix.versions import warm

    warm()  # the installed distributions' map, which a Fix of a module's error reads
