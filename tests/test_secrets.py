"""What counts as a secret, what tools' processes are given, and how known values are redacted: in any case,
in base64 and JSON, in the disguises a probe would use (reversed, rot13, hex, spelled out), cut at either end
of a text, and split across the deltas of a stream."""

from __future__ import annotations

import base64
import codecs
import gc
import itertools
import json
import urllib.parse

import pytest

from opencode_nb import secrets
from opencode_nb.errors import ProviderError
from opencode_nb.secrets import MIN_LENGTH, Redactor, SecretSet, Stream, child_env, looks_secret, secret_set
from opencode_nb.session.models import TextPart, ToolCompleted, ToolPart

KEY = "sk-ant-unit-7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"
LABEL = "[redacted: ANTHROPIC_API_KEY]"


@pytest.fixture
def registered():
    """Register secret sets for one test only: the registry is the process's, and holds them weakly."""
    held: list[tuple[SecretSet, object]] = []

    def register(secret: SecretSet) -> SecretSet:
        held.append((secret, secrets.register(secret)))
        return secret

    yield register
    for _, off in held:
        off()  # type: ignore[operator]


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "openai_api_key", "GITHUB_TOKEN", "hf_token",
                                  "AWS_SECRET_ACCESS_KEY", "client_secret", "DB_PASSWORD", "PGPASSWORD"])
def test_names_that_say_secret_are_secret_in_any_case(name):
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "TOKENIZERS_PARALLELISM", "GIT_ASKPASS", "API_KEY_FILE_DIR",
                                  "OPENCODE_NB_DATA_DIR"])
def test_ordinary_names_are_not(name):
    assert not looks_secret(name)


def test_a_provider_key_is_named_by_the_variable_that_holds_it_and_that_variable_is_hidden():
    env = {"MY_LLM": "local-key-1234567890", "HOME": "/home/me", "GITHUB_TOKEN": "ghp_abcdefghijklmnop"}
    found = secret_set(env, keys={"provider.local.api_key": "local-key-1234567890",
                                  "provider.anthropic.api_key": "sk-literal-in-the-config-file"})
    assert found.values == {"local-key-1234567890": "MY_LLM", "sk-literal-in-the-config-file":
                            "provider.anthropic.api_key", "ghp_abcdefghijklmnop": "GITHUB_TOKEN"}
    assert "MY_LLM" in found.hidden


def test_an_env_reference_written_in_python_is_looked_up_and_hidden():
    found = secret_set({"LLM_CREDENTIAL": "cred-abcdefghijkl"}, keys={"provider.x.api_key": "{env:LLM_CREDENTIAL}"})
    assert found.values == {"cred-abcdefghijkl": "LLM_CREDENTIAL"} and found.hidden == ("LLM_CREDENTIAL",)


def test_configured_names_and_patterns_make_their_values_secret_and_short_values_are_left_alone():
    env = {"DATABASE_URL": "postgres://u:pw@db/app", "AWS_REGION": "eu-west-1x", "AWS_X": "short", "PWD": "/"}
    found = secret_set(env, names=["DATABASE_URL", "AWS_*"])
    assert found.values == {"postgres://u:pw@db/app": "DATABASE_URL", "eu-west-1x": "AWS_REGION"}


def test_child_env_drops_secret_names_configured_names_and_variables_holding_a_known_value(registered):
    registered(SecretSet(["DATABASE_*"], {"value-of-a-configured-key": "provider.x.api_key"}))
    env = {"PATH": "/usr/bin", "ANTHROPIC_API_KEY": KEY, "github_token": "ghp_unit", "DATABASE_URL": "pg://x",
           "ALIAS": "VALUE-OF-A-CONFIGURED-KEY", "LANG": "C.UTF-8"}
    assert child_env(env) == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}


def test_a_forgotten_or_collected_set_stops_counting():
    kept = SecretSet(["UNIT_FORGOTTEN"], {"forgotten-value-123": "X"})
    forget = secrets.register(kept)
    assert "forgotten-value-123" in secrets.active().values
    forget()
    assert "forgotten-value-123" not in secrets.active().values
    secrets.register(SecretSet([], {"collected-value-123": "Y"}))  # nobody keeps the set
    gc.collect()
    assert "collected-value-123" not in secrets.active().values
    assert child_env({"UNIT_FORGOTTEN": "1"}) == {"UNIT_FORGOTTEN": "1"}


@pytest.mark.parametrize("shown", [KEY, KEY.upper(), KEY.lower(), KEY.swapcase(), KEY[:10] + KEY[10:].upper()])
def test_a_value_is_redacted_whatever_its_case(shown):
    assert Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(f"key={shown}; done") == f"key={LABEL}; done"


@pytest.mark.parametrize("before", ["", "u:", "user:"])
def test_a_value_inside_base64_is_redacted_at_every_alignment(before):
    encoded = base64.b64encode(f"{before}{KEY}\n".encode()).decode()
    shown = Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(f"Authorization: Basic {encoded}")
    left = shown.removeprefix("Authorization: Basic ").replace(LABEL, "")
    assert LABEL in shown and len(left) <= len(before) * 4 // 3 + 6, "only the edges around the key remain"


