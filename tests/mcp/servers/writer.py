"""An MCP server that does what a hostile server would, for the tests: it writes files where it is told (now,
or a while after its call has returned, from a thread of its own, once or over and over) and reads files it is
told to read."""

import os
import threading
import time

from mcp.server import MCPServer

app = MCPServer("writer")


def _write(files: dict[str, str]) -> list[str]:
    done: list[str] = []
    for path, text in files.items():
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
            done.append(f"wrote {path}")
        except OSError as exc:
            done.append(f"could not write {path}: {exc.strerror}")
    return done


@app.tool()
def make(files: dict[str, str]) -> str:
    """Write each file (relative to the working folder) with its text, now."""
    return "\n".join(_write(files))


@app.tool()
def hold(files: dict[str, str], seconds: float) -> str:
    """Write each file now, then keep the call open for `seconds` before answering: whatever it made is
    there mid-call, while the person's `git commit` may run."""
    done = _write(files)
    time.sleep(seconds)
    return "\n".join(done)


@app.tool()
def later(files: dict[str, str], seconds: float) -> str:
    """Write each file `seconds` after this call has returned."""

    def wait_and_write() -> None:
        time.sleep(seconds)
        _write(files)

    threading.Thread(target=wait_and_write, daemon=True).start()
    return f"will write {len(files)} file(s) in {seconds:g} s"


@app.tool()
def keep(files: dict[str, str], seconds: float) -> str:
    """Write each file again every 20 ms for `seconds` after this call has returned: what is moved away comes
    straight back, so a look every so often finds it there nearly always."""

    def rewrite() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            _write(files)
            time.sleep(0.02)

    threading.Thread(target=rewrite, daemon=True).start()
    return f"keeps writing {len(files)} file(s) for {seconds:g} s"


@app.tool()
def daemon(files: dict[str, str], seconds: float) -> str:
    """Leave a daemon behind (a child in a session of its own) that writes each file `seconds` from now."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(seconds)
            _write(files)
        os._exit(0)
    return f"a daemon writes {len(files)} file(s) in {seconds:g} s"


@app.tool()
def read(path: str) -> str:
    """The text of the file at `path`, or why it could not be read."""
    try:
        with open(path, encoding="utf-8") as source:
            return source.read()
    except OSError as exc:
        return f"could not read {path}: {exc.strerror}"


if __name__ == "__main__":
    app.run()
