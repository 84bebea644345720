"""A word's value is what the program receives: quotes, escapes, ANSI-C strings and braces worked out as bash
does; expansions and globs are what the shell decides when the line runs."""

import pytest

from opencode_nb.tool.shell.parse import _parser
from opencode_nb.tool.shell.words import decode_ansi_c, words


def values(line: str) -> list[str | None]:
    source = line.encode()
    command = _parser().parse(source).root_node.named_children[0]
    return [w.value for child in command.named_children for w in words(child, source)]


@pytest.mark.parametrize("spelling", ['"rm"', "'rm'", "r''m", 'r""m', "\\rm", "r\\m", "$'rm'", "$'\\x72m'",
                                      "$'\\162m'", "$'\\u0072m'", '$"rm"', "\"r\"'m'", 'rm""'])
def test_every_spelling_of_a_word_has_the_same_value(spelling):
    assert values(f"{spelling} x") == ["rm", "x"]


def test_braces_expand_into_the_words_bash_makes():
    assert values("git {push,origin,main}") == ["git", "push", "origin", "main"]
    assert values("r{m,} x") == ["rm", "r", "x"]
    assert values("echo {1..3} a{b,c}d x{a..c..2}") == ["echo", "1", "2", "3", "abd", "acd", "xa", "xc"]
    assert values("echo '{a,b}' \\{a,b\\} {a} {}") == ["echo", "{a,b}", "{a,b}", "{a}", "{}"]


def test_a_word_an_expansion_decides_has_no_value():
    assert values('rm $x "$y" ${z:-a} $(pwd) `pwd` $((1)) a$x') == ["rm", None, None, None, None, None, None, None]


def test_unquoted_glob_characters_and_a_leading_tilde_are_noted():
    source = b"ls r? 'r?' r[m] ~/x '~'/x"
    command = _parser().parse(source).root_node.named_children[0]
    found = [w for child in command.named_children[1:] for w in words(child, source)]
    assert [w.glob for w in found] == [True, False, True, False, False]
    assert [w.tilde for w in found] == [False, False, False, True, False]


def test_ansi_c_escapes_decode_as_bash_decodes_them():
    assert decode_ansi_c("a\\tb\\n\\x41\\101\\u00e9\\cA\\\\") == "a\tb\nAAé\x01\\"
