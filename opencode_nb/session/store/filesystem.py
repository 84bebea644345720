"""Which filesystem a path lives on: local disk, or a network or FUSE filesystem where SQLite's WAL is unsafe.

Two sources, the kernel's own answer first:

- `statfs(2)`'s `f_type`, the filesystem's magic number. It is the truth for the path itself (a bind mount, a
  symlink into another mount or a mount namespace cannot mislead it), but says only "FUSE" for every FUSE
  filesystem and "NFS" for every NFS version. `os.statvfs` does not return it, so libc's `statfs` is called
  through ctypes.
- `/proc/mounts`: the mount with the longest mount point that is a prefix of the resolved path gives the type's
  name (`nfs4`, `fuse.sshfs`, `cifs`) and the mount point. It names what the magic cannot, and stands alone
  where `statfs` is not there (another libc) or answers a magic we do not know.

Only Linux answers either question; elsewhere the kind is `unknown` and the store keeps its usual mode.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Kind(StrEnum):
    """What the store's choice of journal depends on; the value is how a notice names it."""

    LOCAL = "local disk"
    NFS = "NFS"
    SMB = "CIFS/SMB"
    LUSTRE = "Lustre"
    GPFS = "GPFS"
    CEPHFS = "CephFS"
    FUSE = "FUSE"
    NETWORK = "a network filesystem"
    """AFS, 9p, GlusterFS, BeeGFS, OCFS2, GFS2 and the like: shared or remote, but none of the named ones."""
    UNKNOWN = "an unknown filesystem"

    @property
    def networked(self) -> bool:
        """Whether SQLite's WAL is unsafe here: its shared-memory index and its locks assume one local disk."""
        return self not in (Kind.LOCAL, Kind.UNKNOWN)


MAGICS: dict[int, Kind] = {
    0x6969: Kind.NFS,  # NFS_SUPER_MAGIC, every NFS version (EFS, Azure Files NFS, NetApp, …)
    0x517B: Kind.SMB,  # SMB_SUPER_MAGIC (the old smbfs)
    0xFF534D42: Kind.SMB,  # CIFS_SUPER_MAGIC
    0xFE534D42: Kind.SMB,  # SMB2_SUPER_MAGIC (the smb3 client)
    0x0BD00BD0: Kind.LUSTRE,  # LL_SUPER_MAGIC
    0x47504653: Kind.GPFS,  # "GPFS" (IBM Storage Scale)
    0x00C36400: Kind.CEPHFS,  # CEPH_SUPER_MAGIC (the kernel client; ceph-fuse answers FUSE)
    0x65735546: Kind.FUSE,  # FUSE_SUPER_MAGIC (sshfs, s3fs, gcsfuse, JuiceFS, bindfs, virtiofs, …)
    0x5346414F: Kind.NETWORK,  # AFS_SUPER_MAGIC (OpenAFS, kAFS)
    0x6B414653: Kind.NETWORK,  # AFS_FS_MAGIC
    0x01021997: Kind.NETWORK,  # V9FS_MAGIC (9p)
    0x19830326: Kind.NETWORK,  # BeeGFS
    0x7461636F: Kind.NETWORK,  # OCFS2_SUPER_MAGIC (a disk shared between hosts)
    0x01161970: Kind.NETWORK,  # GFS2_MAGIC
    0x20030528: Kind.NETWORK,  # PVFS2 / OrangeFS
    0xAAD7AAEA: Kind.NETWORK,  # PanFS
}
"""statfs magics of the filesystems where the store leaves WAL; any other magic is a local filesystem."""

LOCAL_MAGICS: dict[int, str] = {
    0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", 0x2FC12FC1: "zfs", 0x01021994: "tmpfs",
    0x794C7630: "overlay", 0xF2F52010: "f2fs", 0x4D44: "vfat", 0x5346544E: "ntfs", 0x858458F6: "ramfs",
}
"""Common local magics, only to name the type when `/proc/mounts` cannot."""

_FSTYPES: dict[str, Kind] = {
    "nfs": Kind.NFS, "nfs4": Kind.NFS, "cifs": Kind.SMB, "smb3": Kind.SMB, "smbfs": Kind.SMB,
    "lustre": Kind.LUSTRE, "gpfs": Kind.GPFS, "ceph": Kind.CEPHFS, "fuse": Kind.FUSE, "fuseblk": Kind.FUSE,
    "virtiofs": Kind.FUSE, "afs": Kind.NETWORK, "openafs": Kind.NETWORK, "9p": Kind.NETWORK,
    "beegfs": Kind.NETWORK, "ocfs2": Kind.NETWORK, "gfs2": Kind.NETWORK, "pvfs2": Kind.NETWORK,
    "panfs": Kind.NETWORK, "glusterfs": Kind.NETWORK,
}


