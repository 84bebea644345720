"""The sandboxed python of an explorer holds as an OS boundary, tried by effect in a real kernel.

The model's code is the attacker: it knows the kernel's PID, its ports, its signing key and the addresses of
the person's buffers (the test hands it all of them, as a fork has them in memory), and each test looks for
the effect outside the sandbox afterwards: a variable in the person's namespace, a byte in their memory, a
file, a connection accepted, a signal received, a line in the notebook, a process left running.

Each attack runs on every path a sandboxed call can take: a fork confined by namespaces, a fork confined by
Landlock alone (what a machine without user namespaces gets), and the spawned worker under bubblewrap. The
same attacks against `sandbox: off` (Python-level isolation only) must succeed: that is what shows each
test can see the effect it looks for. After every attack the kernel answers `1 + 1` within 100 ms.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from opencode_nb.sandbox.policy import BWRAP_ENV, Backend, find_backend

from ...sandbox.forked import landlock_version, user_namespaces_work
from ..frontend import FakeFrontend
from ..processes import running

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(os.uname().sysname != "Linux", reason="Linux confinement")]

FAKE_KEY = "sk-ant-confinement-0123456789abcdef"
PATHS = ["fork-namespaces", "fork-landlock", "worker", "unconfined"]
SETUP = """
import os, numpy as np
from multiprocessing import shared_memory
from opencode_nb.provider.scripted import Scripted
from opencode_nb.provider.builtin.history import last_turn
import opencode_nb.kernel as _k
ATTACKS = {}
def _respond(request):
    texts, results = last_turn(request)
    code = ATTACKS.get(texts[-1].strip()) if texts else None
    if code is None or results:
        return {"text": "done"}
    return {"tool_calls": [{"name": "python", "input": {"code": code, "timeout": 20}}]}
_bridge = _k.current().workspace().kernel
_k.current().workspace().providers.register("scripted", Scripted(respond=_respond))
"""


class Lab:
    """One kernel on one sandbox path, and the attacks run through its agent."""

    def __init__(self, fe: FakeFrontend, path: str, root: Path) -> None:
        self.fe = fe
        self.path = path
        self.root = root
        self.pid = int(fe.text(fe.run_id("print(os.getpid())")).strip())
        self.count = 0

    @property
    def confined(self) -> bool:
        return self.path != "unconfined"

    def value(self, expression: str) -> Any:
        return json.loads(self.fe.text(self.fe.run_id(f"import json as _j\nprint(_j.dumps({expression}))")))

    def attack(self, code: str) -> str:
        """Run `code` as the model's sandboxed python; returns what the tool answered."""
        self.count += 1
        name = f"attack-{self.count}"
        self.fe.run(f"ATTACKS[{name!r}] = {code!r}")
        reply = self.fe.run(f"%agent {name}", timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        return self.value("[p.state.output if p.state.status == 'completed' else p.state.error "
                          "for s in _k.current().workspace().sessions.list() "
                          "for m in _k.current().workspace().sessions.messages(s.id) for p in m.parts "
                          "if p.type == 'tool'][-1]")

    def answers_quickly(self) -> None:
        """The kernel answers a cell within 100 ms (the best of three, on a shared machine)."""
        times = []
        for _ in range(3):
            started = time.perf_counter()
            assert self.fe.run("1 + 1")["content"]["status"] == "ok"
            times.append(time.perf_counter() - started)
        assert min(times) < 0.1, times


def missing(path: str) -> str | None:
    """What this machine lacks for a path, said as the reason to skip it."""
    if path == "fork-namespaces" and not user_namespaces_work():
        return "no user namespaces on this machine"
    if path == "fork-landlock" and landlock_version() < 6:
        return f"Landlock ABI {landlock_version()} here: signals need 6"
    if path == "worker" and not isinstance(find_backend(os.environ.get(BWRAP_ENV)), Backend):
        return "no working bubblewrap on this machine"
    return None


@pytest.fixture(scope="module", params=PATHS)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if (reason := missing(request.param)) is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp(request.param)
    project = root / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config: dict[str, Any] = {"model": "scripted/test", "provider": {"scripted": {"script": []}},
                              "agent": {"build": {"permission": {"python": {"live": "deny", "sandbox": "allow"}}}}}
    if request.param == "unconfined":
        config["sandbox"] = "off"
    (project / "opencode.yaml").write_text(yaml.safe_dump(config))
    (project / "data.csv").write_text("x\n1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME",
                                                                                                   "CI")}
    env.update({"OPENCODE_NB_DATA_DIR": str(root / "data"), "XDG_CONFIG_HOME": str(root / "xdg"),
                "OPENCODE_NB_HEADLESS": "1", "ANTHROPIC_API_KEY": FAKE_KEY})
    fe = FakeFrontend(str(project), env, render_views=False)
    try:
        assert fe.run("%load_ext opencode_nb")["content"]["status"] == "ok"
        assert fe.run(SETUP)["content"]["status"] == "ok"
        if request.param == "fork-landlock":
            fe.run("_bridge.confine_with = ('landlock',)")
        elif request.param == "worker":
            fe.run("_bridge.use_fork = False")
        yield Lab(fe, request.param, root)
    finally:
        fe.close()


