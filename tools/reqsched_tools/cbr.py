# SPDX-License-Identifier: GPL-2.0-or-later
"""On/off constant-bit-rate UDP cross traffic (MSF-RS §6, Table 1): from the
servers to the clients, across the bottleneck but not through Squid.

  python3 -m reqsched_tools.cbr send --src A --dst B:PORT --rate-bps R --period-s P
                                     [--start-s S] --duration D [--log FILE]
  python3 -m reqsched_tools.cbr sink --bind B:PORT --duration D
The sender is on during [S + 2kP, S + (2k+1)P) and off otherwise (P = 0: always on).
"""
from __future__ import annotations

import argparse
import signal
import socket
import sys
import time

PAYLOAD = 1200


def on_at(t: float, start: float, period: float) -> bool:
    if t < start:
        return False
    if period <= 0:
        return True
    return int((t - start) // period) % 2 == 0


def send(args: argparse.Namespace) -> int:
    host, _, port = args.dst.rpartition(":")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if args.src:
        s.bind((args.src, 0))
    pkt = b"\0" * PAYLOAD
    wire = PAYLOAD + 28 + 14                # UDP + IP + Ethernet headers
    gap = wire * 8.0 / args.rate_bps
    log = open(args.log, "w", encoding="utf-8") if args.log else None
    t0 = time.monotonic()
    t0_epoch = time.time()
    if log:
        log.write(f"t0_epoch {t0_epoch:.3f}\n")
    state = None
    nxt = t0
    sent = 0
    while True:
        now = time.monotonic()
        t = now - t0
        if t >= args.duration:
            break
        st = on_at(t, args.start_s, args.period_s)
        if st != state:
            state = st
            nxt = now
            if log:
                log.write(f"{t:.3f} {'on' if st else 'off'}\n")
                log.flush()
        if not st:
            time.sleep(0.01)
            continue
        if now >= nxt:
            try:
                s.sendto(pkt, (host, int(port)))
                sent += 1
            except OSError:
                pass
            nxt += gap
            if nxt < now - 0.05:           # never burst more than 50 ms of backlog
                nxt = now
        else:
            time.sleep(min(nxt - now, 0.01))
    if log:
        log.write(f"{time.monotonic() - t0:.3f} end sent={sent}\n")
        log.close()
    return 0


def sink(args: argparse.Namespace) -> int:
    host, _, port = args.bind.rpartition(":")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, int(port)))
    s.settimeout(0.5)
    end = time.monotonic() + args.duration
    n = 0
    while time.monotonic() < end:
        try:
            n += len(s.recv(65536))
        except socket.timeout:
            pass
    print(f"cbr sink: {n} bytes", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("send")
    a.add_argument("--src")
    a.add_argument("--dst", required=True)
    a.add_argument("--rate-bps", type=float, required=True)
    a.add_argument("--period-s", type=float, default=0.0)
    a.add_argument("--start-s", type=float, default=0.0)
    a.add_argument("--duration", type=float, required=True)
    a.add_argument("--log")
    b = sub.add_parser("sink")
    b.add_argument("--bind", required=True)
    b.add_argument("--duration", type=float, required=True)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.cmd == "send" and not 0 < args.rate_bps <= 1e10:
        print("cbr: --rate-bps must be > 0", file=sys.stderr)
        return 2
    if args.duration <= 0 or args.duration > 86400:
        print("cbr: --duration must be in (0, 86400]", file=sys.stderr)
        return 2
    try:
        return send(args) if args.cmd == "send" else sink(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
