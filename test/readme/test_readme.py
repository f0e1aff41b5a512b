# SPDX-License-Identifier: GPL-2.0-or-later
"""The README stays true: every command it shows is run here or by CI.

Fenced blocks of the README are checked by their info string:
  sh     each line is a command. `make TARGET...` must name targets the
         Makefile defines (CI itself runs `make check`; `make demo` runs the
         same `reqsched-testbed run` code as check-testbed). `build/bin/reqsched-testbed
         run` commands run shortened (--duration, plots off); every other
         command runs as written and must exit 0.
  conf   a squid.conf fragment: `squid -k parse` with the patched Squid must
         accept it (test/helper/conf-parse.sh wraps it in a minimal config).
  map    a class mapping file: `ext_reqsched_class_acl -t` must accept it.
  sh-packager  the rebuild-by-hand recipe: its lines up to ./bootstrap.sh run
         in a scratch directory (fetch-squid, quilt push of our series);
         the rest is what `make squid` runs through scripts/squid-build.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest
from reqsched_tools.paths import use_build_lib

TOP = Path(__file__).resolve().parents[2]
BUILD = TOP / "build"
SQUID = BUILD / "squid" / "sbin" / "squid"
use_build_lib()
HELPER = BUILD / "bin" / "ext_reqsched_class_acl"
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
# Appended to `reqsched-testbed run` so the README's runs take seconds, not minutes.
TESTBED_SHORT = ["--duration", "12", "--warmup", "2", "--no-plots"]


def blocks(kind: str) -> list[str]:
    text = (TOP / "README.md").read_text()
    return [body for info, body in FENCE.findall(text) if info == kind]


def commands() -> list[str]:
    out = []
    for body in blocks("sh"):
        for line in body.splitlines():
            cmd = line.split(" #", 1)[0].strip()
            if cmd and not cmd.startswith("#"):
                out.append(cmd)
    return out


def make_targets() -> set[str]:
    db = subprocess.run(["make", "-pRrq", "-C", str(TOP), "-f", "Makefile", ".readme-no-such-target"],
                        capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^([A-Za-z0-9_.-]+):", db, re.M)}


def test_readme_has_commands_and_configs() -> None:
    assert "make demo" in commands() and "make check" in commands()
    assert blocks("conf") and blocks("map")


@pytest.mark.parametrize("cmd", [c for c in commands() if c.startswith("make ")])
def test_make_targets_exist(cmd: str) -> None:
    missing = set(shlex.split(cmd)[1:]) - make_targets()
    assert not missing, f"README runs `{cmd}` but the Makefile has no {missing}"


@pytest.mark.parametrize("cmd", [c for c in commands() if not c.startswith("make ")])
def test_command_runs(cmd: str) -> None:
    argv = shlex.split(cmd)
    if argv[:2] == ["build/bin/reqsched-testbed", "run"]:
        argv += TESTBED_SHORT
    with tempfile.TemporaryDirectory(prefix="rs-readme-") as tmp:
        argv = [a.replace("/tmp/", tmp + "/") for a in argv]
        proc = subprocess.run(argv, cwd=TOP, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"`{cmd}` failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        for a in argv:            # an output file named in the command must exist
            if a.startswith(tmp) and a.endswith(".json"):
                assert Path(a).stat().st_size > 0, f"`{cmd}` wrote no {a}"


@pytest.mark.parametrize("index", range(len(blocks("conf"))))
def test_conf_block_parses(index: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".conf", prefix=f"readme-{index}-") as f:
        f.write(blocks("conf")[index])
        f.flush()
        proc = subprocess.run([str(TOP / "test/helper/conf-parse.sh"), str(SQUID), str(HELPER), f.name],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("index", range(len(blocks("map"))))
def test_map_block_loads(index: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".map") as f:
        f.write(blocks("map")[index])
        f.flush()
        proc = subprocess.run([str(HELPER), "-t", f.name], capture_output=True, text=True, timeout=30)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0 and " 0 malformed" in report, report


def test_packager_recipe_applies_the_series() -> None:
    (recipe,) = blocks("sh-packager")
    head = recipe.split("./bootstrap.sh")[0].replace("/path/to/reqsched", str(TOP))
    with tempfile.TemporaryDirectory(prefix="rs-readme-pkg-") as tmp:
        os.chmod(tmp, 0o755)      # apt-get source downloads as the _apt user
        proc = subprocess.run(["bash", "-euc", head + "\nQUILT_PC=.pc-reqsched quilt applied\n"],
                              cwd=tmp, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        series = (TOP / "patches/squid-6.13/series").read_text().split()
        applied = [Path(line).name for line in proc.stdout.split() if line.endswith(".patch")]
        assert applied[-len(series):] == series, proc.stdout[-3000:]
