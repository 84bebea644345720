"""Hostile or broken config files are a ConfigError naming the file, never a MemoryError, RecursionError or hang."""

import json
import time

import pytest

from opencode_nb.config import ConfigError
from opencode_nb.config.json_lines import parse_json
from opencode_nb.config.yaml_lines import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, MAX_CONFIG_VALUES, load_yaml, parse_yaml


def billion_laughs() -> str:
    """Nine levels of nine aliases: a few hundred bytes that expand to 387 million strings."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    return "\n".join(lines) + "\n"


def refused(call, *args) -> ConfigError:
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        call(*args)
    assert time.monotonic() - started < 5
    return err.value


def test_a_billion_laughs_file_is_refused_at_the_alias_that_crosses_the_limit(project):
    path = project.write("repo/opencode.yaml", "model: a/b\n" + billion_laughs())
    err = refused(project.load)
    assert err.path == str(path) and "refused" in str(err) and f"{MAX_CONFIG_VALUES:,} values" in str(err)
    assert err.line is not None and err.line > 1


def test_aliases_that_stay_small_still_work(project):
    project.write("repo/opencode.yaml", "agent:\n  plan: &sampling {temperature: 0.2}\n"
                                        "  build: {<<: *sampling, steps: 5}\n")
    agents = project.load().config.agent
    assert agents["plan"].temperature == agents["build"].temperature == 0.2 and agents["build"].steps == 5


def test_an_alias_inside_its_own_anchor_is_refused(project):
    path = project.write("repo/opencode.yaml", "instructions: &loop [a.md, *loop]\n")
    err = refused(project.load)
    assert err.path == str(path) and "refers to the value that contains it" in str(err)


@pytest.mark.parametrize("text", [
    "model: a/b\nx: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "model: a/b\nx: " + "{k: " * 10_000 + "1" + "}" * 10_000 + "\n",
    "".join("  " * i + f"k{i}:\n" for i in range(400)),
], ids=["flow-lists", "flow-mappings", "indented-mappings"])
def test_yaml_nested_ten_thousand_deep_is_refused_with_its_line(project, text):
    path = project.write("repo/opencode.yaml", text)
    err = refused(project.load)
    assert err.path == str(path) and f"more than {MAX_CONFIG_DEPTH} levels deep" in str(err) and err.line


def test_json_nested_ten_thousand_deep_is_refused_with_its_line(project):
    deep = '{\n"model": "a/b",\n"x": ' + "[" * 10_000 + "]" * 10_000 + "}"
    path = project.write("repo/opencode.json", deep)
    err = refused(project.load)
    assert err.path == str(path) and err.line == 3 and f"more than {MAX_CONFIG_DEPTH} levels" in str(err)


def test_brackets_inside_json_strings_are_not_nesting(project):
    prompt = "[{" * 500 + '\\"]}'
    project.write("repo/opencode.json", '{"agent": {"build": {"prompt": "' + prompt + '"}}}')
    assert project.load().config.agent["build"].prompt.startswith("[{[{")


@pytest.mark.parametrize("name", ["opencode.yaml", "opencode.json", ".opencode/agent/huge.md"])
def test_a_20_mb_file_is_refused_before_it_is_read(project, name):
    body = "x" * (20 * 2**20)
    text = {"opencode.yaml": f'model: a/b\nnote: "{body}"\n', "opencode.json": json.dumps({"x": body}),
            ".opencode/agent/huge.md": f"---\nmode: subagent\n---\n{body}\n"}[name]
    path = project.write(f"repo/{name}", text)
    err = refused(project.load)
    assert err.path == str(path) and "20.0 MiB" in str(err) and "at most 1 MiB" in str(err)


def test_markdown_frontmatter_gets_the_same_limits(project):
    bomb = "---\n" + billion_laughs() + "---\nYou review code.\n"
    path = project.write("repo/.opencode/agent/reviewer.md", bomb)
    err = refused(project.load)
    assert err.path == str(path) and "values" in str(err)
    project.write("repo/.opencode/agent/reviewer.md", "---\nx: " + "[" * 10_000 + "]" * 10_000 + "\n---\nHi\n")
    err = refused(project.load)
    assert err.path == str(path) and "levels deep" in str(err) and err.line == 2


def test_the_parsers_refuse_oversized_text_they_are_handed_directly(tmp_path):
    text = "a: " + "b" * (MAX_CONFIG_BYTES + 1)
    for parse in (parse_yaml, parse_json):
        err = refused(parse, text, tmp_path / "x")
        assert "at most 1 MiB" in str(err)


def test_a_scripted_providers_script_file_gets_the_same_limits(tmp_path):
    from opencode_nb.provider.scripted import Scripted

    bomb = "".join(f"  {line}\n" for line in billion_laughs().splitlines())
    (tmp_path / "script.yaml").write_text("- text: hi\n" + bomb)
    err = refused(Scripted.from_config, "script.yaml", tmp_path)
    assert err.path == str(tmp_path / "script.yaml") and "values" in str(err)
    (tmp_path / "script.json").write_text("[" * 100_000 + "]" * 100_000)
    err = refused(Scripted.from_config, "script.json", tmp_path)
    assert "nested too deeply" in str(err)
    assert load_yaml("- {text: hi}\n", tmp_path / "s.yaml") == [{"text": "hi"}]
