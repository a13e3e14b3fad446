"""Credentials: how the Azure layer gets a bearer token.

Against Azure, ``DefaultAzureCredential`` (built by ``clients.resolve_credential`` when the
config carries none): workload identity in a cluster, ``az login`` on a laptop. Against a
local stand-in that accepts any token (``karp-sim arm``), ``StaticCredential`` hands out a
fixed token without touching the network or the filesystem.
"""

from __future__ import annotations

import time
from typing import Any

from azure.core.credentials import AccessToken

__all__ = ["StaticCredential"]


class StaticCredential:
    """A fixed bearer token, valid for an hour from each call: for the ARM emulator and tests only."""

    def __init__(self, token: str = "karp-offline") -> None:
        self._token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(self._token, int(time.time()) + 3600)

    def __repr__(self) -> str:
        return "StaticCredential()"  # never the token
