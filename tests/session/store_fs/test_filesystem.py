"""Each kind of filesystem told from its statfs answer and from a /proc/mounts text."""

from __future__ import annotations

import pytest

from opencode_nb.session.store.filesystem import Kind, detect, kind_of_fstype, kind_of_magic, mount_of

MOUNTS = """\
overlay / overlay rw,relatime,lowerdir=/l,upperdir=/u,workdir=/w 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
/dev/sda1 /srv ext4 rw,relatime 0 0
fs-12.efs.eu-west-1.amazonaws.com:/ /home nfs4 rw,relatime,vers=4.1,hard,proto=tcp 0 0
nfs.example.org:/export/home/ann /home/ann nfs rw,vers=3,hard,proto=tcp 0 0
//files.example.org/share /mnt/share cifs rw,vers=3.1.1,sec=ntlmssp 0 0
//files.example.org/smb3 /mnt/smb3 smb3 rw,vers=3.1.1 0 0
10.0.0.1@tcp:/lustre /lustre lustre rw,flock 0 0
gpfs0 /gpfs gpfs rw,relatime 0 0
10.0.0.2:6789:/ /cephfs ceph rw,name=admin 0 0
ceph-fuse /cephfuse fuse.ceph-fuse rw,nosuid,nodev,allow_other 0 0
ann@host:/data /home/ann/remote fuse.sshfs rw,nosuid,nodev,user_id=1000 0 0
/tmp/src /tmp/bind fuse rw,nosuid,nodev,allow_other 0 0
AFS /afs afs rw,relatime 0 0
tmpfs /home/ann/local\\040disk tmpfs rw,nosuid 0 0
"""

def NO_STATFS(_: object) -> None:
    """statfs not there (another libc, another OS)."""


STATFS = [  # (f_type, kind): the magic numbers of linux/magic.h and the filesystems' own headers
    (0x6969, Kind.NFS),
    (0x517B, Kind.SMB),
    (0xFF534D42, Kind.SMB),
    (0xFE534D42, Kind.SMB),
    (0x0BD00BD0, Kind.LUSTRE),
    (0x47504653, Kind.GPFS),
    (0x00C36400, Kind.CEPHFS),
    (0x65735546, Kind.FUSE),
    (0x5346414F, Kind.NETWORK),
    (0x01021997, Kind.NETWORK),
    (0xEF53, Kind.LOCAL),
    (0x58465342, Kind.LOCAL),
    (0x01021994, Kind.LOCAL),
    (0x794C7630, Kind.LOCAL),
]


@pytest.mark.parametrize(("magic", "kind"), STATFS)
def test_each_kind_is_told_from_its_statfs_magic(magic: int, kind: Kind) -> None:
    assert kind_of_magic(magic) is kind
    assert detect("/nowhere/store.sqlite", mounts="", statfs=lambda _: magic).kind is kind


def test_a_magic_read_back_as_a_negative_long_still_names_its_kind() -> None:
    assert kind_of_magic(0xFF534D42 - (1 << 32)) is Kind.SMB  # CIFS on a 32-bit `long`


@pytest.mark.parametrize(("path", "kind", "fstype", "point"), [
    ("/home/bob/.local/share/opencode_nb/sessions/p.sqlite", Kind.NFS, "nfs4", "/home"),
    ("/home/ann/.local/share/opencode_nb/sessions/p.sqlite", Kind.NFS, "nfs", "/home/ann"),
    ("/mnt/share/x.sqlite", Kind.SMB, "cifs", "/mnt/share"),
    ("/mnt/smb3/x.sqlite", Kind.SMB, "smb3", "/mnt/smb3"),
    ("/lustre/u/x.sqlite", Kind.LUSTRE, "lustre", "/lustre"),
    ("/gpfs/u/x.sqlite", Kind.GPFS, "gpfs", "/gpfs"),
    ("/cephfs/u/x.sqlite", Kind.CEPHFS, "ceph", "/cephfs"),
    ("/cephfuse/u/x.sqlite", Kind.FUSE, "fuse.ceph-fuse", "/cephfuse"),
    ("/home/ann/remote/x.sqlite", Kind.FUSE, "fuse.sshfs", "/home/ann/remote"),
    ("/tmp/bind/x.sqlite", Kind.FUSE, "fuse", "/tmp/bind"),
    ("/afs/cell/u/x.sqlite", Kind.NETWORK, "afs", "/afs"),
    ("/home/ann/local disk/x.sqlite", Kind.LOCAL, "tmpfs", "/home/ann/local disk"),
    ("/srv/x.sqlite", Kind.LOCAL, "ext4", "/srv"),
    ("/var/lib/x.sqlite", Kind.LOCAL, "overlay", "/"),
])
def test_each_kind_is_told_from_proc_mounts_by_the_longest_mount_point(
        path: str, kind: Kind, fstype: str, point: str) -> None:
    assert mount_of(path, MOUNTS) == (point, fstype)
    assert kind_of_fstype(fstype) is kind
    found = detect(path, mounts=MOUNTS, statfs=NO_STATFS)  # no statfs answer: the mount line alone
    assert (found.kind, found.fstype, found.mount_point) == (kind, fstype, point)


def test_a_mount_point_that_only_shares_a_prefix_does_not_contain_the_path() -> None:
    assert mount_of("/home/annex/x.sqlite", MOUNTS) == ("/home", "nfs4")


def test_a_later_mount_over_the_same_point_wins() -> None:
    assert mount_of("/data/x", "a /data ext4 rw 0 0\nb /data nfs4 rw 0 0\n") == ("/data", "nfs4")


def test_the_magic_is_believed_over_the_mount_line_and_names_the_type_where_they_agree() -> None:
    nfs = detect("/home/bob/x.sqlite", mounts=MOUNTS, statfs=lambda _: 0x6969)
    assert (nfs.kind, nfs.fstype, nfs.describe()) == (Kind.NFS, "nfs4", "NFS (nfs4)")
    # a bind mount of a local folder under an NFS mount point: statfs sees ext4
    local = detect("/home/bob/x.sqlite", mounts=MOUNTS, statfs=lambda _: 0xEF53)
    assert (local.kind, local.fstype) == (Kind.LOCAL, "ext4")
    fuse = detect("/srv/x.sqlite", mounts=MOUNTS, statfs=lambda _: 0x65735546)
    assert (fuse.kind, fuse.fstype) == (Kind.FUSE, "magic 0x65735546")


def test_an_unknown_magic_on_a_network_mount_line_is_that_network_filesystem() -> None:
    found = detect("/gpfs/u/x.sqlite", mounts=MOUNTS, statfs=lambda _: 0x12345678)
    assert (found.kind, found.fstype) == (Kind.GPFS, "gpfs")


def test_no_answer_from_either_source_is_unknown_and_counts_as_local() -> None:
    found = detect("/x.sqlite", mounts="", statfs=NO_STATFS)
    assert found.kind is Kind.UNKNOWN and not found.kind.networked


def test_this_machines_temporary_folder_is_found_by_statfs(tmp_path) -> None:
    found = detect(tmp_path / "not" / "yet" / "store.sqlite")  # a file not created yet: its nearest folder
    assert found.kind is Kind.LOCAL
    assert found.fstype  # named by /proc/mounts, or by its magic
