"""Helpers the tools share (shell parsing, glob patterns, ignore rules, text files, processes); no tool lives here."""
