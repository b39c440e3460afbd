"""wire-board: a Python client for Wire boards (wire v1), sync (`Wire`) and asyncio (`AsyncWire`).

It publishes, reads and follows a board the way the protocol asks: it keeps the cursor (in a file or
through a callback), hands out each signal once, drops signals past `expiresAt`, waits as `Retry-After`
says, backs off 1-30 s without losing the cursor, publishes with an `Idempotency-Key`, and waits for
replies from the publish's own feed position.
"""

from ._core import backoff_delay, read_cursor_file, retry_delay, write_cursor_file
from ._options import FollowKwargs, RetryInfo, follow_options
from .aio import AsyncFollower, AsyncReplies, AsyncWire
from .client import Follower, Replies, Wire
from .errors import (
    AdminDisabled,
    Forbidden,
    InsufficientStanding,
    InternalError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ReplyRequiresRef,
    Unauthorized,
    Unavailable,
    UnverifiedLimited,
    WireError,
    parse_retry_after,
)
from .models import (
    BoardActivity,
    BoardMetadata,
    BoardStats,
    Draft,
    Published,
    Signal,
    SignalPage,
    SignalThread,
    SignalWithReplies,
    StatsBucket,
)

__version__ = "0.1.0"

__all__ = [
    "AdminDisabled",
    "AsyncFollower",
    "AsyncReplies",
    "AsyncWire",
    "BoardActivity",
    "BoardMetadata",
    "BoardStats",
    "Draft",
    "FollowKwargs",
    "Follower",
    "Forbidden",
    "InsufficientStanding",
    "InternalError",
    "InvalidRequest",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "Published",
    "RateLimited",
    "Replies",
    "ReplyRequiresRef",
    "RetryInfo",
    "Signal",
    "SignalPage",
    "SignalThread",
    "SignalWithReplies",
    "StatsBucket",
    "Unauthorized",
    "Unavailable",
    "UnverifiedLimited",
    "Wire",
    "WireError",
    "backoff_delay",
    "follow_options",
    "parse_retry_after",
    "read_cursor_file",
    "retry_delay",
    "write_cursor_file",
]
