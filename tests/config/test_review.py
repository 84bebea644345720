"""`review: cells | off`, globally and per agent: read as written (a bare YAML `off` included), and a wrong
value is said at its file and line with the value likely meant."""

import pytest

from opencode_nb.config import ConfigError


def test_review_is_off_unless_set_and_an_agent_may_set_its_own(project):
    project.write("repo/opencode.yaml", "agent:\n  build:\n    review: cells\n")
    config = project.load().config
    assert config.review == "off" and config.agent["build"].review == "cells"


def test_a_bare_off_is_off_not_false(project):
    project.write("repo/opencode.yaml", "review: off\nagent:\n  plan:\n    review: off\n")
    config = project.load().config
    assert config.review == "off" and config.agent["plan"].review == "off"


def test_a_mistyped_mode_names_the_file_the_line_and_the_mode_meant(project):
    path = project.write("repo/opencode.yaml", "model: scripted/demo\nreview: cell\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == f"{path}:2 review: 'cell' is not one of cells, off (did you mean cells?)"


def test_yes_is_no_review_mode(project):
    path = project.write("repo/.opencode/agent/checker.md", "---\nreview: yes\n---\nCheck.\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value) == (f"{path}:2 agent.checker.review: on/yes/true is not a review mode: write cells "
                              "(review each cell change) or off")
