"""`approvals: auto | owner | anyone`: read as written, and a wrong value said at its file and line."""

import pytest

from opencode_nb.config import ConfigError


def test_approvals_are_auto_unless_set(project):
    project.write("repo/opencode.yaml", "model: scripted/demo\n")
    assert project.load().config.approvals == "auto"
    project.write("repo/opencode.yaml", "approvals: owner\n")
    assert project.load().config.approvals == "owner"


def test_a_mistyped_approvals_names_the_file_the_line_and_the_value_meant(project):
    path = project.write("repo/opencode.yaml", "model: scripted/demo\napprovals: ownr\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == f"{path}:2 approvals: 'ownr' is not one of auto, owner, anyone (did you mean owner?)"
