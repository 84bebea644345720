"""The package's version, in a module of its own so that any part can name it without importing the package's
front (`opencode_nb/__init__.py`), which reaches up to the kernel and the workspace."""

__version__ = "0.1.0"
