"""Fix and Explain on a failed cell: what the kernel records when a cell raises, the context the model is given
about it, and the runs of `%agent fix [CELL]` / `%agent explain [CELL]`.

- `failures.py`: every cell that raised (`FailureLog`, on `NotebookAgent.failures`): `last()`, `find(cell)`;
- `saved.py`: an error this kernel did not see, read from the cell's saved error output (`adopt_saved`);
- `frames.py`: the traceback reduced to the person's frames; `reads.py`: the names a cell reads and binds;
- `bound.py`: which cell last bound a name; `versions.py`: the installed package of a module;
- `context.py`: `context_text(agent, failure)` (or `context_for(agent, cell)`), the block the model reads;
- `overlay.py`: the rules an explanation answers under; `runs.py`: the two subcommands' runs;
- `review.py`: a Fix reviewed in place waits in its cell until its changes are decided.

Nothing is imported here: the record is made when the extension loads, which must stay fast, and the context
and the runs (the describer, the notebook tools' formatting) are imported when a Fix or Explain first runs.
"""
