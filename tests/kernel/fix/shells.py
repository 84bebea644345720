"""An in-process IPython shell with a failure log listening to its cells: what Fix's context and the offline
model's Fix scenario are both tested on."""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from opencode_nb.kernel.fix.failures import FailureLog


@pytest.fixture(scope="module")
def ipython() -> Iterator[Any]:
    """IPython's shell is a process-wide singleton that takes over `__main__` and adds builtins: undone after."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    main, added = sys.modules["__main__"], {"display", "__IPYTHON__"} - set(vars(builtins))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    yield shell
    InteractiveShell.clear_instance()
    sys.modules["__main__"] = main
    for name in added:
        vars(builtins).pop(name, None)


@pytest.fixture
def shell(ipython: Any) -> Iterator[Any]:
    """The shell, with a fresh failure log listening to its cells and none of a test's names left after."""
    before = set(ipython.user_ns)
    log = FailureLog()
    log.register(ipython)
    ipython.failures = log
    yield ipython
    log.unregister()
    for name in set(ipython.user_ns) - before:
        del ipython.user_ns[name]
