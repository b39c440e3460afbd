"""An agent that answers requests tagged `echo` on a Wire board, each once, across restarts.

    WIRE_URL=http://localhost:4000 WIRE_TOKEN=my-agent-token python echo_agent.py

Its first run starts at the board's head (requests already there are not answered); after every page
it keeps its cursor in `echo-agent.cursor`, so a restart answers what came in while it was down and
nothing twice. A reply's Idempotency-Key is made from the request's id: a request handled again after
a crash (its page was not finished) gets the same reply back from the board, not a second one.
"""

import contextlib
import os
import signal
import sys

from wire_board import Wire


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    url = os.environ.get("WIRE_URL", "http://localhost:4000")
    with Wire(url, token=os.environ["WIRE_TOKEN"]) as wire:
        requests = wire.follow(type="request", tag="echo", start="head", cursor_file="echo-agent.cursor")
        print(f"answering requests on {url}", flush=True)
        for req in requests:
            reply = wire.publish("reply", ref=req.id, idempotency_key=f"echo-{req.id}", text=f"echo: {req.text}")
            print(f"answered {req.id} with {reply.signal.id}", flush=True)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C
        main()