@pytest.mark.parametrize("before", [b"", b"x", b"xy", b"header:", bytes(range(200))])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_value_inside_a_longer_base64_blob_is_redacted_at_every_byte_offset(before, encode):
    blob = encode(before + KEY.encode() + bytes(range(60))).decode()
    shown = Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(f"data: {blob}")
    head, _, tail = shown.removeprefix("data: ").partition(LABEL)
    assert LABEL in shown
    assert len(head) <= len(before) * 4 // 3 + 2 and len(tail) <= 80 + 4, "only the data around the key remains"


@pytest.mark.parametrize("before", [b"", b"x", b"xy"])
def test_a_value_whose_base64_holds_plus_or_slash_is_redacted_in_url_safe_base64_too(before):
    value = "pass?>word~~>?1234"
    encoded = base64.urlsafe_b64encode(before + value.encode() + b"\n").decode()
    assert "[redacted: DB_PASSWORD]" in Redactor({value: "DB_PASSWORD"}).redact(encoded)


DISGUISES = {
    "reversed": KEY[::-1],
    "reversed, upper case": KEY[::-1].upper(),
    "rot13": codecs.encode(KEY, "rot13"),
    "hex": KEY.encode().hex(),
    "hex, upper case": KEY.encode().hex().upper(),
    "hex with colons": KEY.encode().hex(":"),
    "hex with spaces, upper case": KEY.encode().hex(" ").upper(),
    "hex with dashes": KEY.encode().hex("-"),
    "hex escapes": "".join(f"\\x{byte:02x}" for byte in KEY.encode()),
    "hex escapes, upper case": "".join(f"\\x{byte:02X}" for byte in KEY.encode()),
    "spelled out with spaces": " ".join(KEY),
    "spelled out with dashes": "-".join(KEY),
    "spelled out one per line": "\n".join(KEY),
    "spelled out with mixed separators": "".join(c + ".,;"[i % 3] for i, c in enumerate(KEY))[:-1],
}


@pytest.mark.parametrize("shown", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_value_in_the_disguises_a_probe_would_use_is_redacted_where_it_stands(shown):
    assert Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(f"got: {shown} (done)") == f"got: {LABEL} (done)"


@pytest.mark.parametrize("name", ["reversed", "hex escapes", "hex with colons", "spelled out with spaces"])
def test_a_disguised_value_is_found_far_into_a_long_output_too(name):
    output = "row 1234, 0x7f3a, 6b6c, ok\n" * 200 + DISGUISES[name] + "\n" + "done\n" * 100
    assert Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(output) == output.replace(DISGUISES[name], LABEL)


def test_a_value_percent_encoded_byte_by_byte_is_redacted_all_but_the_first_percent_sign():
    encoded = "".join(f"%{byte:02X}" for byte in KEY.encode())
    assert Redactor({KEY: "ANTHROPIC_API_KEY"}).redact(f"?k={encoded}&x=1") == f"?k=%{LABEL}&x=1"


def test_a_value_url_encoded_is_redacted():
    value = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    redactor = Redactor({value: "AWS_SECRET_ACCESS_KEY"})
    for encoded in (urllib.parse.quote(value), urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)):
        assert redactor.redact(f"?s={encoded}") == "?s=[redacted: AWS_SECRET_ACCESS_KEY]"


def test_disguised_values_are_redacted_in_stored_rows_parts_and_streams():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    row = json.dumps({"output": f"key: {' '.join(KEY)}", "hex": KEY.encode().hex(":")})
    assert json.loads(redactor.redact_json(row)) == {"output": f"key: {LABEL}", "hex": LABEL}
    part = ToolPart(session_id="s", message_id="m", call_id="c", tool="python",
                    state=ToolCompleted(input={"code": "k[::-1]"}, output=KEY[::-1], started_at=0))
    assert redactor.redact_value(part).state.output == LABEL
    assert stream_through(redactor, ["the key backwards: ", KEY[::-1], " ok"])[-1] == f"the key backwards: {LABEL} ok"


def test_a_dotted_capital_i_elsewhere_in_the_text_moves_nothing():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    assert redactor.redact(f"İstanbul {' '.join(KEY)} İ") == f"İstanbul {LABEL} İ"
    assert redactor.redact(f"İ {KEY[:len(KEY) // 2 + 1]}") == f"İ {LABEL}", "pieces are still found"


ORDINARY = """\
commit 9c4e1d07b2a85f3316e0d9a4c7b2e5f18a3d6c90 (HEAD -> main)
sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
00000000  73 6b 2d 61 6e 74 00 00  de ad be ef 0a 0b 0c 0d  |sk-ant..........|
payload: eyJ1c2VyIjogImFkYSIsICJyb2xlIjogImFkbWluIn0= and %7B%22a%22%3A1%7D
- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -
T h e   q u i c k   b r o w n   f o x   j u m p s   o v e r   t h e   d o g
sk-ant-api03-not-this-one ghp_0000000000000000000000000000000000 tna-ks
"""


