"""Which files hold secrets: one definition, read the same way by the default rules and by every tool."""

from __future__ import annotations

import pytest

from opencode_nb.permission import evaluate, from_config
from opencode_nb.secrets import is_secret_file, secret_file_rules

SECRET = [".env", ".env.local", ".env.production", "prod.env", "config/.env", "services/api/.env.local", ".envrc",
          "id_rsa", "id_ed25519", ".ssh/id_github", "/home/me/.ssh/id_ecdsa", "server.pem", "tls/server.key",
          "id_rsa.pem", "credentials", "credentials.json", ".aws/credentials", ".netrc", "_netrc", ".pgpass",
          "home/.pgpass", ".envs/.production/.django"]
NOT_SECRET = [".env.example", ".env.sample", ".env.template", ".env.local.example", "config/.env.example",
              "id_rsa.pub", ".ssh/id_ed25519.pub", "id_map.py", "src/id_utils.ts", "keys.txt", "keyboard.key.md",
              "environment.yml", "src/env.py", "README.md", "netrc.md", "pgpass.txt", "app/credentials_test.md.example"]


@pytest.mark.parametrize("path", SECRET)
def test_files_that_conventionally_hold_secrets_are_secret(path):
    assert is_secret_file(path)


@pytest.mark.parametrize("path", NOT_SECRET)
def test_templates_public_keys_and_lookalikes_are_not(path):
    assert not is_secret_file(path)


@pytest.mark.parametrize("path", SECRET + NOT_SECRET)
def test_the_default_read_rules_ask_for_exactly_the_secret_files(path):
    rules = from_config({"read": secret_file_rules()})
    assert (evaluate("read", path, rules).action == "ask") == is_secret_file(path)


def test_a_project_rule_for_one_file_grants_that_file_only():
    rules = from_config({"read": secret_file_rules()}) + from_config({"read": {".env.local": "allow"}})
    assert evaluate("read", ".env.local", rules).action == "allow"
    assert evaluate("read", ".env", rules).action == "ask"
