"""A small harness that drives a real JupyterLab in headless Chromium (Playwright, sync API).

Typical use (the ``lab`` fixture in ``conftest.py`` does the start/close for you)::

    with Lab(root=tmp_path, env={"OPENCODE_NB_DATA_DIR": str(data)}) as lab:
        lab.write_notebook("t.ipynb", ["print('hi')"])
        lab.open_notebook("t.ipynb")
        lab.run_cell(0)
        lab.wait_cell_done(0)
        assert "hi" in lab.output_text(0)

What it does, and why:

* ``jupyter lab`` runs from the *same* interpreter as the tests (``sys.executable -m jupyterlab``) on a free
  127.0.0.1 port with a random token, ``--allow-root`` (CI containers run as root) and no news/update checks.
* Everything per-user is isolated in temp dirs: lab settings, workspaces (otherwise a previous run's workspace
  is restored), runtime, config, data, IPython dir. A settings file turns off the "Jupyter news" toast, which
  ``--LabApp.news_url=None`` alone does not.
* The page gets the JupyterLab extension as built in this checkout (``opencode_nb/labextension``, where
  ``jlpm build`` writes), not the copy the venv got when the package was installed, which a rebuild leaves as it
  was.
* A ``python3`` kernelspec is written into an isolated ``JUPYTER_PATH`` entry (searched before the venv's own
  spec), with ``argv[0] = sys.executable``, so the kernel is always this venv's Python.
* The server gets ``env`` (and ``pythonpath``) on top of ``os.environ``; kernels inherit the server's environment,
  so that is how tests hand e.g. ``OPENCODE_NB_DATA_DIR`` to the kernel.
* The server is started with ``start_new_session=True``; ``close()`` sends SIGTERM to its process group and
  SIGKILL after a timeout, so kernels die with it (shutdown can hang with some server extensions).
* "Kernel ready" means the status bar reads ``… | Idle``. The execution indicator's ``data-status="idle"`` is set
  before the kernel connects, and a Shift+Enter sent then is silently lost; ``run_cell`` therefore also checks
  that the cell's prompt actually changed.
* Real-time collaboration is off unless asked for (``collaborative=True``): jupyter-collaboration, once installed,
  turns it on for every server, and a test of a page's own copy of the notebook should not get the shared
  document instead. With it on, the shared document's store (``.jupyter_ystore.db``) and session file are kept
  in the state dir, not in ``root`` where the notebooks and the agents' files are.
* People: with ``user=`` or ``collaborative=True`` the server names each browser context after the cookie it
  sets (``identity.py``), so ``/api/me`` says "alice" in one context and "bob" in another. ``open_page()`` opens
  a second page on the same server in a context of its own: a different client, and a different person.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("OPENCODE_NB_CHROMIUM", "/usr/bin/chromium")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

KERNEL_DISPLAY_NAME = "Python 3 (ipykernel)"
KERNELSPEC_METADATA = {"name": "python3", "display_name": KERNEL_DISPLAY_NAME, "language": "python"}

_IDLE_RE = re.compile(r"\|\s*Idle\s*$")
_DONE_PROMPT_RE = re.compile(r"^\[\d+\]:?$")
_STARTED_PROMPT_RE = re.compile(r"^\[(\*|\d+)\]:?$")


# State of the page for _settle(): is the tab named `name` current, does its panel show cells, is the kernel idle.
_SETTLE_JS = """(name) => {
  const tabs = [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab')];
  const tab = tabs.find(t => t.innerText.trim() === name);
  const current = !!tab && tab.classList.contains('lm-mod-current');
  const panel = tab ? document.getElementById(tab.dataset.id) : null;
  const status = [...document.querySelectorAll('.jp-StatusBar-Widget')].map(e => e.innerText).join('\\n');
  return {
    tab: !!tab, current, panel: panel ? panel.id : null,
    cells: !!panel && panel.classList.contains('jp-NotebookPanel') && !!panel.querySelector('.jp-Notebook-cell'),
    idle: /\\|\\s*Idle\\s*$/m.test(status),
    splash: !!document.getElementById('jupyterlab-splash'),
  };
}"""


# The identity provider that names people after a cookie (identity.py), imported by the server from the checkout.
IDENTITY_PROVIDER = f"{__package__}.identity.CookieNamedIdentityProvider"
_REPO = Path(__file__).resolve().parents[len(__package__.split("."))]


def _checkout_build() -> Path | None:
    """The JupyterLab extension built in the checkout the kernels import opencode_nb from, if there is one."""
    spec = importlib.util.find_spec("opencode_nb")
    if spec is None or spec.origin is None:
        return None
    built = Path(spec.origin).resolve().parent / "labextension"
    return built if (built / "package.json").is_file() and built.parent.parent == _REPO else None


class LabError(RuntimeError):
    """The server or the page did not reach the expected state; the message carries the server log tail."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """One JupyterLab server plus one headless Chromium page (more, each a client of its own: :meth:`open_page`).

    Args:
        root: the server's ``root_dir`` (notebooks live here). A temp dir is made when omitted.
        env: extra environment variables for the server and therefore for every kernel it starts
            (``OPENCODE_NB_*`` variables of the test process itself are *not* inherited; pass them here).
        pythonpath: entries prepended to ``PYTHONPATH`` (server and kernels).
        chromium: path of the Chromium binary.
        startup_timeout: seconds to wait for ``/api/status``.
        timeout: default Playwright timeout in seconds for waits in the page.
        viewport: browser viewport size.
        expose_app: make the JupyterLab application reachable as ``window.jupyterapp`` in the page (for
            ``page.evaluate`` checks of models that the DOM does not show).
        collaborative: turn real-time collaboration on (it needs jupyter-collaboration; off otherwise, even where
            it is installed): every page's notebook is then the server's shared document.
        user: the username this page's person has (``/api/me``), e.g. ``"alice"``; pages opened with
            :meth:`open_page` name their own. Without it, and without ``collaborative``, the server identifies
            people as it does by default.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        pythonpath: list[str | os.PathLike[str]] | None = None,
        chromium: str = CHROMIUM,
        startup_timeout: float = 60.0,
        timeout: float = 30.0,
        viewport: tuple[int, int] = (1400, 1000),
        expose_app: bool = False,
        collaborative: bool = False,
        user: str | None = None,
    ) -> None:
        self._state = Path(tempfile.mkdtemp(prefix="ocnb-lab-"))
        self.root = Path(root) if root is not None else self._state / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.extra_env = dict(env or {})
        self.pythonpath = [str(p) for p in pythonpath or []]
        self.chromium = chromium
        self.startup_timeout = startup_timeout
        self.timeout_ms = timeout * 1000
        self.viewport = {"width": viewport[0], "height": viewport[1]}
        self.expose_app = expose_app
        self.collaborative = collaborative
        self.user = user
        self.named_people = collaborative or user is not None
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self._state / "server.log"
        self.console: list[str] = []  # browser console messages ("type: text"), handy when a test fails
        self.current: str | None = None  # path of the notebook opened last
        self._panel_id: str | None = None  # its panel's widget id (ids change on every page load)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None
        self._pw: Any = None
        self.browser: Any = None
        self.context: Any = None
        self.page: Any = None
        self._server: Lab | None = None  # the Lab that started the server, when this one is a page of it
        self._pages: list[Lab] = []  # pages opened with open_page()

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Lab:
        """Start the server, wait for ``/api/status``, then launch Chromium (the page stays blank until ``goto``)."""
        try:
            self._start_server()
            self._start_browser()
        except BaseException:
            self.close()
            raise
        return self

    def _server_env(self) -> dict[str, str]:
        s = self._state
        dirs = {
            "JUPYTERLAB_SETTINGS_DIR": s / "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": s / "lab-workspaces",
            "JUPYTER_RUNTIME_DIR": s / "runtime",
            "JUPYTER_CONFIG_DIR": s / "config",
            "JUPYTER_DATA_DIR": s / "data",
            "IPYTHONDIR": s / "ipython",
        }
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)

        # No "Would you like to get notified about official Jupyter news?" toast.
        notif = dirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "apputils-extension"
        notif /= "notification.jupyterlab-settings"
        notif.parent.mkdir(parents=True, exist_ok=True)
        notif.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))

        # The python3 kernel is this interpreter (JUPYTER_PATH wins over sys.prefix/share/jupyter).
        kpath = s / "jupyter-path"
        spec_dir = kpath / "kernels" / "python3"
        spec_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNEL_DISPLAY_NAME,
            "language": "python",
            "metadata": {"debugger": True},
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))

        # The page runs the extension as last built in this checkout: an editable install copied the build of the
        # moment it was installed into the venv, and a later `jlpm build` goes to opencode_nb/labextension only.
        # The first labextensions dir on the path that has a package wins.
        built = _checkout_build()
        if built is not None:
            (kpath / "labextensions").mkdir(exist_ok=True)
            (kpath / "labextensions" / "opencode-nb").symlink_to(built, target_is_directory=True)

        # Inherit the test process's environment, minus settings that would leak a developer's opencode_nb config.
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_") and k != "JPY_SESSION_NAME"}
        env.update({k: str(v) for k, v in dirs.items()})
        env["JUPYTER_PATH"] = os.pathsep.join([str(kpath), *filter(None, [os.environ.get("JUPYTER_PATH")])])
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # silences a debugpy warning in the kernel log
        env.update(self.extra_env)
        pythonpath = list(self.pythonpath)
        if self.named_people:
            pythonpath.append(str(_REPO))  # where the server imports the identity provider from
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join([*pythonpath, *filter(None, [env.get("PYTHONPATH")])])
        return env

    def _start_server(self) -> None:
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]  # fmt: skip
        if self.expose_app:
            cmd.append("--LabApp.expose_app_in_browser=True")
        cmd += self._collaboration_args()
        if self.named_people:
            cmd.append(f"--ServerApp.identity_provider_class={IDENTITY_PROVIDER}")
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            cmd,
            env=self._server_env(),
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabError(f"jupyter lab exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.2)
        raise LabError(f"jupyter lab did not answer /api/status within {self.startup_timeout}s\n{self.log_tail()}")

    def _collaboration_args(self) -> list[str]:
        installed = importlib.util.find_spec("jupyter_server_ydoc") is not None
        if not self.collaborative:
            # Installed, it is on by default; the flag only tells the page, so the server's rooms stay unused.
            return ["--YDocExtension.disable_rtc=True"] if installed else []
        if not installed:
            raise LabError("collaborative=True needs jupyter-collaboration (pip install 'jupyter-collaboration>=5')")
        return [
            f"--SQLiteYStore.db_path={self._state / 'ystore.db'}",
            f"--YDocExtension.session_store_path={self._state / 'collaboration_sessions.json'}",
        ]

    def _start_browser(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=self.chromium, headless=True, args=CHROMIUM_ARGS)
        self._open_context(self.user)
        # No navigation yet: a JupyterLab page load costs 3-5 s, and open_notebook() navigates anyway.

    def _open_context(self, user: str | None) -> None:
        """A browser context of its own (cookies, storage: another client of the server) with one page."""
        self.context = self.browser.new_context(viewport=self.viewport)
        self.context.set_default_timeout(self.timeout_ms)
        if user is not None:
            from .identity import COOKIE

            self.context.add_cookies([{"name": COOKIE, "value": user, "url": self.base_url}])
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def open_page(self, *, user: str | None = None) -> Lab:
        """Another page on this server, in a browser context of its own: a second client, as a second person's
        browser would be (``user`` names that person; it needs ``user=`` or ``collaborative=True`` here).

        The page is a :class:`Lab` of its own for everything done in a page (``open_notebook``, ``cell``,
        ``run_cell``, ``screenshot``...) and shares the server (``api``, ``root``, ``log_tail``). Its
        ``close()`` closes only its context; closing this Lab closes it too. It starts blank, like this one.
        """
        if self._server is not None:
            return self._server.open_page(user=user)
        if self.browser is None:
            raise LabError("open_page() before start()")
        if user is not None and not self.named_people:
            raise LabError("a page of a named person needs the server started with user= or collaborative=True")
        page = copy.copy(self)  # the server's attributes; the page's own are set anew below
        page._server = self
        page._pages = []
        page.user = user
        page.console = []
        page.current = None
        page._panel_id = None
        page._open_context(user)
        self._pages.append(page)
        return page

    def close(self, timeout: float = 10.0) -> None:
        """Stop the browser, then SIGTERM the server's process group (SIGKILL after ``timeout``). Idempotent.

        A page from :meth:`open_page` closes its browser context only.
        """
        if self._server is not None:
            if self.context is not None:
                with contextlib.suppress(Exception):
                    self.context.close()
            self.page = self.context = None
            return
        for page in self._pages:
            page.close()
        self._pages.clear()
        for closer in (
            lambda: self.context and self.context.close(),
            lambda: self.browser and self.browser.close(),
            lambda: self._pw and self._pw.stop(),
        ):
            with contextlib.suppress(Exception):
                closer()
        self.page = self.context = self.browser = self._pw = None
        if self.proc is not None and self.proc.poll() is None:
            pgid = os.getpgid(self.proc.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
            # Kernels are in the same group; make sure nothing outlives the server.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
        self.proc = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if not os.environ.get("OPENCODE_NB_E2E_KEEP"):
            shutil.rmtree(self._state, ignore_errors=True)

    def log_tail(self, n: int = 60) -> str:
        """The last ``n`` lines of the server log (server and kernel stderr)."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "<no server log>"

    # ------------------------------------------------------------------ REST
    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the server's REST API with the token; returns the decoded JSON (or None for empty bodies)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("Authorization", f"token {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def kernels(self) -> list[dict[str, Any]]:
        return self.api("GET", "/api/kernels")

    def shutdown_kernels(self, timeout: float = 15.0) -> int:
        """Shut every running kernel down via ``DELETE /api/kernels/<id>``; returns how many were stopped.

        The open page does not notice at once (the status bar still says Idle); ``reload()`` afterwards, which
        starts a fresh kernel for the reopened notebook.
        """
        ids = [k["id"] for k in self.kernels()]
        for kid in ids:
            with contextlib.suppress(urllib.error.HTTPError):  # 404: already gone
                self.api("DELETE", f"/api/kernels/{kid}", timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(k["id"] in ids for k in self.kernels()):
            time.sleep(0.1)
        return len(ids)

    def read_notebook(self, name: str, timeout: float = 10.0) -> dict[str, Any]:
        """The notebook as saved on disk, through the contents API (JSON dict, nbformat v4).

        A save the page started (the extension's checkpoint, an autosave) may still be writing the file: the
        server then answers 400 "does not appear to be JSON". That is a moment, not an answer, so the read is
        repeated until the file reads whole; a file still broken after `timeout` seconds is the error.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.api("GET", f"/api/contents/{urllib.parse.quote(name)}?content=1&type=notebook")["content"]
            except urllib.error.HTTPError as error:
                if error.code != 400 or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def saved_cells(self, name: str) -> list[dict[str, Any]]:
        """The cells on disk; none while the file is not there (or never reads whole)."""
        try:
            return self.read_notebook(name)["cells"]
        except urllib.error.HTTPError:
            return []

    def write_notebook(self, name: str, cells: list[str], **metadata: Any) -> Path:
        """Write a notebook of code cells (markdown cells start with ``"# %% md\\n"``) with the python3 kernelspec."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = dict(KERNELSPEC_METADATA)
        nb.metadata["language_info"] = {"name": "python"}
        nb.metadata.update(metadata)
        for src in cells:
            if src.startswith("# %% md\n"):
                nb.cells.append(nbformat.v4.new_markdown_cell(src.removeprefix("# %% md\n")))
            else:
                nb.cells.append(nbformat.v4.new_code_cell(src))
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path

    # ------------------------------------------------------------------ page
    def goto(self, path: str) -> None:
        """Navigate to ``path`` (e.g. ``/lab``) with the token and wait for the lab shell."""
        sep = "&" if "?" in path else "?"
        self.page.goto(f"{self.base_url}{path}{sep}token={self.token}")
        self.page.locator("#jp-main-dock-panel").wait_for()

    @property
    def notebook(self) -> Any:
        """Locator of the notebook panel opened last (pinned by its widget id), else of the visible one."""
        if self._panel_id:
            return self.page.locator(f'[id="{self._panel_id}"]')
        return self.page.locator(".jp-NotebookPanel:visible")

    def wait_kernel_idle(self, timeout: float | None = None) -> None:
        """Wait until the status bar reads ``<kernel> | Idle`` (the current document's kernel is connected, idle)."""
        ms = self.timeout_ms if timeout is None else timeout * 1000
        try:
            self.page.locator(".jp-StatusBar-Widget").get_by_text(_IDLE_RE).first.wait_for(timeout=ms)
        except Exception as e:
            raise LabError(f"kernel never showed '| Idle': {e}\n{self.log_tail()}") from e

    def open_notebook(self, name: str, *, via: str = "url", timeout: float | None = None) -> Any:
        """Open ``name`` (relative to root), make it the current tab, wait until its kernel is idle.

        ``via="url"`` navigates to ``/lab/tree/<name>`` (a full page load, works whether or not the notebook is
        open); ``via="browser"`` refreshes the file browser and double-clicks the file (``name`` must be in the
        browser's current directory). Returns the panel locator (also available as :attr:`notebook`).
        """
        if via == "url":
            self.goto(f"/lab/tree/{urllib.parse.quote(name)}")
        elif via == "browser":
            if not self.page.url.startswith(self.base_url):
                self.goto("/lab")
            # The file browser polls slowly (~10 s); refresh it so a file written just now is listed.
            self.page.locator('.jp-FileBrowser-toolbar [data-command="filebrowser:refresh"]').first.click()
            listing = self.page.locator(".jp-DirListing-content")
            listing.get_by_text(Path(name).name, exact=True).dblclick()
        else:
            raise ValueError(f"via must be 'url' or 'browser', not {via!r}")
        self._settle(name, timeout)
        return self.notebook

    def _settle(self, name: str, timeout: float | None = None) -> None:
        """Wait until ``name``'s tab is current, its panel has cells and the status bar says Idle, for 0.5 s in a
        row. The layout restorer may switch tabs after the router opened ours (seen: the workspace's last tab
        became current ~0.7 s after load), so a tab that is not current is clicked."""
        tab_name = Path(name).name
        deadline = time.monotonic() + (self.timeout_ms / 1000 if timeout is None else timeout)
        stable_since: float | None = None
        last_click = 0.0
        state: dict[str, Any] = {}
        while True:
            state = self.page.evaluate(_SETTLE_JS, tab_name)
            now = time.monotonic()
            if state["current"] and state["cells"] and state["idle"]:
                stable_since = stable_since or now
                if now - stable_since >= 0.5:
                    break
            else:
                stable_since = None
                if state["tab"] and not state["current"] and not state["splash"] and now - last_click > 1.0:
                    self.page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=tab_name).first.click()
                    last_click = now
            if now > deadline:
                raise LabError(f"notebook {name!r} did not become current and idle: {state}\n{self.log_tail()}")
            time.sleep(0.05)
        self._panel_id = state["panel"]
        self.current = name

    def trust_notebook(self) -> None:
        """Trust the current notebook in this page, as a person does with "Trust Notebook" and its dialog.

        Under collaboration, outputs that another page's run put in the shared document arrive untrusted in this
        one, so a widget among them is drawn as its text repr (a prompt's buttons too) until the person trusts
        the notebook in their own page.
        """
        if not self.expose_app:
            raise LabError("trust_notebook() needs expose_app=True (it runs JupyterLab's notebook:trust command)")
        self.page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:trust'); }")
        dialog = self.page.locator(".jp-Dialog")
        dialog.locator(".jp-mod-accept").click()
        dialog.wait_for(state="detached")

    def reload(self, *, wait_idle: bool = True) -> None:
        """Reload the page; the (isolated) workspace reopens the notebook.

        With ``wait_idle`` (default) and a notebook opened before, waits as :meth:`open_notebook` does.
        """
        self.page.reload()
        self.page.locator("#jp-main-dock-panel").wait_for()
        self._panel_id = None
        if self.current is not None and wait_idle:
            self._settle(self.current)

    def screenshot(self, path: str | os.PathLike[str], *, full_page: bool = True) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(p), full_page=full_page)
        return p

    # ------------------------------------------------------------------ cells
    def cells(self) -> Any:
        """Locator of all cells in the visible notebook."""
        return self.notebook.locator(".jp-Notebook-cell")

    def cell(self, index_or_text: int | str) -> Any:
        """Locator of one cell: by index, or the first cell whose *source* contains the text."""
        if isinstance(index_or_text, int):
            return self.cells().nth(index_or_text)
        return self.cells().filter(has=self.page.locator(".jp-InputArea", has_text=index_or_text)).first

    def prompt(self, index_or_text: int | str) -> str:
        """The input prompt text without the colon, e.g. ``"[ ]"``, ``"[*]"``, ``"[3]"``.

        The cell is scrolled into view first, and an empty prompt read again for up to two seconds: JupyterLab
        draws cells far from the viewport lazily, and redraws a prompt as a run ends, so for a moment it can read
        as nothing at all."""
        prompt = self.cell(index_or_text).locator(".jp-InputPrompt")
        prompt.scroll_into_view_if_needed()
        deadline = time.monotonic() + 2.0
        text = prompt.inner_text().strip()
        while not text and time.monotonic() < deadline:
            time.sleep(0.05)
            text = prompt.inner_text().strip()
        return text.rstrip(":")

    def run_cell(self, index_or_text: int | str, *, key: str = "Shift+Enter", timeout: float = 10.0) -> None:
        """Select the cell (click its prompt: command mode), press ``key`` and confirm that execution started.

        Execution has started when the prompt changed at least once after the key press (to ``[*]``, or straight to
        a new number) and now reads ``[*]`` or ``[n]``. A key press lost before the kernel connects raises.
        Note: Shift+Enter on the last cell appends an empty cell (JupyterLab behaviour); use ``key="Control+Enter"``
        to run in place.
        """
        prompt = self.cell(index_or_text).locator(".jp-InputPrompt")
        prompt.scroll_into_view_if_needed()
        prompt.click()
        prompt.evaluate(
            """el => {
                el.__ocnbChanged = false;
                if (el.__ocnbObserver) el.__ocnbObserver.disconnect();
                el.__ocnbObserver = new MutationObserver(() => { el.__ocnbChanged = true; });
                el.__ocnbObserver.observe(el, {childList: true, characterData: true, subtree: true});
            }"""
        )
        self.page.keyboard.press(key)
        deadline = time.monotonic() + timeout
        while True:
            changed = prompt.evaluate("el => el.__ocnbChanged === true")
            text = prompt.inner_text().strip()
            if changed and _STARTED_PROMPT_RE.match(text):
                break
            if time.monotonic() > deadline:
                raise LabError(f"cell {index_or_text!r} did not start (prompt {text!r}, changed={changed})")
            time.sleep(0.05)
        prompt.evaluate("el => { el.__ocnbObserver && el.__ocnbObserver.disconnect(); el.__ocnbObserver = null; }")

    def wait_cell_done(self, index_or_text: int | str, timeout: float = 30.0) -> str:
        """Wait until the prompt shows an execution count ``[n]``; returns it (``"[n]"``)."""
        from playwright.sync_api import expect

        prompt = self.cell(index_or_text).locator(".jp-InputPrompt")
        expect(prompt).to_have_text(_DONE_PROMPT_RE, timeout=timeout * 1000)
        return prompt.inner_text().strip().rstrip(":")

    def wait_output(self, index_or_text: int | str, text: str | re.Pattern[str], timeout: float = 30.0) -> None:
        """Wait until the cell's output area contains ``text``."""
        from playwright.sync_api import expect

        out = self.cell(index_or_text).locator(".jp-Cell-outputWrapper")
        expect(out).to_contain_text(text, timeout=timeout * 1000)

    def output_text(self, index_or_text: int | str) -> str:
        """All visible text of the cell's outputs (``.jp-Cell-outputWrapper``; widgets' own output areas included)."""
        out = self.cell(index_or_text).locator(".jp-Cell-outputWrapper")
        return out.inner_text() if out.count() else ""

    def is_dirty(self) -> bool:
        """True while the notebook's tab (the current tab if none was opened) shows unsaved changes."""
        sel = f'[data-id="{self._panel_id}"]' if self._panel_id else ".lm-mod-current"
        tab = self.page.locator(f".lm-DockPanel-tabBar .lm-TabBar-tab{sel}")
        return "jp-mod-dirty" in (tab.get_attribute("class") or "")

    def save(self, timeout: float = 15.0) -> dict[str, Any]:
        """Ctrl+S the current notebook, wait until the tab is no longer dirty and the file on disk changed.

        Returns the saved notebook (contents API).
        """
        if self.current is None:
            raise LabError("no notebook opened through open_notebook()")
        before = self.api("GET", f"/api/contents/{urllib.parse.quote(self.current)}?content=0")["last_modified"]
        self.notebook.locator(".jp-Notebook").first.focus()
        self.page.keyboard.press("Control+s")
        deadline = time.monotonic() + timeout
        while True:
            model = self.api("GET", f"/api/contents/{urllib.parse.quote(self.current)}?content=0")
            if model["last_modified"] != before and not self.is_dirty():
                return self.read_notebook(self.current)
            if time.monotonic() > deadline:
                raise LabError(f"save of {self.current} not confirmed within {timeout}s (dirty={self.is_dirty()})")
            time.sleep(0.1)
