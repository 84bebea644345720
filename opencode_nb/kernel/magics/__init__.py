"""`%agent` and `%%agent` (`agent.py`; the subcommands, each declared once, in `subcommands.py`), and what
they need: reading the cell (`transform`, `interpolate`), completion, the notebook's settings, the checks
before a prompt (`preflight`), keeping the configuration current (`reconfig`), what the subcommands print
(`listing`), and the terminal's plain-text twin."""
