"""Named people for the test server: token authentication as usual, the person taken from a cookie.

A browser context that sets the cookie ``ocnb-e2e-user=alice`` (``Lab(user=...)``, ``Lab.open_page(user=...)``)
is Alice to the server, so ``/api/me``, the collaborators' cursors and whatever the extension reports to the
kernel name her: two contexts on one server are two people, as two people on a JupyterHub would be. A request
without the cookie is the anonymous person the server makes up for a token, as without this provider.

The cookie only names someone; it lets no one in: a request still needs the token (or the login cookie the
token earned), and a test server is bound to 127.0.0.1.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User

COOKIE = "ocnb-e2e-user"

# What a name may be: the cookie comes from the test itself, but a server should not echo arbitrary text.
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class CookieNamedIdentityProvider(IdentityProvider):
    """The server's usual token identity, renamed after the person the browser context's cookie names."""

    async def get_user(self, handler: Any) -> User | None:  # type: ignore[override]
        user = super().get_user(handler)
        if isinstance(user, Awaitable):
            user = await user
        if user is None:
            return None  # not authenticated: the cookie names no one who was not let in
        named = handler.get_cookie(COOKIE)
        if not named or not _NAME.match(named):
            return user
        # Capitalised like a person's name, so a page can show "Alice" where the username is "alice".
        shown = named.capitalize()
        return User(username=named, name=shown, display_name=shown, initials=shown[:1])
