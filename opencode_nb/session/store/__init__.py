"""Sessions, messages, parts and todos in one SQLite file per workspace.

Rows hold the whole model as JSON plus the few columns we query by. `SessionStore` is the one class callers
use; it is put together from modules with one job each:

- `connection`: a connection per thread, transactions, why WAL (every write is one transaction);
- `filesystem` / `journaling`: which filesystem the file is on, and so its journal mode (WAL on local disk, a
  rollback journal with queued writers on network and FUSE filesystems) and the notice that says so;
- `schema`: the tables and the migrations that bring an older file up to them;
- `reads` / `writes`: the queries, each half a base class of `SessionStore`;
- `checkpoints`: file checkpoints per turn, and the turns an undo hid;
- `owners`: the owner lock each open store holds, and finishing what a dead process left unfinished;
- `rows`: model to row text (surrogates mended, secrets redacted) and back.

`database` opens the file: it takes the owner lock, migrates, finalises leftovers, and releases the lock
last on `close()`. Inside the package, parts import `database.SessionStore`; this face is for callers
outside it (the tests build old files through `_MIGRATIONS`).
"""

from .database import _MIGRATIONS, INTERRUPTED, SCHEMA_VERSION, SessionStore

__all__ = ["INTERRUPTED", "SCHEMA_VERSION", "_MIGRATIONS", "SessionStore"]
