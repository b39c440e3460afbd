"""The protocol's shapes as a Wire board sends them (docs/protocol.md), as pydantic v2 models.

Fields are snake_case in Python and keep the protocol's camelCase as aliases; `model_dump(by_alias=True,
mode="json")` gives back the JSON the board sent. Every model keeps fields it does not know
(`extra="allow"`), so a newer board's additions survive a round trip.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer


def _iso_ms(dt: datetime) -> str:
    """The board's own time format: ISO 8601 UTC with milliseconds and `Z`."""
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


Timestamp = Annotated[datetime, PlainSerializer(_iso_ms, return_type=str, when_used="json")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class Signal(_Model):
    """A signal as the board emits it (the spec's "Signal (emitted)"): every field, in the board's order."""

    id: str
    uri: str
    origin: str
    origin_name: str | None = Field(alias="originName")
    origin_uri: str = Field(alias="originUri")
    origin_verified: bool = Field(alias="originVerified")
    type: str
    tags: list[str]
    #: The published body verbatim, with `$type` and `$tags` normalised in and `$ttl`, `$refId` removed.
    payload: dict[str, Any]
    ttl: int
    boost_bits: int = Field(alias="boostBits")
    pinned: bool
    ref_id: str | None = Field(alias="refId")
    ref_uri: str | None = Field(alias="refUri")
    created_at: Timestamp = Field(alias="createdAt")
    expires_at: Timestamp = Field(alias="expiresAt")

    @property
    def text(self) -> str | None:
        """The payload's `text`, when it is a string (the common case)."""
        t = self.payload.get("text")
        return t if isinstance(t, str) else None


class Draft(_Model):
    """The flat publish body: `$`-keys are the envelope, every other key is payload (kept as extra fields)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=False)

    type: str = Field(alias="$type")
    tags: list[str] | None = Field(default=None, alias="$tags")
    ttl: int | None = Field(default=None, alias="$ttl")
    ref_id: str | None = Field(default=None, alias="$refId")

    def body(self) -> dict[str, Any]:
        """The JSON object to POST: the envelope under its `$` names, then the payload keys."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Published(_Model):
    """`POST /sw/signals`: the accepted signal and its feed position (`cursor`, a Wire extension)."""

    ok: bool = True
    signal: Signal
    cursor: int | None = None


class SignalPage(_Model):
    """`GET /sw/signals`: one page, oldest first, and where to read on from."""

    signals: list[Signal]
    next_cursor: int = Field(alias="nextCursor")
    #: Wire extension: a scan bound stopped this page short; read on from `next_cursor` at once.
    partial: bool = False
    server_now: Timestamp | None = Field(default=None, alias="serverNow")


class SignalWithReplies(_Model):
    """`GET /sw/signals/{id}`: the signal and its direct replies, oldest first."""

    signal: Signal
    replies: list[Signal]
    server_now: Timestamp | None = Field(default=None, alias="serverNow")


class SignalThread(_Model):
    """`GET /sw/signals/{id}/thread`: the root and every descendant, oldest first."""

    signals: list[Signal]


class BoardStats(_Model):
    active_signals: int = Field(alias="activeSignals")
    active_identities: int = Field(alias="activeIdentities")
    recent_pollers: int = Field(alias="recentPollers")


class BoardMetadata(_Model):
    """`GET /sw/wire`: the board and its live counts."""

    uri: str
    authority: str
    name: str
    description: str | None = None
    allowed_signal_types: list[str] | None = Field(default=None, alias="allowedSignalTypes")
    stats: BoardStats


class StatsBucket(_Model):
    at: Timestamp
    signals: int
    identities: int


class BoardActivity(_Model):
    """`GET /sw/stats`: activity in time buckets, oldest first, and the live counts."""

    bucket_seconds: int = Field(alias="bucketSeconds")
    generated_at: Timestamp = Field(alias="generatedAt")
    current: BoardStats
    buckets: list[StatsBucket]