def test_ordinary_output_with_hex_base64_and_spaced_text_is_left_alone_as_the_very_same_string():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY", "ghp_abcdefghijklmnopqrstuvwxyz012345": "GITHUB_TOKEN",
                         "local-key-1234567890": "MY_LLM"})
    assert redactor.redact(ORDINARY) is ORDINARY
    assert redactor.redact(ORDINARY * 20) == ORDINARY * 20


@pytest.mark.parametrize("shown", [" ".join("hunter2"), "hunter2"[::-1], b"hunter2".hex(":"), "uhagre2"])
def test_short_values_are_never_redacted_in_any_disguise(shown):
    assert Redactor({"hunter2": "PASSWORD"}).redact(f"pw {shown}") == f"pw {shown}"


def test_a_value_with_quotes_and_backslashes_is_redacted_in_json_and_the_json_stays_valid():
    value = 'pa"ss\\word-1234'
    data = json.dumps({"output": f"secret is {value}", "n": 1})
    clean = Redactor({value: "DB_PASSWORD"}).redact_json(data)
    assert json.loads(clean) == {"output": "secret is [redacted: DB_PASSWORD]", "n": 1}


def test_pieces_of_at_least_half_a_value_at_either_end_are_hidden_and_shorter_ones_are_not():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    half = len(KEY) // 2 + 1
    assert redactor.redact("tail of the output: " + KEY[:half]) == "tail of the output: " + LABEL
    assert redactor.redact("…" + KEY[-half:] + "\nnext line") == "…" + LABEL + "\nnext line"
    assert redactor.redact("only " + KEY[:12]) == "only " + KEY[:12]


def test_values_shorter_than_the_minimum_are_never_redacted():
    assert Redactor({"hunter2": "PASSWORD"}).redact("hunter2 hunter2") == "hunter2 hunter2"
    assert MIN_LENGTH == 8


def test_a_model_without_secrets_comes_back_as_the_very_same_object_and_one_with_them_is_copied():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    part = ToolPart(session_id="s", message_id="m", call_id="c", tool="bash",
                    state=ToolCompleted(input={"command": "env"}, output="PATH=/usr/bin", started_at=0))
    assert redactor.redact_value(part) is part
    leaky = part.model_copy(update={"state": part.state.model_copy(update={"output": f"KEY={KEY}",
                                                                           "metadata": {"output": KEY.upper()}})})
    clean = redactor.redact_value(leaky)
    assert clean.state.output == f"KEY={LABEL}" and clean.state.metadata == {"output": LABEL}
    assert clean.id == part.id and clean.state.input == {"command": "env"}


def stream_through(redactor: Redactor, deltas: list[str]) -> list[str]:
    stream, text, shown = Stream(redactor), "", []
    for delta in deltas:
        text += delta
        shown.append(stream.feed(text, delta))
    return shown


def test_a_value_split_anywhere_across_deltas_is_never_shown_even_in_part():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    text = f"Your key is {KEY}, keep it safe."
    start = text.index(KEY)
    for first in range(start, start + len(KEY)):
        for second in (first + 1, first + 7, start + len(KEY) + 2):
            deltas = [text[:first], text[first:second], text[second:]]
            shown = stream_through(redactor, [d for d in deltas if d])
            assert shown[-1] == f"Your key is {LABEL}, keep it safe."
            for earlier, later in itertools.pairwise(shown):
                assert later.startswith(earlier), "what is shown only grows"
            assert not any("sk-" in s.lower() for s in shown), (first, second, shown)


def test_a_stream_without_secrets_shows_the_written_text_itself():
    stream, text = Stream(Redactor({KEY: "ANTHROPIC_API_KEY"})), ""
    for delta in ["The sky ", "is blue ", "today."]:
        text += delta
        shown = stream.feed(text, delta)
    assert shown == "The sky is blue today." and shown is text, "not a copy"


def test_a_stream_holds_back_only_while_the_end_could_begin_a_value():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    assert stream_through(redactor, ["ask", "-and-answer"]) == ["a", "ask-and-answer"]


def test_provider_error_messages_never_carry_a_known_value(registered):
    registered(SecretSet([], {KEY: "ANTHROPIC_API_KEY"}))
    error = ProviderError(f"401 invalid x-api-key: {KEY.upper()}", kind="auth")
    assert str(error) == f"401 invalid x-api-key: {LABEL}"


def test_a_streamed_text_part_keeps_its_text_type():
    redactor = Redactor({KEY: "ANTHROPIC_API_KEY"})
    part = TextPart(session_id="s", message_id="m", text=f"k {KEY}")
    assert redactor.redact_value(part).text == f"k {LABEL}"
