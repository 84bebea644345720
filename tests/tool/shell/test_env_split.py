"""`env -S` text is cut into the words env itself would pass on, so the command it runs is the one checked."""

import shutil
import subprocess

import pytest

from opencode_nb.tool.shell.env_split import SplitError, split_string

CASES = {
    "rm\\_x": ["rm", "x"], "a\\_b c": ["a", "b", "c"], 'a"b\\_c"d': ["ab cd"], "'x\\'y'": ["x'y"],
    "a #b": ["a"], "a\\cb c": ["a"], 'a""': ["a"], "a'b\\nc'": ["ab\\nc"], 'a"b\\nc"': ["ab\nc"],
    "x\\tb": ["x\tb"], "a  b\tc": ["a", "b", "c"], "'a b' \"c d\"": ["a b", "c d"], "a#b": ["a#b"],
    "rm \"x\"\\c ignored": ["rm", "x"],
}


@pytest.mark.parametrize("text", list(CASES))
def test_text_is_cut_into_words_as_env_cuts_it(text, tmp_path):
    assert split_string(text) == CASES[text]
    if shutil.which("env") is None:
        return
    show = tmp_path / "show"
    show.write_text("#!/bin/sh\nprintf '%s\\0' \"$@\"\n")
    show.chmod(0o755)
    ran = subprocess.run(["env", "-S", f"{show} {text}"], capture_output=True, text=True, check=True)
    assert ran.stdout.split("\0")[:-1] == CASES[text]  # env agrees


@pytest.mark.parametrize("text", ["a\\qb", '"open', "'open", "$HOME rm x"])
def test_text_env_refuses_is_an_error(text):
    with pytest.raises(SplitError):
        split_string(text)
    if shutil.which("env") is not None:
        assert subprocess.run(["env", "-S", f"true {text}"], capture_output=True).returncode != 0


def test_a_variable_makes_the_words_known_only_when_the_line_runs():
    assert split_string("${CMD} x") is None
