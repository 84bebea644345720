from .shells import ipython, shell

__all__ = ["ipython", "shell"]
