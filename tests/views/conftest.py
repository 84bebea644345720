from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import ipywidgets as widgets
import pytest
from comm.base_comm import BaseComm


class RecordingComm(BaseComm):
    """Stands in for the front end's end of every widget comm, and counts what the kernel sends."""

    sent: ClassVar[list[dict[str, Any]]] = []

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                    **keys: Any) -> None:
        RecordingComm.sent.append({"type": msg_type, "data": data})


@pytest.fixture(autouse=True)
def recording_comm() -> Iterator[list[dict[str, Any]]]:
    """Widgets get a recording comm, as ipywidgets' own tests do."""
    import comm

    old = comm.create_comm
    comm.create_comm = RecordingComm  # type: ignore[assignment]
    widgets.Widget.close_all()
    RecordingComm.sent = []
    yield RecordingComm.sent
    widgets.Widget.close_all()
    comm.create_comm = old


def click(button: widgets.Button) -> None:
    """Exactly what the front end sends for a click."""
    button._handle_msg({"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []})
