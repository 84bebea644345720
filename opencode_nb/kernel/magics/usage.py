"""How a mistake in an `%agent` line or `%%agent` cell is shown: as prose that wraps between words.

IPython prints a `UsageError` as one plain line on stderr, and JupyterLab styles stderr's `pre` with
`word-break: break-all`, so a long message breaks mid-word ("sesi / ons"). The magics mark the usage errors
they raise (`mark_ours`, in `usage_errors()`), and a custom exception handler shows a marked one as
`prose_error_bundle`: the HTML wraps between words on the page's error background, the plain twin is IPython's
own line (`UsageError: ...`).

The handler is IPython's only one (`set_custom_exc` is global): any other usage error, another magic's or
IPython's, is shown by IPython's own `showtraceback`, as it would be without the extension, and a handler set
before ours still gets the exceptions it asked for. The cell fails as before: IPython records the exception
as the cell's error whatever the handler shows, so the execute reply says `status: error` with
`ename: UsageError`, and Run All (stop on error) stops at the cell. In a terminal nothing changes: its
stderr does not break words.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

from IPython.core.error import UsageError

MARK = "_opencode_nb_prose"
"""The attribute that marks a usage error raised by the `%agent` magics. An attribute, not a subclass: the
reply's `ename` stays `UsageError`, and IPython still shows a marked error as its own once the handler is gone."""


def mark_ours(error: UsageError) -> UsageError:
    setattr(error, MARK, True)
    return error


def is_ours(error: BaseException) -> bool:
    return isinstance(error, UsageError) and getattr(error, MARK, False) is True


def show_ours_as_prose(shell: Any, display: Callable[[dict[str, str]], None]) -> Callable[[], None]:
    """Install the handler on `shell`; returns what puts back the handler that was there before."""
    previous_types: tuple[type[BaseException], ...] = shell.custom_exceptions
    previous_handler = shell.CustomTB

    def handler(self: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None,
                tb_offset: int | None = None) -> None:
        from ...views.prose import prose_error_bundle

        if is_ours(value):
            display(prose_error_bundle(f"UsageError: {value}"))
        elif previous_types and isinstance(value, previous_types):
            previous_handler(etype, value, tb, tb_offset=tb_offset)
        else:  # what `run_code` does with an exception no handler asked for
            self.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)

    shell.set_custom_exc((*previous_types, UsageError), handler)
    installed = shell.CustomTB

    def restore() -> None:
        if shell.CustomTB is installed:  # else someone replaced ours since: theirs stays
            shell.custom_exceptions, shell.CustomTB = previous_types, previous_handler

    return restore
