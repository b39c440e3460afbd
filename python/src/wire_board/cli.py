"""`python -m wire_board follow|publish`: the `wire` command line's two HTTP commands, for scripts.

`follow` prints one JSON signal per line (NDJSON) and keeps its cursor in `--cursor-file`; `publish`
prints the board's answer. Settings as `wire`'s: WIRE_URL (default http://localhost:4000; several
separated by commas) and WIRE_TOKEN, overridden by --url and --token. Exit 0 on success and when
`follow` is stopped with Ctrl-C or SIGTERM, 1 on an error (`wire: <code> (<status>): <message>`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any

from ._options import RetryInfo
from .client import Wire
from .errors import WireError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m wire_board", description="Follow or publish to a Wire board.")
    p.add_argument(
        "--url", default=os.environ.get("WIRE_URL", "http://localhost:4000"), help="board URL(s), comma-separated"
    )
    p.add_argument("--token", default=os.environ.get("WIRE_TOKEN"), help="bearer token (WIRE_TOKEN)")
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("follow", help="follow the board live, one JSON signal per line")
    f.add_argument("-t", "--type")
    f.add_argument("--tag", action="append", help="a tag (repeat, or comma-separate: any of them)")
    f.add_argument("--origin")
    f.add_argument("-q", "--q")
    f.add_argument("--since")
    f.add_argument("--ref", help="only direct replies to this signal")
    f.add_argument("--include-expired", action="store_true")
    f.add_argument("--cursor", type=int, help="start after this feed position")
    f.add_argument("--cursor-file", help="resume from, and write after every page, the cursor in this file")
    f.add_argument("--from", dest="start", choices=["newest-page", "head"], default="newest-page")

    s = sub.add_parser("publish", help="publish one signal and print the answer")
    s.add_argument("text", nargs="?", help="the payload's text; '-' reads the flat JSON signal from standard input")
    s.add_argument("-t", "--type")
    s.add_argument("--tag", action="append")
    s.add_argument("--ttl", type=int)
    s.add_argument("--ref", help="$refId: the signal this replies to")
    s.add_argument(
        "-f", "--field", action="append", default=[], help="a payload field key=value (value: JSON, else text)"
    )
    s.add_argument("--idempotency-key")
    return p


def _tags(values: list[str] | None) -> list[str] | None:
    return None if values is None else [t for v in values for t in v.split(",") if t.strip()]


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _follow(wire: Wire, a: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, _stop)

    def retry(r: RetryInfo) -> None:
        print(f"wire: {r.error}; retrying in {r.delay:.1f} s ({r.url})", file=sys.stderr)

    follower = wire.follow(
        type=a.type, tag=_tags(a.tag), origin=a.origin, q=a.q, since=a.since, ref=a.ref,
        include_expired=a.include_expired, cursor=a.cursor, cursor_file=a.cursor_file, start=a.start,
        on_retry=retry,
    )  # fmt: skip
    try:
        for s in follower:
            sys.stdout.write(json.dumps(s.model_dump(by_alias=True, mode="json"), ensure_ascii=False) + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    return 0


def _publish(wire: Wire, a: argparse.Namespace) -> int:
    body: dict[str, Any] = {}
    if a.text == "-" or (a.text is None and not sys.stdin.isatty()):
        raw = sys.stdin.read()
        if raw.strip() or a.text == "-":
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("standard input is not one JSON object")
    elif a.text is not None:
        body["text"] = a.text
    for kv in a.field:
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError(f"--field {kv!r}: expected key=value")
        try:
            body[k] = json.loads(v)
        except ValueError:
            body[k] = v
    envelope = {k: body.pop(k) for k in ("$type", "$tags", "$ttl", "$refId") if k in body}
    res = wire.publish(
        a.type or envelope.get("$type") or "broadcast",
        tags=_tags(a.tag) if a.tag else envelope.get("$tags"),
        ttl=a.ttl if a.ttl is not None else envelope.get("$ttl"),
        ref=a.ref or envelope.get("$refId"),
        idempotency_key=a.idempotency_key,
        payload=body,
    )
    print(json.dumps(res.model_dump(by_alias=True, mode="json"), ensure_ascii=False))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    urls = [u.strip() for u in a.url.split(",") if u.strip()]
    try:
        with Wire(urls, token=a.token) as wire:
            return _follow(wire, a) if a.command == "follow" else _publish(wire, a)
    except WireError as e:
        print(f"wire: {e}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as e:
        print(f"wire: {e}", file=sys.stderr)
        return 1


__all__ = ["main"]
