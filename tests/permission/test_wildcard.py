import pytest

from opencode_nb.permission import wildcard_match
from opencode_nb.permission.wildcard import compile_pattern


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("", "*", True),
        ("anything at all", "*", True),
        ("ls", "ls*", True),
        ("lstmeval", "ls*", True),
        ("ls", "ls *", True),
        ("ls ", "ls *", True),
        ("ls -la", "ls *", True),
        ("ls a b", "ls *", True),
        ("lstmeval", "ls *", False),
        ("git", "git * *", False),
        ("git status", "git * *", True),
        ("git a b", "git * *", True),
        ("git", "git *", True),
        ("a.py", "?.py", True),
        ("ab.py", "?.py", False),
        (".py", "?.py", False),
        ("a/b", "a?b", True),
        ("a\nb", "a?b", True),
    ],
)
def test_star_question_mark_and_the_optional_trailing_space_star(text, pattern, expected):
    assert wildcard_match(text, pattern) is expected


def test_only_the_final_space_star_is_optional():
    assert not wildcard_match("git push", "git * --force *")
    assert wildcard_match("git push --force", "git * --force *")


def test_star_crosses_slashes_it_is_not_a_path_glob():
    assert wildcard_match("src/a/b/c.ts", "src/*")
    assert wildcard_match("/home/me/data/x.csv", "*/data/*")
    assert not wildcard_match("lib/src/a.ts", "src/*")


def test_star_and_the_optional_tail_cross_newlines():
    assert wildcard_match("line1\nline2", "line1*")
    assert wildcard_match("python -c 'a'\nrm -rf /", "python *")


def test_a_trailing_newline_is_not_forgiven():
    assert not wildcard_match("ls\n", "ls")


@pytest.mark.parametrize("meta", [".", "+", "(", ")", "[", "]", "$", "^", "|", "{", "}"])
def test_regex_metacharacters_are_literal(meta):
    assert wildcard_match(f"a{meta}b", f"a{meta}b")
    assert not wildcard_match("axb", f"a{meta}b")


def test_regex_syntax_means_nothing_special():
    assert not wildcard_match("aaa", "a+")
    assert not wildcard_match("a", "[ab]")
    assert not wildcard_match("ab", "a{2}")
    assert wildcard_match("notes.(draft).md", "notes.(*).md")
    assert not wildcard_match("notesX(draft)Xmd", "notes.(*).md")


def test_the_whole_text_must_match():
    assert not wildcard_match("rm -rf /", "rm")
    assert not wildcard_match("xls", "ls")
    assert not wildcard_match("ls -la", "ls")


def test_backslashes_count_as_slashes_on_both_sides():
    assert wildcard_match("src\\a\\b.py", "src/*")
    assert wildcard_match("src/a.py", "src\\*")
    assert wildcard_match("C:\\data\\x.csv", "C:/data/*")


def test_patterns_are_compiled_once():
    assert compile_pattern("git push *") is compile_pattern("git push *")
