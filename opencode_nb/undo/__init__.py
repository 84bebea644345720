"""One undo model for everything a turn changed: each kind of change undoes and redoes itself, one engine walks
a turn's changes in order and asks about conflicts, and every surface renders the one `Outcome` it returns."""
