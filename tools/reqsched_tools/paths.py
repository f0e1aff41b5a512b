# SPDX-License-Identifier: GPL-2.0-or-later
"""Where the tools find what `make` built in the reqsched checkout.

`make tools` installs this package editable from the checkout's tools/ (into
build/venv), so the checkout's top directory is two levels above this file.
"""
from __future__ import annotations

import os
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
BUILD = TOP / "build"
PATCHED_SQUID = BUILD / "squid" / "sbin" / "squid"
SIM_ENGINE = BUILD / "bin" / "rs-sim"


def use_build_lib() -> None:
    """The build tree's Squid links build/lib/libreqsched.so without an rpath:
    every process started from here finds it (a caller's path comes first)."""
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (os.environ.get("LD_LIBRARY_PATH"), str(BUILD / "lib")) if p)
