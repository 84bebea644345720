"""The live notebook: its cells through the extension or the file, cells the agent runs, and the journal undo reads."""
