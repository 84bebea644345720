import pytest

from opencode_nb import Workspace
from opencode_nb.config import ConfigWarning
from opencode_nb.errors import ConfigError


@pytest.fixture
def env(tmp_path):
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}


def test_a_workspace_joins_config_agents_store_and_services(tmp_path, env):
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "proj" / "opencode.yaml").write_text("default_agent: plan\n")
    with Workspace(tmp_path / "proj", data_dir=tmp_path / "data", env=env) as ws:
        assert ws.agents.default.name == "plan"
        assert ws.root == tmp_path / "proj"
        assert ws.store_path.parent == tmp_path / "data" / "sessions"
        session = ws.sessions.create(str(ws.directory))
        assert ws.sessions.list(str(ws.directory)) == [session]
        assert ws.permissions.pending() == []


def test_the_workspace_mapping_wins_over_files(tmp_path, env):
    (tmp_path / "opencode.yaml").write_text("default_agent: plan\n")
    with Workspace(tmp_path, {"default_agent": "build"}, data_dir=tmp_path / "d", env=env) as ws:
        assert ws.agents.default.name == "build"


def test_sessions_survive_reopening_the_workspace(tmp_path, env):
    with Workspace(tmp_path, data_dir=tmp_path / "d", env=env) as ws:
        session = ws.sessions.create(str(ws.directory), title="kept")
    with Workspace(tmp_path, data_dir=tmp_path / "d", env=env) as ws:
        assert ws.sessions.get(session.id).title == "kept"


def test_the_data_dir_comes_from_the_environment(tmp_path, env):
    with Workspace(tmp_path, env={**env, "OPENCODE_NB_DATA_DIR": str(tmp_path / "elsewhere")}) as ws:
        assert ws.data_dir == tmp_path / "elsewhere"
        assert ws.store_path.is_file()


def test_config_warnings_are_collected(tmp_path, env):
    (tmp_path / "opencode.yaml").write_text("modle: x\n")
    with pytest.warns(ConfigWarning), Workspace(tmp_path, data_dir=tmp_path / "d", env=env) as ws:
        assert any("modle" in w for w in ws.warnings)


def test_a_default_agent_that_cannot_be_the_default_is_a_config_error(tmp_path, env):
    (tmp_path / "opencode.yaml").write_text("default_agent: explore\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:1 default_agent: 'explore' is a subagent; name a primary"):
        Workspace(tmp_path, data_dir=tmp_path / "d", env=env)


def test_an_invalid_config_fails_before_anything_is_opened(tmp_path, env):
    (tmp_path / "opencode.yaml").write_text("permission:\n  edit: sometimes\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:2 permission.edit: 'sometimes' is not one of"):
        Workspace(tmp_path, data_dir=tmp_path / "d", env=env)
    assert not (tmp_path / "d" / "sessions").exists()


def test_a_prompt_lists_the_asks_the_policy_decided_by_who_decided_not_by_the_wording(tmp_path, env):
    from opencode_nb.permission.events import PermissionAsked, PermissionReplied, PermissionRequest
    from opencode_nb.question.events import QuestionAsked, QuestionInfo, QuestionReplied, QuestionRequest
    from opencode_nb.workspace import _UnattendedLog

    with Workspace(tmp_path, data_dir=tmp_path / "d", env=env) as ws:
        session = ws.sessions.create(str(ws.directory))
        ask = [PermissionRequest(id=f"per_{n}", session_id=session.id, agent="build", permission="bash",
                                 patterns=[f"make {n}"]) for n in range(2)]
        question = QuestionRequest(id="que_1", session_id=session.id, questions=[QuestionInfo(question="Which?")])
        with _UnattendedLog(ws, session.id) as decisions:
            for request in ask:
                ws.bus.publish(PermissionAsked(request=request))
            ws.bus.publish(QuestionAsked(request=question))
            ws.bus.publish(PermissionReplied(session_id=session.id, request_id="per_0", reply="once",
                                             reason="as if by policy: a person said yes", decided_by="person"))
            ws.bus.publish(PermissionReplied(session_id=session.id, request_id="per_1", reply="reject",
                                             reason="nobody was there", decided_by="policy"))
            ws.bus.publish(QuestionReplied(session_id=session.id, request_id="que_1", answers=[["A"]],
                                           reason="chosen for you", decided_by="policy"))
        assert [(d.kind, d.subject, d.outcome) for d in decisions] == [
            ("permission", "bash make 1", "refused"), ("question", "Which?", "answered")]
