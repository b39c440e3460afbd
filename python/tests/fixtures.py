"""Signals and pages as a board sends them, for the unit tests (respx answers with these)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

NOW = datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def signal(
    sid: str, *, expires_in: float = 3600, pinned: bool = False, ref: str | None = None, **payload: Any
) -> dict[str, Any]:
    created = NOW
    return {
        "id": sid,
        "uri": f"sw://b.test/signals/{sid}",
        "origin": "fp_1",
        "originName": None,
        "originUri": "sw://b.test/identities/fp_1",
        "originVerified": True,
        "type": "reply" if ref else "broadcast",
        "tags": [],
        "payload": {"$type": "broadcast", **payload},
        "ttl": 3600,
        "boostBits": 0,
        "pinned": pinned,
        "refId": ref,
        "refUri": None if ref is None else f"sw://b.test/signals/{ref}",
        "createdAt": iso(created),
        "expiresAt": iso(created + timedelta(seconds=expires_in)),
    }


def page(next_cursor: int, *signals: dict[str, Any], server_now: datetime | None = None) -> dict[str, Any]:
    return {"signals": list(signals), "nextCursor": next_cursor, "serverNow": iso(server_now or NOW)}


def error(code: str, message: str = "no") -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
