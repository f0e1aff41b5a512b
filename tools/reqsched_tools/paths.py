# SPDX-License-Identifier: GPL-2.0-or-later
"""Where the tools find what `make` built in the reqsched checkout.

`make tools` installs this package editable from the checkout's tools/ (into
build/venv), so the checkout's top directory is two levels above this file.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
BUILD = TOP / "build"
PATCHED_SQUID = BUILD / "squid" / "sbin" / "squid"
SIM_ENGINE = BUILD / "bin" / "rs-sim"
DELAYLINE = BUILD / "bin" / "reqsched-delayline"


def use_build_lib() -> None:
    """The build tree's Squid links build/lib/libreqsched.so without an rpath:
    every process started from here finds it (a caller's path comes first)."""
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (os.environ.get("LD_LIBRARY_PATH"), str(BUILD / "lib")) if p)


def squid_state_dir(squid_binary: Path, user: str = "nobody") -> Path:
    """The state directory (PREFIX/var/run/squid) of the Squid build that
    holds squid_binary, created and owned by `user` (cache_effective_user):
    SMP kids bind their IPC sockets there, as Debian's package gives
    /run/squid to proxy."""
    statedir = Path(squid_binary).resolve().parents[1] / "var" / "run" / "squid"
    statedir.mkdir(parents=True, exist_ok=True)
    shutil.chown(statedir, user)
    return statedir
