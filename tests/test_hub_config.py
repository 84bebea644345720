"""The jupyterhub_config.py fragment of docs/deploying.md sets what the page says, loaded as JupyterHub loads it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import PyFileConfigLoader

FRAGMENT = Path(__file__).resolve().parents[1] / "docs" / "hub" / "jupyterhub_config.py"


def _environment(monkeypatch: pytest.MonkeyPatch, **hub_env: str) -> dict[str, object]:
    for name in ("OPENCODE_NB_DB_HOST", "OPENCODE_NB_DB_NAME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in hub_env.items():
        monkeypatch.setenv(name, value)
    config = PyFileConfigLoader(FRAGMENT.name, path=str(FRAGMENT.parent)).load_config()
    return dict(config.Spawner.environment)


def test_spawner_environment_names_the_managed_config_and_a_per_user_store(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _environment(monkeypatch, OPENCODE_NB_DB_HOST="db.hub.svc", OPENCODE_NB_DB_NAME="sessions")
    assert env["OPENCODE_NB_MANAGED_CONFIG"] == "/etc/opencode_nb/managed.yaml"
    assert env["PGPASSFILE"] == "/etc/opencode_nb-pgpass/pgpass"
    url = env["OPENCODE_NB_STORE_URL"]
    assert callable(url)
    alice, bob = (SimpleNamespace(user=SimpleNamespace(name=name)) for name in ("alice", "bob"))
    assert url(alice) == "postgresql://alice@db.hub.svc/sessions"
    assert url(bob) == "postgresql://bob@db.hub.svc/sessions"


def test_no_password_is_written_into_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _environment(monkeypatch)
    url = env["OPENCODE_NB_STORE_URL"]
    assert callable(url)
    made = url(SimpleNamespace(user=SimpleNamespace(name="alice")))
    assert made == "postgresql://alice@postgres/opencode_nb"
    assert ":" not in made.removeprefix("postgresql://").split("@")[0]
