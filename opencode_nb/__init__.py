"""opencode_nb: a Jupyter-native, multi-agent AI environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["Workspace", "__version__", "load_ipython_extension", "tool", "unload_ipython_extension"]


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext opencode_nb`: the `%agent` magics, live views and the notebook's workspace."""
    from .kernel import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    from .kernel import unload_ipython_extension as unload

    unload(shell)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension lives, for `jupyter labextension develop --overwrite .`."""
    return [{"src": "labextension", "dest": "opencode-nb"}]


def __getattr__(name: str) -> Any:
    # Imported on first use so `%load_ext opencode_nb` and `opencode-nb --version` stay fast.
    if name == "Workspace":
        from .workspace import Workspace

        return Workspace
    if name == "tool":  # the `tool` package, which is also the `@tool` decorator (see tool/__init__.py)
        import importlib

        return importlib.import_module(".tool", __name__)
    raise AttributeError(f"module 'opencode_nb' has no attribute {name!r}")
