"""Slash commands: built-ins, configured and markdown commands, and their templates."""

from .builtin import builtin_commands
from .runner import CommandRunner, parse_slash
from .template import render_template, split_arguments

__all__ = ["CommandRunner", "builtin_commands", "parse_slash", "render_template", "split_arguments"]
