"""Replay frames on an interface through an AF_PACKET socket, optionally paced.

Run inside the backend's network namespace (`ip netns exec NS python -m nicbench.backends.replay
FRAMES FRAME_BYTES DEV COUNT PPS`, FRAMES a file of equal-length frames back to back): prints one
JSON line `{"sent": n, "elapsed_s": s}`. The frames are sent in file order, cycling, COUNT in all;
PPS 0 sends as fast as the socket takes them (Python's send loop is then the sender's limit, and
the result says how fast it went).
"""

from __future__ import annotations

import json
import socket
import sys
import time


def replay(frames: list[bytes], dev: str, count: int, pps: float) -> dict[str, float]:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((dev, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    send = sock.send
    n = len(frames)
    sent = 0
    start = time.perf_counter()
    gap = 1.0 / pps if pps > 0 else 0.0
    for i in range(count):
        if gap:
            due = start + i * gap
            while time.perf_counter() < due:
                pass
        try:
            send(frames[i % n])
            sent += 1
        except BlockingIOError:  # the socket's buffer is full: the frame is lost at the sender
            pass
    elapsed = time.perf_counter() - start
    sock.close()
    return {"sent": float(sent), "elapsed_s": elapsed}


def main(argv: list[str]) -> int:
    path, frame_bytes, dev, count, pps = argv[0], int(argv[1]), argv[2], int(argv[3]), float(argv[4])
    with open(path, "rb") as f:
        data = f.read()
    frames = [data[i : i + frame_bytes] for i in range(0, len(data), frame_bytes)]
    print(json.dumps(replay(frames, dev, count, pps)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
