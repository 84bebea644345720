"""Shared memory a fork inherits, made the child's own before its code runs.

A copy-on-write fork copies private pages only. A `MAP_SHARED` mapping (an `np.memmap(mode="r+")`, a
`multiprocessing.shared_memory` block, an `mmap` of a file, a SysV segment) is the same pages in the kernel
and in the child, so a write in the child is a write to the person's data, and no namespace changes that.
Each one is replaced, at the same address, by a private mapping with the same contents:

- of a file that is still there (the same device and inode): the file mapped again `MAP_PRIVATE` from a
  read-only descriptor. Pages are read from the page cache when touched and copied when written, so a
  gigabyte memmap costs nothing until used, and the file can never be written through it.
- of anything else (anonymous shared memory, a deleted file, a memfd): its bytes copied into anonymous
  private memory, up to `COPY_LIMIT`; a larger one is unmapped, and reading it then fails loudly.

Mappings the kernel made inaccessible (`---s`) are unmapped without reading. The child's view is the
mapping at the instant of the fork, as for every other page it has.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from dataclasses import dataclass

from .linux import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, PROT_EXEC, PROT_READ, PROT_WRITE, Libc

COPY_LIMIT = 256 * 2**20
"""The largest shared mapping without a file behind it that is copied rather than removed."""


@dataclass(frozen=True)
class Shared:
    start: int
    end: int
    prot: int
    offset: int
    device: tuple[int, int]
    inode: int
    path: str

    @property
    def length(self) -> int:
        return self.end - self.start


def shared_mappings(maps: str) -> list[Shared]:
    """The `MAP_SHARED` mappings in a /proc/PID/maps text."""
    found = []
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 5 or len(fields[1]) < 4 or fields[1][3] != "s":
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        perms = fields[1]
        prot = (PROT_READ if perms[0] == "r" else 0) | (PROT_WRITE if perms[1] == "w" else 0) | (
            PROT_EXEC if perms[2] == "x" else 0)
        major, minor = (int(x, 16) for x in fields[3].split(":"))
        found.append(Shared(start, end, prot, int(fields[2], 16), (major, minor), int(fields[4]),
                            fields[5].strip() if len(fields) > 5 else ""))
    return found


def privatise(libc: Libc) -> list[str]:
    """Make every shared mapping of this process private; returns what could not be kept (for the notes)."""
    with open("/proc/self/maps") as file:
        mappings = shared_mappings(file.read())
    lost: list[str] = []
    for mapping in mappings:
        if mapping.prot & PROT_READ == 0:
            libc.munmap(mapping.start, mapping.length)
        elif not _remap_file(libc, mapping) and not _copy(libc, mapping):
            libc.munmap(mapping.start, mapping.length)
            lost.append(f"{mapping.path or 'anonymous shared memory'} ({mapping.length // 2**20} MB)")
    return lost


def _remap_file(libc: Libc, mapping: Shared) -> bool:
    path = mapping.path
    if not path.startswith("/") or path.endswith("(deleted)"):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if info.st_ino != mapping.inode or (os.major(info.st_dev), os.minor(info.st_dev)) != mapping.device:
            return False
        libc.mmap(mapping.start, mapping.length, mapping.prot, MAP_PRIVATE | MAP_FIXED, fd, mapping.offset)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _copy(libc: Libc, mapping: Shared) -> bool:
    if mapping.length > COPY_LIMIT:
        return False
    try:
        contents = ctypes.string_at(mapping.start, mapping.length)
        libc.mmap(mapping.start, mapping.length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
                  -1, 0)
        ctypes.memmove(mapping.start, contents, mapping.length)
        if mapping.prot != PROT_READ | PROT_WRITE:
            with contextlib.suppress(AttributeError):
                libc.lib.mprotect(ctypes.c_void_p(mapping.start), mapping.length, mapping.prot)
        return True
    except OSError:
        return False
