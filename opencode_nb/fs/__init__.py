"""How the product itself writes into the project and its own folders: never through a link.

`writer.py` writes, makes and removes entries under a root; `move.py` moves one between two trees; both go
through `walk.py`'s walk by folder descriptors with no-follow.
"""

from opencode_nb.fs.move import move
from opencode_nb.fs.writer import (
    Refused,
    create_file,
    kind,
    lstat,
    make_dir,
    make_symlink,
    open_file,
    read_file,
    remove,
    write_file,
)

__all__ = ["Refused", "create_file", "kind", "lstat", "make_dir", "make_symlink", "move", "open_file", "read_file",
           "remove", "write_file"]
