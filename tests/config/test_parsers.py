"""The YAML and JSON readers: data and line maps that agree, and syntax errors as ConfigErrors."""

import json
from pathlib import Path

import pytest

from opencode_nb.config import ConfigError
from opencode_nb.config.json_lines import parse_json
from opencode_nb.config.parse import read_config_file
from opencode_nb.config.yaml_lines import parse_yaml

HERE = Path("opencode.yaml")


def test_yaml_lines_cover_every_key_and_list_item():
    data, lines, notes = parse_yaml("model: a/b\nagent:\n  x:\n    steps: 3\ninstructions:\n  - A.md\n  - B.md\n",
                                    HERE)
    assert data == {"model": "a/b", "agent": {"x": {"steps": 3}}, "instructions": ["A.md", "B.md"]}
    assert lines == {("model",): 1, ("agent",): 2, ("agent", "x"): 3, ("agent", "x", "steps"): 4,
                     ("instructions",): 5, ("instructions", "0"): 6, ("instructions", "1"): 7}
    assert notes == []


def test_yaml_keys_stay_the_text_written():
    data, lines, _ = parse_yaml("on: allow\n1: x\n~/x: deny\nnull: 2\n", HERE)
    assert list(data) == ["on", "1", "~/x", "null"]
    assert set(lines) == {(k,) for k in data}


def test_yaml_anchors_and_merge_keys_work_and_the_override_line_wins():
    data, lines, notes = parse_yaml("base: &b\n  steps: 1\n  mode: all\nx:\n  <<: *b\n  steps: 2\n", HERE)
    assert data["x"] == {"steps": 2, "mode": "all"}
    assert lines[("x", "steps")] == 6
    assert notes == []


def test_a_duplicate_yaml_key_is_noted_and_the_later_value_wins():
    data, _, notes = parse_yaml("model: a/b\nmodel: c/d\n", HERE)
    assert data == {"model": "c/d"}
    assert notes == ["opencode.yaml:2: duplicate key 'model'; the later value wins"]


def test_an_empty_yaml_document_is_an_empty_config():
    assert parse_yaml("# nothing yet\n", HERE) == ({}, {}, [])


def test_yaml_lines_are_offset_for_text_that_starts_later_in_a_file():
    _, lines, _ = parse_yaml("mode: all\n", HERE, first_line=2)
    assert lines == {("mode",): 2}


@pytest.mark.parametrize(("text", "line", "message"), [
    ("a: b: c\n", 1, "mapping values are not allowed here (column 5); a value containing ': ' needs quotes"),
    ("a:\n\t- b\n", 2, "indent with spaces, not tabs"),
    ("a: [1\n", 2, "while parsing a flow sequence that starts on line 1"),
    ("? [a]\n: b\n", 1, "a key must be a name, not a list or mapping"),
])
def test_broken_yaml_is_a_config_error_with_line_and_what_to_do(text, line, message):
    with pytest.raises(ConfigError) as err:
        parse_yaml(text, HERE)
    assert err.value.line == line
    assert message in str(err.value)


def test_json_lines_are_exact_even_when_a_nested_key_repeats_a_later_one():
    text = '{\n  "agent": {"build": {"model": "a/b"}},\n  "x": "\\"model\\": 1",\n  "model": "c/d",\n' \
           '  "instructions": [\n    "A.md",\n    {"n": [1, 2]}\n  ]\n}\n'
    data, lines, notes = parse_json(text, Path("opencode.json"))
    assert data == json.loads(text)
    assert lines == {("agent",): 2, ("agent", "build"): 2, ("agent", "build", "model"): 2, ("x",): 3,
                     ("model",): 4, ("instructions",): 5, ("instructions", "0"): 6, ("instructions", "1"): 7,
                     ("instructions", "1", "n"): 7, ("instructions", "1", "n", "0"): 7,
                     ("instructions", "1", "n", "1"): 7}
    assert notes == []


def test_a_duplicate_json_key_is_noted():
    data, lines, notes = parse_json('{"model": "a/b",\n "model": "c/d"}', Path("opencode.json"))
    assert data == {"model": "c/d"} and lines[("model",)] == 2
    assert notes == ["opencode.json:2: duplicate key 'model'; the later value wins"]


@pytest.mark.parametrize(("text", "line", "message"), [
    ('{\n  "model": "a/b",\n}', 3, "trailing comma"),
    ('{\n  // note\n  "model": "a/b"\n}', 2, "JSON has no comments"),
    ('{"model" "a/b"}', 1, "Expecting ':' delimiter (column 10)"),
])
def test_broken_json_is_a_config_error_with_line_and_what_to_do(text, line, message):
    with pytest.raises(ConfigError) as err:
        parse_json(text, Path("opencode.json"))
    assert err.value.line == line
    assert message in str(err.value)


def test_an_empty_json_file_is_an_empty_config():
    assert parse_json("  \n", Path("opencode.json")) == ({}, {}, [])


def test_a_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "opencode.json"
    path.write_bytes(b'\xef\xbb\xbf{"model": "a/b"}')
    assert read_config_file(path).data == {"model": "a/b"}
