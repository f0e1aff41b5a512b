# SPDX-License-Identifier: GPL-2.0-or-later
"""nginx (Debian's nginx-light) as the origin of the loopback benchmarks
(test/squid/bench_overhead.py, test/testbed/bench_load.py): one worker, no
access log, keep-alive connections without a request limit; its
configuration, pid file and temporary paths in a directory of the caller."""
from __future__ import annotations

import os
import shutil
import subprocess
from types import TracebackType

from reqsched_tools.localnet import LOOPBACK, free_port, wait_port

# /usr/sbin is not on every user's PATH
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONF = """\
daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log stderr crit;
events {{ worker_connections 40000; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    open_file_cache max=16;
    client_body_temp_path {d};
    proxy_temp_path {d};
    fastcgi_temp_path {d};
    uwsgi_temp_path {d};
    scgi_temp_path {d};
    server {{
        listen {host}:{port} backlog=4096;
        location / {{ {location} }}
    }}
}}
"""


def nginx_installed() -> bool:
    return os.access(NGINX, os.X_OK)


class NginxOrigin:
    """nginx on 127.0.0.1:<free port>, started by the constructor, pinned to
    CPU `cpu` (taskset) if given. With body None it serves the files of
    directory `d` as application/octet-stream (nginx started as root reads
    them as user nobody); otherwise it answers every request `200` with
    `body` as text/plain (nginx's `return 200`)."""

    def __init__(self, d: str, body: str | None = None, cpu: int | None = None) -> None:
        if body is None:
            location = f"root {d}; default_type application/octet-stream;"
        elif '"' in body or "\\" in body:
            raise ValueError("NginxOrigin: the body is written between double quotes, unescaped")
        else:
            location = f'default_type text/plain; return 200 "{body}";'
        self.port = free_port()
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(CONF.format(d=d, host=LOOPBACK, port=self.port, location=location))
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        self.proc = subprocess.Popen(pin + [NGINX, "-c", conf, "-p", d, "-e", "stderr"])
        try:
            wait_port(self.port, "nginx", proc=self.proc)
        except BaseException:
            self.stop()
            raise

    def url(self, path: str = "/") -> str:
        return f"http://{LOOPBACK}:{self.port}{path}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def __enter__(self) -> NginxOrigin:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
