"""opencode_nb: a Jupyter-native, multi-agent AI environment."""

__version__ = "0.1.0"
