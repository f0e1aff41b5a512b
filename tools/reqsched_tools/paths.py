"""Where the tools find what `make` built in the reqsched checkout.

`make tools` installs this package editable from the checkout's tools/ (into
build/venv), so the checkout's top directory is two levels above this file.
"""
from __future__ import annotations

from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
BUILD = TOP / "build"
PATCHED_SQUID = BUILD / "squid" / "sbin" / "squid"
SIM_ENGINE = BUILD / "bin" / "rs-sim"
