"""`mcp` config entries: validated with file and line, whose they are, what approval remembers, what is secret."""

from __future__ import annotations

import pytest

from opencode_nb.config.load import load_config
from opencode_nb.errors import ConfigError
from opencode_nb.kernel.magics.listing import config as config_listing
from opencode_nb.mcp import masked, secret_values, server_entries


def project(tmp_path, text: str):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text(text)
    return root


def env(tmp_path, **more):
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path), **more}


def test_a_local_entry_without_a_command_names_file_line_and_the_fix(tmp_path):
    root = project(tmp_path, "model: scripted/demo\nmcp:\n  db:\n    type: local\n    environment: {A: b}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(root, env=env(tmp_path))
    message = str(caught.value)
    assert "opencode.yaml:3" in message and "mcp.db" in message and "needs `command`" in message


def test_a_timeout_written_in_seconds_is_caught(tmp_path):
    root = project(tmp_path, "mcp:\n  db:\n    type: local\n    command: [db-server]\n    timeout: 30\n")
    with pytest.raises(ConfigError, match=r"opencode.yaml:5 mcp.db.timeout: .*for 30 seconds write 30000"):
        load_config(root, env=env(tmp_path))


def test_a_remote_entry_needs_an_http_url_and_takes_no_command(tmp_path):
    root = project(tmp_path, "mcp:\n  gh:\n    type: remote\n    url: ftp://x\n")
    with pytest.raises(ConfigError, match="starting with http:// or https://"):
        load_config(root, env=env(tmp_path))
    root = project(tmp_path / "b", "mcp:\n  gh:\n    type: remote\n    url: https://x/mcp\n    command: [a]\n")
    with pytest.raises(ConfigError, match="`command` and `environment` are for `type: local`"):
        load_config(root, env=env(tmp_path))


def test_an_unknown_key_in_an_entry_is_a_warning_with_the_known_keys(tmp_path):
    root = project(tmp_path, "mcp:\n  gh:\n    type: remote\n    url: https://x/mcp\n    header: {A: b}\n")
    with pytest.warns(Warning, match=r"unknown key mcp.gh.header \(did you mean headers\?\)"):
        loaded = load_config(root, env=env(tmp_path))
    assert loaded.config.mcp["gh"].headers == {}


def test_project_entries_are_the_project_s_and_the_digest_follows_the_entry_not_the_secret(tmp_path):
    text = ("mcp:\n  gh:\n    type: remote\n    url: https://x/mcp\n"
            "    headers: {Authorization: \"Bearer {env:GH_TOKEN}\"}\n")
    root = project(tmp_path, text)
    [first] = server_entries(load_config(root, env=env(tmp_path, GH_TOKEN="token-one-123456")))
    [rotated] = server_entries(load_config(root, env=env(tmp_path, GH_TOKEN="token-two-654321")))
    assert first.project and first.source == str(root / "opencode.yaml") and first.line == 2
    assert first.digest == rotated.digest  # a new token needs no new approval
    (root / "opencode.yaml").write_text(text.replace("GH_TOKEN", "AWS_SECRET"))
    [other] = server_entries(load_config(root, env=env(tmp_path, AWS_SECRET="token-one-123456")))
    assert other.digest != first.digest  # sending another variable does


def test_headers_and_environment_read_from_variables_are_secrets_and_masked(tmp_path):
    root = project(tmp_path, "mcp:\n  gh:\n    type: remote\n    url: https://x/mcp\n"
                             "    headers: {Authorization: \"Bearer {env:GH_TOKEN}\"}\n"
                             "  db:\n    type: local\n    command: [db]\n"
                             "    environment: {DB_PASSWORD: \"{env:DBPW}\", LOG_LEVEL: debug}\n")
    loaded = load_config(root, env=env(tmp_path, GH_TOKEN="ghp_abcdefghijklmnop", DBPW="hunter2-long-pw"))
    assert secret_values(loaded) == {"mcp.gh.headers.Authorization": "ghp_abcdefghijklmnop",
                                     "mcp.db.environment.DB_PASSWORD": "hunter2-long-pw"}
    assert masked(("mcp", "gh", "headers", "Authorization"), "Bearer ghp_x") == "•••• (set)"
    assert masked(("mcp", "db", "environment"), {"LOG_LEVEL": "debug"}) == {"LOG_LEVEL": "•••• (set)"}
    assert masked(("mcp", "db", "command"), ["db"]) is None


def test_the_config_listing_shows_entries_with_secrets_masked(tmp_path):
    from opencode_nb import Workspace

    root = project(tmp_path, "mcp:\n  gh:\n    type: remote\n    url: https://x/mcp\n"
                             "    headers: {X-Api: \"{env:GH_TOKEN}\"}\n")
    ws = Workspace(root, data_dir=tmp_path / "data", env=env(tmp_path, GH_TOKEN="ghp_abcdefghijklmnop"))
    shown = config_listing(ws, [])["text/plain"]
    assert "url: https://x/mcp" in shown and "X-Api: •••• (set)" in shown
    assert "ghp_abcdefghijklmnop" not in shown
    ws.close()


def test_an_entry_added_or_changed_while_agents_ran_is_a_loosening_the_person_confirms(tmp_path):
    from opencode_nb.config.loosen import loosenings

    def rules_of(loaded):
        return {}, "build"

    root = project(tmp_path, "{}\n")
    before = load_config(root, env=env(tmp_path))
    (root / "opencode.yaml").write_text("mcp:\n  db:\n    type: local\n    command: [db-server]\n"
                                        "    environment: {TOKEN: sk-very-secret}\n")
    added = load_config(root, env=env(tmp_path))
    assert [str(f) for f in loosenings(before, added, rules_of)] == [f"{root}/opencode.yaml:2: mcp.db: added"]
    (root / "opencode.yaml").write_text("mcp:\n  db:\n    type: local\n    command: [db-server, --write]\n"
                                        "    environment: {TOKEN: sk-very-secret}\n")
    changed = [str(f) for f in loosenings(added, load_config(root, env=env(tmp_path)), rules_of)]
    assert changed == [f"{root}/opencode.yaml:4: mcp.db.command: changed"]
