"""How the data dirs are hidden, as command lines (the effect, in real bubblewrap, is tried in
tests/safety/test_store_in_project.py)."""

from __future__ import annotations

from pathlib import Path

from opencode_nb.sandbox import bwrap, private, seatbelt


def test_a_registered_data_dir_is_hidden_until_its_workspace_forgets_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    forget = private.register(data)
    assert data.resolve() in private.folders()
    forget()
    forget()  # a second call does nothing (another registration of the same folder would survive it)
    assert data.resolve() not in private.folders()


def test_only_the_mounts_inside_the_data_dir_come_back_in_order(tmp_path):
    data = tmp_path / "data"
    mounts = ["--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr", "--bind", str(tmp_path), str(tmp_path),
              "--bind", str(data / "tool-output"), str(data / "tool-output"),
              "--ro-bind-try", str(data / "proj" / "AGENTS.md"), str(data / "proj" / "AGENTS.md"),
              "--bind", str(data), str(data)]
    assert bwrap.out_of_sight(data, mounts) == [
        "--tmpfs", str(data), "--bind", str(data / "tool-output"), str(data / "tool-output"),
        "--ro-bind-try", str(data / "proj" / "AGENTS.md"), str(data / "proj" / "AGENTS.md")]


def test_the_mask_comes_after_the_project_that_holds_it(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    data = project / "data"
    (data / "tool-output").mkdir(parents=True)
    monkeypatch.setattr(private, "folders", lambda: [data])
    args = bwrap.bwrap_args("bwrap", writable=[project, data / "tool-output"], network=False, cwd=project)
    mask = args.index(str(data), args.index("--tmpfs", args.index(str(project))))
    assert args[mask - 1] == "--tmpfs" and args.index(str(project)) < mask
    assert args[mask + 1:mask + 4] == ["--bind", str(data / "tool-output"), str(data / "tool-output")]


def test_seatbelt_denies_the_data_dir_after_allowing_the_project_and_allows_its_own_folders_again(tmp_path,
                                                                                                monkeypatch):
    project = tmp_path / "proj"
    data = project / "data"
    (data / "tool-output").mkdir(parents=True)
    monkeypatch.setattr(private, "folders", lambda: [data.resolve()])
    args = seatbelt.sandbox_exec_args("/usr/bin/sandbox-exec", writable=[project, data / "tool-output"],
                                      network=False)
    text = args[2]
    assert f"PRIVATE_0={data.resolve()}" in args
    denied = text.index('(deny file-read* file-write*\n    (subpath (param "PRIVATE_0"))')
    assert text.index('(subpath (param "WRITABLE_0"))') < denied
    assert text.index('(allow file-read* file-write*\n    (subpath (param "WRITABLE_1"))') > denied
    assert Path(args[args.index("-D") + 1].split("=", 1)[1]) == project.resolve()
