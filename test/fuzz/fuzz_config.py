#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuzz the request_sched_* directives through `squid -k parse`.

Each execution takes a configuration of the corpus (test/fuzz/config-corpus:
request_sched_* lines; the acls vip and staff exist), applies one to three
random mutations (a token replaced by a hostile value, a token dropped or
doubled, a line dropped, doubled or swapped, a directive line with random
values added) and runs the patched Squid's `squid -k parse` on it, in the
integration harness's squid.conf (test/integration/rsharness.py). Every corpus
file is parsed unchanged first and must be accepted.

A finding is: squid killed by a signal or exiting with a status other than 0
or 1 (a crash, an abort, a sanitizer report: the sanitizers exit with 86
here); no answer within 30 s (a hang); exit 1 without a FATAL or ERROR line
(a rejection that does not say why); exit 0 with one (an error that does not
stop the parse); a non-finite, negative or huge number accepted where the
corpus had a number. Findings are written to OUT/finding-N.conf with Squid's
output beside them, and the run fails.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]

ACLS = "acl vip src 127.0.0.2\nacl staff src 127.0.0.3\n"
# values that must never be accepted where the corpus has a number
MUST_REJECT_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e999", "-1", "-0.5", "1e308",
                       "18446744073709551616", "9" * 40, "-18446744073709551615"]
HOSTILE = MUST_REJECT_NUMBERS + [
    "", "0", "1", "-0", "0.0", "0.000001", "1e-308", "18446744073709551615", "4294967296",
    "0x10", "1_000", "\u0661", "\u00bd", "%", "%%", "100%", "1000%", "-5%", "nan%", "0%",
    "Mbit", "Gbit/s", "kbit", "bit", "Tbit", "furlongs", "KB", "MB", "GB", "bytes",
    "seconds", "second", "minutes", "hours", "ms", "days", "on", "off", "yes", "allow",
    "deny", "all", "!all", "default", "none", "stale=", "stale=-1", "stale=nan",
    "stale=1e999", "rx", "tx", "file", "iface", "/", "/tmp/x", "relative/path",
    "eth0/1", '"quoted value"', "'", "\\", "a" * 5000, "msf", "rfq", "drr", "sff",
    "fixed", "rtc", "wrc-mult", "wrc-aimd", "gold", "silver", "src", "login", "ext_user",
    "count", "schedule", "vip", "staff", "\x7f", "\u00e9t\u00e9",
]
NUMBER = re.compile(r"-?\d+(\.\d+)?%?")


def load_corpus(corpus: Path) -> list[list[str]]:
    confs = []
    for p in sorted(corpus.iterdir()):
        lines = [ln for ln in p.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        confs.append(lines)
    if not confs:
        raise SystemExit(f"fuzz_config: empty corpus {corpus}")
    return confs


def mutate(rng: random.Random, lines: list[str], directives: list[str]) -> tuple[list[str], bool]:
    """One to three mutations; also says whether a number of the corpus was
    replaced by a value that must be rejected."""
    lines = list(lines)
    must_reject = False
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(7)
        i = rng.randrange(len(lines)) if lines else 0
        toks = lines[i].split() if lines else []
        if op <= 2 and len(toks) > 1:
            j = rng.randrange(1, len(toks))
            new = rng.choice(MUST_REJECT_NUMBERS if op == 0 else HOSTILE)
            if NUMBER.fullmatch(toks[j]) and new in MUST_REJECT_NUMBERS:
                must_reject = True
            toks[j] = new
            lines[i] = " ".join(toks)
        elif op == 3 and len(toks) > 1:
            del toks[rng.randrange(1, len(toks))]
            lines[i] = " ".join(toks)
        elif op == 4 and toks:
            j = rng.randrange(len(toks))
            toks.insert(j, toks[j])
            lines[i] = " ".join(toks)
        elif op == 5 and lines:
            k = rng.randrange(3)
            if k == 0:
                del lines[i]
            elif k == 1:
                lines.insert(i, lines[i])
            else:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
        else:
            values = " ".join(rng.choice(HOSTILE) for _ in range(rng.randint(0, 3)))
            lines.insert(rng.randrange(len(lines) + 1), f"{rng.choice(directives)} {values}".rstrip())
    # once a must-reject value was placed, later mutations may have removed it
    return lines, must_reject and any(v in ln.split() for ln in lines for v in MUST_REJECT_NUMBERS)


def parse(squid: str, conf_dir: Path, lines: list[str]) -> tuple[int, str]:
    import rsharness as h  # noqa: E402 (RS_SQUID is set first)
    sq = h.Squid(conf_dir, sched="\n".join(lines), acls=ACLS)
    try:
        p = h.Squid.run_parse(sq.conf, timeout=30)
    except subprocess.TimeoutExpired:
        return -1000, "no answer within 30 s"
    return p.returncode, p.stdout


def verdict(rc: int, out: str, must_reject: bool) -> str:
    """'' when the outcome is acceptable, else what is wrong."""
    said = bool(re.search(r"FATAL|\bERROR\b", out))
    if rc == -1000:
        return "hang"
    if rc not in (0, 1):
        return f"crash (exit status {rc})"
    if rc == 1 and not said:
        return "rejected without a FATAL or ERROR line"
    if rc == 0 and said:
        return "accepted with an ERROR line"
    if rc == 0 and must_reject:
        return "accepted a non-finite, negative or huge number"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--squid", required=True, help="the patched squid binary")
    ap.add_argument("--corpus", type=Path, default=TOP / "test/fuzz/config-corpus")
    ap.add_argument("--out", type=Path, required=True, help="where findings are written")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--max-execs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    a = ap.parse_args()

    os.environ["RS_SQUID"] = a.squid
    # a sanitizer report must not look like a rejected configuration (exit 1)
    os.environ["ASAN_OPTIONS"] = "exitcode=86:detect_leaks=0"
    os.environ["UBSAN_OPTIONS"] = "halt_on_error=1:exitcode=86:print_stacktrace=1"
    sys.path.insert(0, str(TOP / "test/integration"))
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    corpus = load_corpus(a.corpus)
    directives = sorted({ln.split()[0] for conf in corpus for ln in conf})
    a.out.mkdir(parents=True, exist_ok=True)
    findings = execs = accepted = 0
    deadline = time.monotonic() + a.seconds
    with tempfile.TemporaryDirectory(prefix="rs-fuzz-config-") as tmp:
        def run(lines: list[str], must_reject: bool, must_accept: bool) -> None:
            nonlocal findings, execs, accepted
            rc, out = parse(a.squid, Path(tmp) / "conf", lines)
            execs += 1
            accepted += rc == 0
            why = verdict(rc, out, must_reject) or ("corpus file rejected" if must_accept and rc else "")
            if why:
                findings += 1
                (a.out / f"finding-{findings}.conf").write_text("\n".join(lines) + "\n")
                (a.out / f"finding-{findings}.out").write_text(f"{why}\n{out}")
                print(f"fuzz_config: finding {findings}: {why}: see {a.out}/finding-{findings}.conf")

        for conf in corpus:
            run(conf, False, True)
        while execs < a.max_execs and time.monotonic() < deadline:
            lines, must_reject = mutate(rng, rng.choice(corpus), directives)
            run(lines, must_reject, False)
    print(f"fuzz_config: seed {seed}: {execs} parses ({accepted} accepted), {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
