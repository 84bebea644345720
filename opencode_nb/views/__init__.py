"""What a person sees of sessions: ipywidgets views of bus events, and static transcripts.

Views render and forward replies; they decide nothing. Importing this package imports ipywidgets, so the
kernel extension imports it only when the first view is made.
"""

from .hub import ViewHub
from .session import SessionView
from .transcript import transcript_bundle

__all__ = ["SessionView", "ViewHub", "transcript_bundle"]