@dataclass(frozen=True)
class Filesystem:
    """The filesystem a path is on, as found."""

    kind: Kind
    fstype: str
    """The type's own name (`nfs4`, `fuse.sshfs`, `ext4`), or `magic 0x…` when nothing named it."""
    mount_point: str | None
    """Where it is mounted, when `/proc/mounts` said."""

    def describe(self) -> str:
        """`NFS (nfs4)`, `FUSE (fuse.sshfs)`, `local disk (ext4)`."""
        return f"{self.kind.value} ({self.fstype})" if self.fstype else self.kind.value


def kind_of_magic(magic: int) -> Kind:
    """The kind a statfs `f_type` stands for; an unlisted magic is a local filesystem."""
    return MAGICS.get(magic & 0xFFFFFFFF, Kind.LOCAL)


def kind_of_fstype(fstype: str) -> Kind:
    """The kind a `/proc/mounts` type names: `fuse.<anything>` is FUSE, `ceph` CephFS, `ext4` local disk."""
    name = fstype.lower()
    if name.startswith("fuse."):
        # ceph-fuse and glusterfs are FUSE clients of network filesystems: FUSE either way, for the store
        return Kind.FUSE
    return _FSTYPES.get(name, Kind.LOCAL)


def mount_of(path: str, mounts: str) -> tuple[str, str] | None:
    """The (mount point, type) of the longest mount point that contains `path`, from `/proc/mounts` text.

    A later line with the same mount point wins: it is mounted over the earlier one.
    """
    best: tuple[str, str] | None = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = _unescape(fields[1])
        if not _contains(point, path):
            continue
        if best is None or len(point) >= len(best[0]):
            best = (point, fields[2])
    return best


def detect(path: str | Path, *, mounts: str | None = None,
           statfs: Callable[[Path], int | None] | None = None) -> Filesystem:
    """The filesystem `path` is on (a path not created yet: the one its nearest existing folder is on).

    Args:
        mounts: `/proc/mounts` text to use instead of the file (tests pass their own).
        statfs: what answers the statfs magic of a folder instead of the kernel (tests pass their own).
    """
    where = _real(Path(path))
    magic = (statfs or statfs_magic)(_existing(where))
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            mounts = ""
    mount = mount_of(str(where), mounts)
    point, fstype = mount if mount else (None, "")
    named = kind_of_fstype(fstype) if mount else None
    if magic is None:  # the mount line alone
        return Filesystem(named, fstype, point) if named is not None else Filesystem(Kind.UNKNOWN, "", None)
    magic &= 0xFFFFFFFF
    if magic in MAGICS:
        kind = kind_of_magic(magic)
        # the mount line names the type when it agrees with the magic ("nfs4" where the magic says only NFS)
        return Filesystem(kind, fstype if named is kind else f"magic {magic:#x}", point)
    if named is not None and named.networked and magic not in LOCAL_MAGICS:
        return Filesystem(named, fstype, point)  # a magic we do not know, on a mount whose type says network
    # local; the mount line may disagree (a local folder bound under a network mount point): statfs is right
    return Filesystem(Kind.LOCAL, fstype if named is Kind.LOCAL else LOCAL_MAGICS.get(magic, f"magic {magic:#x}"),
                      point)


class _Statfs(ctypes.Structure):
    # `f_type` is the first field of `struct statfs` on every Linux ABI (a `long`); the rest is room to spare
    _fields_ = [("f_type", ctypes.c_long), ("_rest", ctypes.c_byte * 256)]


def statfs_magic(path: Path) -> int | None:
    """The statfs `f_type` of `path`, or None where libc's `statfs` cannot be called (not Linux, or it failed)."""
    libc = _libc()
    if libc is None:
        return None
    buffer = _Statfs()
    try:
        if libc.statfs(os.fsencode(path), ctypes.byref(buffer)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return int(buffer.f_type) & 0xFFFFFFFF


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)  # the C library the interpreter runs on, glibc or musl
    except OSError:
        return None


def _real(path: Path) -> Path:
    """`path` with its existing part resolved (links followed), the part not created yet kept as written."""
    path = path.expanduser().absolute()
    existing = _existing(path)
    return existing.resolve() / path.relative_to(existing)


def _existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return path


def _contains(point: str, path: str) -> bool:
    return point == "/" or path == point or path.startswith(point.rstrip("/") + "/")


def _unescape(field: str) -> str:
    """`/proc/mounts` writes a space as `\\040`, a tab `\\011`, a newline `\\012` and a backslash `\\134`."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
