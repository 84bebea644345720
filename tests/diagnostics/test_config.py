"""`diagnostics:` and `formatter:` as written in opencode.yaml: the defaults (ruff on, no formatter), the
switches, and mistakes said at their file and line."""

from __future__ import annotations

import pytest

from opencode_nb.config import ConfigError
from tests.config.conftest import Project


@pytest.fixture
def config_project(tmp_path) -> Project:
    return Project(tmp_path / "cfg")


def test_by_default_ruff_checks_and_nothing_formats(config_project):
    config = config_project.load().config
    assert (config.diagnostics.enabled, config.diagnostics.python, config.formatter) == (True, ["ruff"], {})


def test_opencode_s_formatter_shape_is_read_as_written(config_project):
    config_project.write("repo/opencode.yaml", 'formatter:\n  ruff:\n    command: [ruff, format, "$FILE"]\n'
                                               "    extensions: [.py, .pyi]\n"
                                               "diagnostics: {python: [ruff, pyright]}\n")
    config = config_project.load().config
    assert config.formatter["ruff"].command == ["ruff", "format", "$FILE"]
    assert config.formatter["ruff"].extensions == [".py", ".pyi"]
    assert config.diagnostics.python == ["ruff", "pyright"]


@pytest.mark.parametrize("text", ["diagnostics: false\nformatter: false\n", "diagnostics: {enabled: false}\n"])
def test_the_switches(config_project, text):
    config_project.write("repo/opencode.yaml", text)
    config = config_project.load().config
    assert config.diagnostics.enabled is False and config.formatter == {}


def test_a_formatter_without_a_command_is_said_with_an_example(config_project):
    path = config_project.write("repo/opencode.yaml", "formatter:\n  black:\n    extensions: [.py]\n")
    with pytest.raises(ConfigError) as err:
        config_project.load()
    assert str(err.value).startswith(f"{path}:2 formatter.black: ")
    assert "a formatter needs `command`" in str(err.value) and "[ruff, format, $FILE]" in str(err.value)


def test_an_extension_without_its_dot_is_said(config_project):
    path = config_project.write("repo/opencode.yaml", 'formatter:\n  ruff:\n    command: [ruff, format, "$FILE"]\n'
                                                      "    extensions: [py]\n")
    with pytest.raises(ConfigError) as err:
        config_project.load()
    assert str(err.value).startswith(f"{path}:4 formatter.ruff.extensions: ")
    assert "extensions start with a dot" in str(err.value)


def test_an_unknown_checker_is_said_with_the_ones_there_are(config_project):
    path = config_project.write("repo/opencode.yaml", "diagnostics:\n  python: [ruff, pyrite]\n")
    with pytest.raises(ConfigError) as err:
        config_project.load()
    assert str(err.value).startswith(f"{path}:2 diagnostics.python")
    assert "pyright" in str(err.value)


def test_a_formatter_a_projects_own_file_defines_is_not_run_and_the_person_is_told(tmp_path):
    from opencode_nb import Workspace

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text("formatter:\n  evil:\n    command: [sh, -c, 'touch pwned']\n"
                                        "    extensions: [.py]\n")
    with Workspace(root, data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                                                          "HOME": str(tmp_path)}) as ws:
        assert ws.diagnostics.formatters == {}
        [said] = [w for w in ws.warnings if "formatter.evil" in w]
    assert said.startswith(f"{root / 'opencode.yaml'}:2 formatter.evil: not run")
