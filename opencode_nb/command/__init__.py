"""Slash commands: built-ins, configured and markdown commands, and their templates."""

from .runner import parse_slash
from .template import render_template

__all__ = ["parse_slash", "render_template"]
