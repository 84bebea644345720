"""The values in secret files, what a project's watched files teach the registry, and when they are read again."""

from __future__ import annotations

import os
import secrets as random
import time

import pytest

from opencode_nb import secrets
from opencode_nb.secrets import SecretFiles, values_in
from opencode_nb.secrets.file_values import MAX_FILE_BYTES, SCAN_DEPTH


def key(prefix: str = "sk_live_") -> str:
    """A fresh value: what one test teaches the process-wide registry must not make another pass."""
    return prefix + random.token_hex(12)


def test_dotenv_values_are_read_as_a_program_loading_the_file_would_see_them():
    text = ("# comment = not-a-value-123456\n"
            "PLAIN=plain-value-123456\n"
            "export EXPORTED=exported-value-123456\n"
            "DOUBLE=\"double quoted value 123\"  # a comment\n"
            "SINGLE='single-quoted-123456'\n"
            "TRAILING=trailing-value-123456 # note\n"
            "SHORT=abc\n"
            "EMPTY=\n")
    assert values_in(".env", text) == {
        "plain-value-123456": ".env:PLAIN", "exported-value-123456": ".env:EXPORTED",
        "double quoted value 123": ".env:DOUBLE", "single-quoted-123456": ".env:SINGLE",
        "trailing-value-123456": ".env:TRAILING"}


def test_a_key_file_gives_each_line_of_its_body_and_the_body_whole():
    lines = ["MIIEowIBAAKCAQEAw1" + "a" * 46, "b" * 64, "c" * 20]
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----\n"
    found = values_in("id_rsa", text)
    assert set(found) == {*lines, "".join(lines)} and set(found.values()) == {"id_rsa"}


def test_netrc_and_pgpass_give_their_passwords():
    netrc = "machine api.example.com login me password netrc-password-123\nmachine other login x password short\n"
    assert values_in(".netrc", netrc) == {"netrc-password-123": ".netrc:api.example.com"}
    pgpass = "# host:port:db:user:password\ndb.internal:5432:*:app:pg-pass\\:with-colon-123\n"
    assert values_in(".pgpass", pgpass) == {"pg-pass:with-colon-123": ".pgpass:db.internal"}


def test_an_ini_credentials_file_gives_its_values():
    text = "[default]\naws_access_key_id = AKIAEXAMPLE12345\naws_secret_access_key = abcdEXAMPLEsecret/123\n"
    assert values_in(".aws/credentials", text) == {
        "AKIAEXAMPLE12345": ".aws/credentials:aws_access_key_id",
        "abcdEXAMPLEsecret/123": ".aws/credentials:aws_secret_access_key"}


def test_the_project_root_and_folders_near_it_are_learned_and_deeper_ones_are_not(tmp_path):
    near, deeper, template = key(), key(), key()
    (tmp_path / ".env").write_text(f"A={near}\n")
    (tmp_path / "one" / "two" / "three").mkdir(parents=True)
    (tmp_path / "one" / "two" / ".env").write_text(f"B={near}x\n")
    (tmp_path / "one" / "two" / "three" / ".env").write_text(f"C={deeper}\n")
    (tmp_path / ".env.example").write_text(f"D={template}\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / ".env").write_text(f"E={deeper}y\n")
    files = SecretFiles(tmp_path)
    assert files.check()
    assert files.values == {near: ".env:A", near + "x": "one/two/.env:B"}
    assert SCAN_DEPTH == 2


def test_a_check_reads_again_only_what_changed_and_keeps_what_it_learned(tmp_path):
    first, second, third = key(), key(), key()
    env = tmp_path / ".env"
    env.write_text(f"A={first}\n")
    files = SecretFiles(tmp_path)
    assert files.check() and not files.check()
    env.write_text(f"A={second}\n")
    os.utime(env, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert files.check()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "id_deploy").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{third}\n-----END OPENSSH "
                                                "PRIVATE KEY-----\n")
    assert files.check()
    assert files.values == {first: ".env:A", second: ".env:A", third: "sub/id_deploy"}


def test_links_and_oversized_files_are_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".env").write_text(f"X={key()}\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "linked").symlink_to(outside)
    (root / ".env").symlink_to(outside / ".env")
    (root / "big.pem").write_text("A=" + "x" * MAX_FILE_BYTES + "\n")
    files = SecretFiles(root)
    assert not files.check() and files.values == {}


def test_a_registered_project_redacts_its_file_values_and_a_variable_keeps_its_own_label(tmp_path, monkeypatch):
    mine, shared = key(), key()
    (tmp_path / ".env").write_text(f"STRIPE_KEY={mine}\nOTHER={shared}\n")
    env_set = secrets.SecretSet(values={shared: "SHARED_TOKEN"})
    files = SecretFiles(tmp_path)
    forget = [secrets.register(env_set), secrets.register(files)]
    try:
        assert secrets.redact(f"{mine} {shared}") == "[redacted: .env:STRIPE_KEY] [redacted: SHARED_TOKEN]"
        late = key()
        (tmp_path / ".env.local").write_text(f"LATE={late}\n")
        assert secrets.redact(late) == "[redacted: .env.local:LATE]", "a file made since is read at the next redact"
        assert secrets.child_env({"HOLDS_IT": mine, "PATH": "/bin"}) == {"PATH": "/bin"}
    finally:
        for off in forget:
            off()


def test_a_file_a_tool_read_is_redacted_from_then_on():
    value = key()
    assert secrets.redact(value) == value
    secrets.learn_file("deep/down/.env", f"DEEP={value}\n")
    assert secrets.redact(f"x {value} y") == "x [redacted: deep/down/.env:DEEP] y"


@pytest.mark.parametrize("folders", [10, 200])
def test_checking_a_project_that_did_not_change_costs_a_few_stats(tmp_path, folders):
    for i in range(folders):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / ".env").write_text(f"K={key()}\n")
    files = SecretFiles(tmp_path)
    files.check()
    started = time.perf_counter()
    for _ in range(100):
        assert not files.check()
    per_check_s = (time.perf_counter() - started) / 100
    assert per_check_s < 0.01, f"{per_check_s * 1000:.2f} ms per check"


def test_the_folder_a_workspace_opened_in_is_watched_however_deep_it_is(tmp_path):
    here = tmp_path / "a" / "b" / "c" / "notebooks"
    here.mkdir(parents=True)
    value = key()
    (here / ".env").write_text(f"K={value}\n")
    files = SecretFiles(tmp_path, (here,))
    assert files.check() and files.values == {value: "a/b/c/notebooks/.env:K"}
