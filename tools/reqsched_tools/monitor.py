# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-monitor - what a web server has consumed so far (the mQoS paper's
resource monitor, section 3.1), for reqsched-prober.

It runs on the web server and answers ``GET /counters`` with the server's
cumulative counters as JSON::

    {"t": 1234.5, "cpu_s": 81.25, "disk_read_bytes": 1048576, "net_tx_bytes": 52428800}

* CPU seconds and disk bytes read come from the server's processes
  (``--pid PID``: the process and all its descendants, /proc/PID/stat utime +
  stime, /proc/PID/io read_bytes; processes that ended between two readings
  are lost, so keep the server's workers alive while probing) or from a
  cgroup v1 (``--cgroup NAME``: cpuacct.usage, and the Read lines of
  blkio.throttle.io_service_bytes);
* bytes sent from a network interface (``--iface NAME``:
  /sys/class/net/NAME/statistics/tx_bytes): everything the host sends, so
  probe on a quiet server.

The prober reads the counters before and after each request it sends (one at
a time): the difference is what that request consumed.

    reqsched-monitor --pid $(pgrep -o apache2) --iface eth0 --port 9181
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional


@dataclass
class Counters:
    t: float                # monotonic seconds of the reading
    cpu_s: float            # CPU seconds (user + system)
    disk_read_bytes: int    # bytes the storage layer read
    net_tx_bytes: int       # bytes the interface sent


def descendants(proc: Path, pid: int) -> list[int]:
    """pid and every process below it (by the parent field of /proc/N/stat)."""
    parent: dict[int, int] = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue        # ended meanwhile
        parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return sorted(tree)


def cpu_seconds(proc: Path, pid: int, ticks: int) -> float:
    """CPU seconds (utime + stime) of one process; OSError when it is gone."""
    fields = (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def tree_cpu_seconds(proc: Path, pid: int, ticks: int) -> Optional[float]:
    """CPU seconds of pid and every process below it (processes that ended
    meanwhile are left out); None when pid itself is gone."""
    if not (proc / str(pid)).exists():
        return None
    total = 0.0
    for p in descendants(proc, pid):
        try:
            total += cpu_seconds(proc, p, ticks)
        except OSError:
            continue
    return total


def proc_counters(proc: Path, pid: int, ticks: int) -> tuple[float, int]:
    """CPU seconds and bytes read of the process tree under pid."""
    cpu, read = 0.0, 0
    for p in descendants(proc, pid):
        try:
            seconds = cpu_seconds(proc, p, ticks)
            io = (proc / str(p) / "io").read_text()
        except OSError:
            continue
        cpu += seconds
        for line in io.splitlines():
            if line.startswith("read_bytes:"):
                read += int(line.split()[1])
    return cpu, read


def cgroup_counters(cgroup: Path, name: str) -> tuple[float, int]:
    """CPU seconds and bytes read of cgroup v1 `name` (under cgroup/cpuacct
    and cgroup/blkio)."""
    cpu = int((cgroup / "cpuacct" / name / "cpuacct.usage").read_text()) / 1e9
    read = 0
    for line in (cgroup / "blkio" / name / "blkio.throttle.io_service_bytes").read_text().splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "Read":
            read += int(f[2])
    return cpu, read


def iface_tx(sysfs: Path, iface: str) -> int:
    return int((sysfs / "class" / "net" / iface / "statistics" / "tx_bytes").read_text())


def reader(pid: Optional[int] = None, cgroup: Optional[str] = None,
           iface: Optional[str] = None, proc: Path = Path("/proc"),
           cgroup_root: Path = Path("/sys/fs/cgroup"), sysfs: Path = Path("/sys"),
           ticks: int = 0) -> Callable[[], Counters]:
    """A function that reads the counters now. One of pid and cgroup."""
    if (pid is None) == (cgroup is None):
        raise ValueError("give one of pid and cgroup")
    hz = ticks or os.sysconf("SC_CLK_TCK")

    def read() -> Counters:
        if pid is not None:
            cpu, disk = proc_counters(proc, pid, hz)
        else:
            assert cgroup is not None
            cpu, disk = cgroup_counters(cgroup_root, cgroup)
        tx = iface_tx(sysfs, iface) if iface else 0
        return Counters(time.monotonic(), cpu, disk, tx)
    return read


def serve(read: Callable[[], Counters], host: str, port: int,
          port_file: Optional[str] = None) -> ThreadingHTTPServer:
    """An HTTP server answering GET /counters (call serve_forever())."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:       # noqa: N802 (http.server's name)
            if self.path != "/counters":
                self.send_error(404)
                return
            body = json.dumps(asdict(read())).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            pass

    srv = ThreadingHTTPServer((host, port), Handler)
    if port_file:
        Path(port_file).write_text(f"{host}:{srv.server_address[1]}\n")
    return srv


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-monitor", description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pid", type=int, help="the web server's main process")
    src.add_argument("--cgroup", help="cgroup v1 name of the web server")
    ap.add_argument("--iface", help="interface whose sent bytes are the bandwidth")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9181)
    ap.add_argument("--port-file", help="write HOST:PORT here once listening")
    args = ap.parse_args(argv)
    read = reader(pid=args.pid, cgroup=args.cgroup, iface=args.iface)
    try:
        read()
    except (OSError, ValueError, IndexError) as e:
        print(f"reqsched-monitor: cannot read the counters: {e}", file=sys.stderr)
        return 1
    srv = serve(read, args.host, args.port, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
