"""Shared mappings a fork inherits are made its own: a write in the child no longer reaches the parent's pages
or the file behind them. Without that step the same write does reach them, which is why it exists."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from opencode_nb.sandbox import mappings
from opencode_nb.sandbox.linux import load

from .forked import in_child

libc = load()
pytestmark = pytest.mark.skipif(libc is None, reason="Linux only")


def write_in_child(anon: mmap.mmap, memmap: np.memmap, *, privatise: bool) -> object:
    def run() -> object:
        lost = mappings.privatise(libc) if privatise else []
        anon[0] = 255
        memmap[0] = 255
        memmap.flush()
        return [anon[0], int(memmap[0]), lost]
    return in_child(run)


@pytest.mark.parametrize("privatise", [True, False])
def test_a_write_through_an_inherited_shared_mapping_reaches_the_parent_only_when_not_made_private(tmp_path,
                                                                                                   privatise):
    anon = mmap.mmap(-1, 4096)
    memmap = np.memmap(tmp_path / "data.bin", dtype="uint8", mode="w+", shape=(4096,))
    memmap.flush()
    seen_by_child = write_in_child(anon, memmap, privatise=privatise)
    assert seen_by_child == [255, 255, []]  # the child sees its own write either way
    reached = [anon[0], int(memmap[0]), (tmp_path / "data.bin").read_bytes()[0]]
    assert reached == ([0, 0, 0] if privatise else [255, 255, 255])


def test_the_maps_text_is_read_for_shared_mappings_only():
    text = ("7f00-7f10 rw-s 00001000 00:1a 42 /dev/shm/psm_abc\n"
            "7f10-7f20 rw-p 00000000 00:00 0 \n"
            "7f20-7f30 r--s 00000000 00:01 7 /dev/zero (deleted)\n")
    found = mappings.shared_mappings(text)
    assert [(m.start, m.length, m.offset, m.inode, m.path) for m in found] == [
        (0x7F00, 0x10, 0x1000, 42, "/dev/shm/psm_abc"), (0x7F20, 0x10, 0, 7, "/dev/zero (deleted)")]
