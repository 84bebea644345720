"""Cutting a line for a person: at a word boundary, with an ellipsis, never past the width."""

from __future__ import annotations

import pytest

from opencode_nb.views.shorten import shorten

NOTE = ("Shell commands run without an OS sandbox here: bubblewrap (bwrap) is not installed. To confine them, "
        "install bubblewrap.")


def test_text_that_fits_is_left_whole():
    assert shorten("short and sweet", 15) == "short and sweet"


def test_a_cut_ends_at_the_last_whole_word_and_says_more_followed():
    cut = shorten(NOTE, 90)
    assert cut == "Shell commands run without an OS sandbox here: bubblewrap (bwrap) is not installed. To…"
    assert len(cut) <= 90


@pytest.mark.parametrize("width", range(2, len(NOTE)))
def test_at_every_width_the_cut_is_at_most_the_width_ends_in_an_ellipsis_and_splits_no_word(width):
    cut = shorten(NOTE, width)
    assert len(cut) <= width and cut.endswith("…")
    kept = cut.removesuffix("…")
    assert NOTE.startswith(kept)
    if " " in kept:  # more than the first word: it ends where a word of the text ends
        assert NOTE[len(kept)] in " ,.;:"


def test_a_word_that_ends_exactly_at_the_room_is_kept_whole():
    assert shorten("alpha beta gamma", 11) == "alpha beta…"


def test_punctuation_before_the_cut_gives_way_to_the_ellipsis():
    assert shorten("first, second, third", 16) == "first, second…"


def test_a_long_run_without_spaces_is_cut_inside_rather_than_dropped():
    path = "see /home/person/projects/" + "deep/" * 20 + "file.py"
    cut = shorten(path, 40)
    assert cut == path[:39] + "…"


def test_a_width_with_no_room_for_text_and_ellipsis_is_refused_with_the_minimum():
    with pytest.raises(ValueError, match="at least 2"):
        shorten("anything", 1)
