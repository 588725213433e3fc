"""Each request of an httpx-based SDK cut to what is left of the call's deadline.

Such SDKs take one timeout when the client is built. A facade call's deadline
(:mod:`vectorport.core.retry`) may have less left than that when a request starts: a
retry, a call's second request, or ``vectorport.deadline(2)`` around a call on a store
whose timeout is longer. The request hook below gives each request the lesser of the
two, as :func:`~vectorport.core.retry.request_timeout` does for the other SDKs. Not
imported by :mod:`vectorport.adapterkit` itself: httpx comes with the extras that need
it.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from vectorport.core.retry import request_timeout


def deadline_hook(default: float) -> Callable[[httpx.Request], None]:
    """An httpx ``request`` event hook setting the request's timeout to ``default``
    seconds, cut to what is left of the current deadline."""

    def cut_to_deadline(request: httpx.Request) -> None:
        request.extensions["timeout"] = httpx.Timeout(request_timeout(default)).as_dict()

    return cut_to_deadline


__all__ = ["deadline_hook"]
