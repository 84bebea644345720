"""The installed version of the package behind a module, for an import error or a module missing an attribute.

Whether `np.float` exists or `from pydantic import BaseSettings` works depends on the version installed, so
the model is told it rather than left to guess. The distribution's name may differ from the import name
(`yaml` is PyYAML, `sklearn` scikit-learn): the name itself is tried first, which is instant, and only then
the map of every installed distribution's top-level modules, which reads each one's file list (a fifth of a
second and more with a few hundred installed, seconds on a loaded machine) and so is built on a worker thread
when the extension loads, and again only when a folder of the search path changed: the person may have
installed the package since.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from importlib import metadata

LOOKUP_TIMEOUT_S = 4.0
"""How long the map of distributions may take to build before the version is said to be unknown."""


_MAPS: dict[tuple[tuple[str, int], ...], dict[str, list[str]]] = {}


def _installed_state() -> tuple[tuple[str, int], ...]:
    """The folders distributions are found in, with their times: an install or uninstall changes a time."""
    state = []
    for folder in sys.path:
        try:
            state.append((folder, os.stat(folder or ".").st_mtime_ns))
        except OSError:
            continue
    return tuple(state)


def _distributions() -> dict[str, list[str]]:
    """The map, built again only when a folder of the search path changed since (a package installed)."""
    key = _installed_state()
    found = _MAPS.get(key)
    if found is None:
        found = {name: sorted(set(dists)) for name, dists in metadata.packages_distributions().items()}
        _MAPS.clear()
        _MAPS[key] = found
    return found


def warm() -> None:
    """Build the map now (on the workspace's worker thread), so the first failed cell's Fix does not wait."""
    with contextlib.suppress(Exception):  # a broken distribution's metadata: the lookup says so when needed
        _distributions()


def _direct(top: str) -> tuple[str, str] | None:
    for name in dict.fromkeys((top, top.replace("_", "-"))):
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # a broken distribution's metadata: try the map
            return None
    return None


async def installed(module: str) -> str:
    """One line: `pydantic 2.14.4 (module pydantic)`, `PyYAML 6.0.2 (module yaml)`, or what is known instead."""
    top = module.split(".")[0]
    found = _direct(top)
    if found is not None:
        return f"{found[0]} {found[1]} is installed (the distribution of module {top})"
    try:
        dists = (await asyncio.wait_for(asyncio.to_thread(_distributions), LOOKUP_TIMEOUT_S)).get(top, [])
    except (TimeoutError, Exception):
        return f"the installed version of the package of module {top} could not be found out in time"
    versions = []
    for dist in dists:
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except Exception:
            versions.append(f"{dist} (version unknown)")
    if versions:
        return f"{', '.join(versions)} installed (the distribution{'s' * (len(versions) > 1)} of module {top})"
    where = "a module of the standard library" if top in sys.stdlib_module_names else "not installed"
    return f"module {top}: no installed distribution provides it ({where})"


def python_line() -> str:
    return f"Python {sys.version.split()[0]} ({sys.executable})"
