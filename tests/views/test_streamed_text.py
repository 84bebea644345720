"""Streamed text is split only where markdown cannot change any more."""

from __future__ import annotations

from opencode_nb.views.session import settled_boundary


def test_the_boundary_is_the_last_blank_line():
    text = "one\n\ntwo\n\nthree is still being writ"
    assert text[settled_boundary(text, 0):] == "three is still being writ"


def test_a_blank_line_inside_an_open_code_fence_is_not_a_boundary():
    text = "intro\n\n```python\nx = 1\n\ny = 2\n"
    assert settled_boundary(text, 0) == len("intro\n\n")


def test_a_closed_fence_settles_what_follows_it():
    text = "```\na\n\nb\n```\n\nafter\n\nnow"
    assert text[settled_boundary(text, 0):] == "now"


def test_scanning_resumes_from_an_earlier_boundary():
    text = "a\n\n```\ncode\n\nmore\n```\n\ntail"
    first = settled_boundary(text, 0)
    assert text[settled_boundary(text, first):] == "tail"
