"""The guard's record: what is in force after the files changed, depending on whether agents ran meanwhile."""

from __future__ import annotations

import json
import socket
import stat

import pytest

from opencode_nb.config.guard import settle_config
from opencode_nb.errors import OpencodeNbError


def settle(project, **options):
    return settle_config(project.cwd, None, env=project.env(), data_dir=project.base / "data", **options)


def during_a_run(project, write) -> None:
    guard = settle(project).guard
    with guard.running("ses_agent"):
        write()


def test_the_first_reading_applies_the_files_and_keeps_them_where_only_the_person_can_read(project):
    project.write("repo/opencode.yaml", "sandbox: off\n")
    decision = settle(project)
    assert decision.held is None and decision.loaded.config.sandbox == "off"
    assert stat.S_IMODE(decision.guard.path.stat().st_mode) == 0o600
    assert project.repo not in decision.guard.path.parents


def test_a_change_made_while_no_agent_ran_applies(project):
    project.write("repo/opencode.yaml", "sandbox: required\n")
    settle(project)
    project.write("repo/opencode.yaml", "sandbox: off\n")
    assert settle(project).loaded.config.sandbox == "off"


def test_a_new_config_file_written_during_a_run_is_left_out_until_accepted(project):
    project.write("repo/opencode.yaml", "sandbox: required\npermission: {bash: ask}\n")
    during_a_run(project, lambda: project.write("repo/.opencode/opencode.yaml",
                                                "sandbox: off\npermission: {'*': allow}\n"))
    decision = settle(project)
    assert decision.loaded.config.sandbox == "required" and decision.loaded.config.permission == {"bash": "ask"}
    assert decision.held is not None and decision.held.sessions == ["ses_agent"]
    assert {item.where.split(":")[0] for item in decision.held.loosenings} == {
        str(project.repo / ".opencode" / "opencode.yaml")}
    assert not decision.loaded.changed(), "the disk as it is was seen: not read again at every cell"

    decision.guard.accept(decision.held.digest)
    assert settle(project).loaded.config.sandbox == "off"


def test_a_config_file_removed_during_a_run_is_still_read_from_what_was_kept(project):
    project.write("repo/opencode.yaml", "permission: {bash: deny}\n")
    during_a_run(project, lambda: (project.repo / "opencode.yaml").unlink())
    decision = settle(project)
    assert decision.held is not None and decision.loaded.config.permission == {"bash": "deny"}


def test_a_tightening_during_a_run_applies_and_becomes_what_later_changes_are_judged_against(project):
    project.write("repo/opencode.yaml", "sandbox: off\n")
    during_a_run(project, lambda: project.write("repo/opencode.yaml", "sandbox: required\n"))
    assert settle(project).held is None
    during_a_run(project, lambda: project.write("repo/opencode.yaml", "sandbox: auto\n"))
    decision = settle(project)
    assert decision.held is not None and decision.loaded.config.sandbox == "required"


def test_accepting_refuses_files_that_changed_again_after_they_were_shown(project):
    project.write("repo/opencode.yaml", "sandbox: required\n")
    during_a_run(project, lambda: project.write("repo/opencode.yaml", "sandbox: auto\n"))
    decision = settle(project)
    project.write("repo/opencode.yaml", "sandbox: off\n")
    with pytest.raises(OpencodeNbError, match="changed again"):
        decision.guard.accept(decision.held.digest)
    assert settle(project).loaded.config.sandbox == "required"


def test_keeping_marks_the_change_as_answered_until_the_files_change_again(project):
    project.write("repo/opencode.yaml", "sandbox: required\n")
    during_a_run(project, lambda: project.write("repo/opencode.yaml", "sandbox: auto\n"))
    first = settle(project)
    first.guard.keep(first.held.digest)
    again = settle(project)
    assert again.held.kept and again.loaded.config.sandbox == "required"
    project.write("repo/opencode.yaml", "sandbox: off\n")
    assert not settle(project).held.kept


def test_a_damaged_record_starts_again_from_the_files_as_they_are(project):
    project.write("repo/opencode.yaml", "sandbox: required\n")
    guard = settle(project).guard
    guard.path.write_text("{not json")
    assert settle(project).held is None


def test_a_run_whose_process_died_leaves_a_later_change_unconfirmed(project):
    project.write("repo/opencode.yaml", "sandbox: required\n")
    settle(project)
    path = next((project.base / "data" / "config-guard").glob("*.json"))
    data = json.loads(path.read_text())
    data["runs"]["gone"] = {"pid": 2**22 + 7, "host": socket.gethostname(), "session": "ses_gone",
                            "started": 0, "files": "0" * 64}
    path.write_text(json.dumps(data))
    project.write("repo/opencode.yaml", "sandbox: off\n")
    decision = settle(project)
    assert decision.held is not None and decision.held.sessions == ["ses_gone"]
