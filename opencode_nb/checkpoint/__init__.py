"""File checkpoints around each turn, so an undo takes back what the agents changed in files, and redo puts
it back.

Why `git` plumbing rather than a library (dulwich, pygit2): git is on every machine that has a project to
work in, so it adds no dependency (pygit2 wheels pull libgit2; dulwich is pure Python and far slower at
hashing); its index is stat-cached, so recording an unchanged tree of 10,000 files costs a few
milliseconds of `lstat` calls instead of reading every file; and it applies `.gitignore` files exactly as
the person's own git does, nested ones and negations included. The store is a git dir of its own in the
data dir (`<data dir>/checkpoints/<project>.git`) whose work tree is the project, with its own index: the
person's `.git`, index, refs and hooks are never read or written, and a project that is not a git
repository works the same.

When `git` is missing, the project is read-only, or the store cannot be written, checkpoints are off:
`ws.checkpoints.available` is False and `why_not` (also in `ws.warnings`) says why. Undo then still takes back
the history (and, in a kernel, cells and bindings), and its report says files were not undone.

Modules: `records` (what is reported), `store` (the git dir), `restore` (writing files back through `fs`,
never through a link), `ignores` (the ignore rules as the person left them), `aside` (big files copied aside before
a file tool writes them), `service` (`Checkpoints`: recording per turn, listing, diffs, retention), `undo`
(taking turns back and putting them back), `text` (listings, and the redaction every diff passes).
"""