def held(lab: Lab, breached: bool, *, python_level: bool = False) -> None:
    """The attack's effect happened exactly where nothing but Python stood in its way (unless even Python-level
    isolation stops it: `python_level`)."""
    expected = not lab.confined and not python_level
    assert breached is expected, f"{lab.path}: the effect {'happened' if breached else 'did not happen'}"
    lab.answers_quickly()


# ---------------------------------------------------------------------------------------------- the namespace


def test_a_signed_execute_request_to_the_kernels_shell_port_binds_nothing(lab: Lab):
    info = lab.fe.km.get_connection_info(session=False)
    info = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in info.items()}
    lab.attack(
        "from jupyter_client import BlockingKernelClient\nimport time\n"
        f"c = BlockingKernelClient()\nc.load_connection_info({info!r})\nc.start_channels()\n"
        "c.execute('INJECTED = 1')\ntime.sleep(2)\nc.stop_channels()")
    held(lab, lab.value("'INJECTED' in globals()"))


def test_a_write_to_the_kernels_memory_through_proc_leaves_the_persons_array_alone(lab: Lab):
    lab.fe.run("arr = np.zeros(4)\nADDR = int(arr.ctypes.data)")
    address = lab.value("ADDR")
    lab.attack(f"f = open('/proc/{lab.pid}/mem', 'r+b', buffering=0)\nf.seek({address})\nf.write(b'\\xff' * 8)")
    held(lab, lab.value("bool(arr[0] != 0)"))


def test_ptrace_cannot_attach_to_the_kernel(lab: Lab):
    output = lab.attack(f"import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                        f"if libc.ptrace(16, {lab.pid}, 0, 0) == 0:\n    print('ATT' + 'ACHED')\n"
                        f"    time.sleep(0.2)\n    libc.ptrace(17, {lab.pid}, 0, 0)\n"  # PTRACE_ATTACH, DETACH
                        "else:\n    print('refused', os.strerror(ctypes.get_errno()))")
    if "T" in Path(f"/proc/{lab.pid}/stat").read_text().split(")")[-1].split()[0]:
        os.kill(lab.pid, signal.SIGCONT)
    held(lab, "ATTACHED" in output)


def test_the_persons_shared_mappings_cannot_be_written_through_what_the_sandbox_inherits(lab: Lab):
    data = lab.root / f"mm-{lab.count}.dat"
    lab.fe.run(f"import mmap\nanon = mmap.mmap(-1, 64)\n"
               f"mm = np.memmap({str(data)!r}, dtype='uint8', mode='w+', shape=(64,))\nmm.flush()")
    lab.attack("anon[0] = 255\nmm[0] = 255\nmm.flush()")
    breached = lab.value("[anon[0], int(mm[0])]") != [0, 0] or data.read_bytes()[0] != 0
    held(lab, breached, python_level=True)  # a fork's shared mappings are made private whatever confines it


def test_shared_memory_blocks_cannot_be_written_whether_inherited_or_opened_again_by_name(lab: Lab):
    if lab.confined and (reason := missing("worker")):
        pytest.skip(f"{reason}: code that uses multiprocessing is never forked, it runs in the spawned worker")
    lab.fe.run("shm = shared_memory.SharedMemory(create=True, size=64)\nSHM = shm.name")
    name = lab.value("SHM")
    lab.attack(f"from multiprocessing import shared_memory\ntry:\n    shm.buf[0] = 255\nexcept Exception as e:\n"
               f"    print(e)\nother = shared_memory.SharedMemory(name={name!r})\nother.buf[1] = 255")
    breached = lab.value("[shm.buf[0], shm.buf[1]]") != [0, 0]
    lab.fe.run("shm.close(); shm.unlink()")
    held(lab, breached)


# ---------------------------------------------------------------------------------------------- files


def test_files_in_the_project_outside_it_and_the_session_store_stay_as_they_were(lab: Lab):
    project = lab.root / "project"
    outside = lab.root / f"outside-{lab.count}.txt"
    stores = sorted((lab.root / "data").rglob("*.sqlite"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in [project / "data.csv"]}
    sessions = lab.value("len(_k.current().workspace().sessions.list())")
    lab.attack(
        "import subprocess, glob\n"
        f"for path, text in (({str(project / 'data.csv')!r}, 'x\\n666\\n'), ({str(outside)!r}, 'x'), "
        f"({str(project / 'new.py')!r}, 'x')):\n"
        "    try:\n        open(path, 'w').write(text)\n    except OSError as e:\n        print(e)\n"
        f"for store in {[str(s) for s in stores]!r}:\n"
        "    print(subprocess.run(['sqlite3', store, 'delete from session'], capture_output=True, text=True))")
    changed = ({p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before} != before or outside.exists()
               or (project / "new.py").exists())
    deleted = lab.value("len(_k.current().workspace().sessions.list())") < sessions
    (project / "data.csv").write_text("x\n1\n")
    (project / "new.py").unlink(missing_ok=True)
    held(lab, changed or deleted)


def test_the_scratch_folder_is_writable_and_gone_after_the_call(lab: Lab):
    output = lab.attack("import tempfile, os\npath = os.path.join(tempfile.gettempdir(), 'notes.txt')\n"
                        "open(path, 'w').write('kept for this call')\nprint(path, open(path).read())")
    path = output.split("Output:\n", 1)[1].split()[0]
    assert "kept for this call" in output and not Path(path).exists()
    lab.answers_quickly()


# ---------------------------------------------------------------------------------------------- processes


@pytest.mark.parametrize("sig", ["SIGSTOP", "SIGINT", "SIGKILL"])
def test_signals_to_the_kernel_never_arrive(lab: Lab, sig: str):
    if not lab.confined:
        pytest.skip("unconfined, the signal would stop or kill the shared kernel: the effect is certain")
    output = lab.attack(f"import os, signal\nos.kill({lab.pid}, signal.{sig})")
    state = Path(f"/proc/{lab.pid}/stat").read_text().split(")")[-1].split()[0]
    assert state != "T" and lab.fe.km.is_alive()
    assert "Error" in output  # ESRCH (no such process in its namespace) or EPERM (Landlock's scope)
    held(lab, False)


def test_nothing_the_code_starts_outlives_the_call(lab: Lab):
    marker = f"{os.getpid()}{lab.count}.{int(time.time()) % 1000}"
    lab.attack("import os, subprocess\n"
               f"subprocess.Popen(['setsid', 'sleep', '{marker}1'])\n"
               f"subprocess.Popen(['sleep', '{marker}2'], start_new_session=True)\n"
               "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
               f"        os.execvp('sleep', ['sleep', '{marker}3'])\n    os._exit(0)\n"
               "import time\ntime.sleep(0.3)\nprint('started')")
    time.sleep(0.3)
    left = running(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    held(lab, bool(left), python_level=True)  # whatever confines it, the supervisor kills the whole tree


def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind(lab: Lab):
    marker = f"{os.getpid()}{lab.count}.{int(time.time()) % 1000 + 5000}"
    output = lab.attack("import os, time\nfor _ in range(1000):\n    if os.fork() == 0:\n"
                        f"        os.execvp('sleep', ['sleep', '{marker}'])\ntime.sleep(30)")
    time.sleep(0.3)
    left = running(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert "more than 256 processes" in output
    held(lab, bool(left), python_level=True)


def test_a_process_holding_the_result_pipe_does_not_turn_a_finished_run_into_a_timeout(lab: Lab):
    started = time.monotonic()
    output = lab.attack("import os, stat, subprocess\n"
                        "pipes = [fd for fd in map(int, os.listdir('/proc/self/fd'))\n"
                        "         if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode)]\n"
                        "subprocess.Popen(['sleep', '60'], pass_fds=pipes, start_new_session=True)\nprint('done')")
    assert "TimeoutError" not in output and time.monotonic() - started < 15
    lab.answers_quickly()


def test_a_forged_huge_frame_on_the_result_pipe_is_refused_unread(lab: Lab):
    rss = lab.value("int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])")
    output = lab.attack("import os, stat, struct\n"
                        "for fd in map(int, os.listdir('/proc/self/fd')):\n"
                        "    try:\n        mode = os.fstat(fd).st_mode\n    except OSError:\n        continue\n"
                        "    if fd > 2 and stat.S_ISFIFO(mode):\n"
                        "        os.write(fd, struct.pack('>cI', b'r', 2**30 - 1))\n"
                        "        for _ in range(64):\n            os.write(fd, b'x' * 2**20)\n")
    grown = lab.value("int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])") - rss
    assert grown < 200 * 1024, f"the kernel grew by {grown} kB"
    assert "past the 64 MB limit" in output
    lab.answers_quickly()


# ---------------------------------------------------------------------------------------------- the network


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """A loopback TCP server and a Unix-socket server that note every connection they accept."""
    accepted: list[str] = []
    tcp = socket.create_server(("127.0.0.1", 0))
    path = str(tmp_path / "s.sock")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(path)
    unix.listen()
    stop = threading.Event()

    def serve(server: socket.socket, kind: str) -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            accepted.append(kind)
            connection.close()

    threads = [threading.Thread(target=serve, args=(s, k), daemon=True) for s, k in ((tcp, "tcp"), (unix, "unix"))]
    for thread in threads:
        thread.start()
    yield tcp.getsockname()[1], path, accepted
    stop.set()
    for thread in threads:
        thread.join()
    tcp.close()
    unix.close()


def test_no_loopback_tcp_and_no_unix_socket_is_reachable(lab: Lab, listeners: tuple[int, str, list[str]]):
    port, path, accepted = listeners
    lab.attack(f"import socket\nfor family, address in ((socket.AF_INET, ('127.0.0.1', {port})), "
               f"(socket.AF_UNIX, {path!r})):\n"
               "    try:\n        s = socket.socket(family)\n        s.settimeout(2)\n        s.connect(address)\n"
               "    except OSError as e:\n        print(family, e)")
    time.sleep(0.3)
    assert set(accepted) in (set(), {"tcp", "unix"})
    held(lab, bool(accepted))


# ---------------------------------------------------------------------------------------------- the notebook


def test_raw_output_through_the_kernels_descriptors_and_ipykernels_pipe_never_reaches_the_notebook(lab: Lab):
    port, uuid = lab.value("[_k.current().shell.kernel.iopub_thread._pipe_port, "
                           "_k.current().shell.kernel.iopub_thread._pipe_uuid.hex()]")
    key = lab.fe.km.session.key.decode()
    lab.attack(
        "import time\n"
        f"for fd in (1, 2):\n    try:\n        open('/proc/{lab.pid}/fd/%d' % fd, 'w').write('RAW' + '-LEAK')\n"
        "    except OSError as e:\n        print(e)\n"
        "import zmq\nfrom jupyter_client.session import Session\n"
        f"s = Session(key={key!r}.encode())\n"
        "msg = s.msg('display_data', {'data': {'text/html': '<b>' + 'HTML' + '-LEAK</b>'}, 'metadata': {}})\n"
        "push = zmq.Context().socket(zmq.PUSH)\npush.linger = 1000\n"
        f"push.connect('tcp://127.0.0.1:{port}')\n"
        f"push.send_multipart([bytes.fromhex({uuid!r}), b'display_data', *s.serialize(msg)])\n"
        "time.sleep(1)\npush.close()")
    time.sleep(0.5)
    with lab.fe._lock:
        seen = json.dumps([m["content"] for m in lab.fe.iopub], default=str)
    held(lab, "RAW-LEAK" in seen or "HTML-LEAK" in seen)


# ---------------------------------------------------------------------------------------------- secrets


def test_the_code_finds_no_secret_in_its_environment_and_what_it_digs_out_of_memory_is_redacted(lab: Lab):
    output = lab.attack("import os\nprint('in environ:', 'ANTHROPIC_API_KEY' in os.environ)\n"
                        "started = dict(v.split('=', 1) for v in open('/proc/self/environ').read().split('\\0')"
                        " if '=' in v)\nkey = started.get('ANTHROPIC_API_KEY', 'none')\n"
                        "print(key[::-1], key.encode().hex(), ' '.join(key))")
    assert "in environ: False" in output
    assert FAKE_KEY not in output and FAKE_KEY[::-1] not in output and FAKE_KEY.encode().hex() not in output
    assert " ".join(FAKE_KEY) not in output
    lab.answers_quickly()


# ---------------------------------------------------------------------------------------------- saying so


def test_the_result_and_the_card_say_which_confinement_applied(lab: Lab):
    output = lab.attack("1 + 1")
    run = lab.value("[p.state.metadata['run'].get('confinement') for s in _k.current().workspace().sessions.list()"
                    " for m in _k.current().workspace().sessions.messages(s.id) for p in m.parts "
                    "if p.type == 'tool'][-1]")
    expected = {"fork-namespaces": "confined by the OS (namespaces + seccomp)",
                "fork-landlock": "confined by the OS (Landlock + seccomp",
                "worker": "confined by the OS (namespaces + seccomp)",
                "unconfined": "isolated at the Python level only"}[lab.path]
    assert run.startswith(expected) and expected in output
    lab.answers_quickly()




# ---------------------------------------------------------------------------------------------- the setting


SANDBOXED = {"agent": {"build": {"permission": {"python": {"live": "deny", "sandbox": "allow"}}}}}


def tool_result(fe: FakeFrontend) -> str:
    msg = fe.run_id("import opencode_nb.kernel as k\nws = k.current().workspace()\n"
                    "print([p.state.output if p.state.status == 'completed' else p.state.error "
                    "for s in ws.sessions.list() for m in ws.sessions.messages(s.id) for p in m.parts "
                    "if p.type == 'tool'][-1])")
    return fe.text(msg)


@pytest.mark.parametrize("path", ["fork", "worker"])
@pytest.mark.parametrize(("setting", "ran"), [("required", False), ("auto", True)])
def test_required_refuses_to_run_where_nothing_can_confine_the_code_and_auto_runs_it_saying_so(
        kernel, tmp_path, path, setting, ran):
    target = tmp_path / "written.txt"
    script = [{"tool_calls": [{"name": "python", "input": {"code": f"open({str(target)!r}, 'w').write('x')"}}]},
              {"text": "done"}]
    fe = kernel(script, render_views=False, env={"OPENCODE_NB_HEADLESS": "1",
                                                 "OPENCODE_NB_BWRAP": str(tmp_path / "no-bwrap")},
                extra={**SANDBOXED, "sandbox": setting})
    fe.run("import opencode_nb.kernel as k\nbridge = k.current().workspace().kernel\nbridge.confine_with = ()\n"
           f"bridge.use_fork = {path == 'fork'}")
    assert fe.run("%agent write it", timeout=90)["content"]["status"] == "ok"
    said = tool_result(fe)
    assert target.exists() is ran, said
    if ran:
        assert "isolated at the Python level only" in said and "nothing but this tool's rules" in said
    else:
        assert "not run" in said and "sandbox: required" in said
