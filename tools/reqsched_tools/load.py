# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load: Avalanche-style load through a proxy (doc/testbed.md, "Load").

  reqsched-load summary LOG            what an access log holds (no traffic)
  reqsched-load replay LOG [...]       replay it faithfully (logreplay.py)
  reqsched-load sessions PROFILE [...] sessions of page loads under a load profile
                                       (sessions.py; --procs N: over N processes,
                                       --hosts H,H: over hosts; multiproc.py)
  reqsched-load tsung PROFILE [...]    one class of a profile run by Tsung (tsung.py)
  reqsched-load genlog OUT [...]       write a seeded synthetic access log (genlog.py)
  reqsched-load plot DIR               persecond.png from a run's persecond.csv

replay and sessions run their transactions in reqsched-loadc (--engine c,
the default; cengine.py) or in this process (--engine python); everything
else, outputs included, is the same code for both.

Outputs in --out: requests.csv, class_bytes.csv, persecond.csv (loadengine.py)
and replay.json (the run's start epoch, duration and users, which
reqsched-report reads as it reads reqsched-replay's; the log's summary; the
counts and the per-class table printed at the end). A progress line goes to
stderr every --progress-s seconds; persecond.png at the end (--no-plots: not).
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
import time
from typing import Optional

from . import cengine, genlog, logparse, logreplay, multiproc, sessions, tsung
from .loadengine import Engine, format_report
from .replay import parse_addr_range


def read_log(path: str, fmt: str) -> tuple[list[logparse.LogEntry], logparse.ParseStats]:
    stats = logparse.ParseStats()
    with logparse.open_text(path) as f:
        entries = logparse.parse_access_log(f, stats, fmt)
    return entries, stats


def proxy_of(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--proxy {text!r}: need HOST:PORT")
    return host, int(port)


def positive(text: str) -> float:
    v = float(text)
    if not 0 < v < 1e9:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return v


PLOTTED = (("transactions", "transactions/s"), ("active_users", "active users"),
           ("p95_ms", "object latency p95 (ms)"), ("page_p95_ms", "page load p95 (ms)"))


def plot_persecond(out: str) -> str:
    """persecond.png: per second and class, transactions, active users, object
    latency p95 and page load p95 (the last panel empty without pages)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .report import _save_plot

    with open(os.path.join(out, "persecond.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    classes = list(dict.fromkeys(r["class"] for r in rows))
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
    for ax, (key, label) in zip(axes.flat, PLOTTED):
        for c in classes:
            pts = [(int(r["second"]), float(r[key])) for r in rows
                   if r["class"] == c and r[key] != ""]
            if pts:
                ax.plot(*zip(*pts), label=c, lw=1.2, ls="--" if c == "all" else "-")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("s since the start")
    return _save_plot(fig, out, "persecond.png")


def count(text: str) -> int:
    """An integer >= 0 (argparse type)."""
    v = int(text)
    if not 0 <= v < 2**31:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count >= 0")
    return v


def run_engine(engine: Engine, tasks: list, duration: float, out: str, info: dict,
               plots: bool) -> int:
    asyncio.run(engine.run(tasks, duration))
    return finish(engine, out, info, plots)


def finish(engine: Engine, out: str, info: dict, plots: bool, quiet: bool = False) -> int:
    """Write the run's outputs and replay.json (info and the counts), print the
    summary (quiet: not, a worker of --procs)."""
    engine.write(out)
    done = sum(1 for t in engine.txns if t.end >= 0)
    errors = sum(1 for t in engine.txns if t.error)
    rep = engine.report()
    if not quiet:
        print(format_report(rep), file=sys.stderr, flush=True)
    info.update({"classes": rep, "t0_epoch": engine.t0_epoch, "duration_s": round(engine.elapsed, 4),
                 "users": list(engine.users.values()), "transactions": len(engine.txns),
                 "completed": done, "errors": errors, "interrupted": engine.interrupted})
    with open(os.path.join(out, "replay.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1)
    if not quiet:
        print(f"load: {len(engine.txns)} transactions, {done} completed, {errors} errors -> "
              f"{out}", file=sys.stderr, flush=True)
    if plots:
        plot_persecond(out)
    return 130 if engine.interrupted else 0


def cmd_summary(args: argparse.Namespace) -> int:
    entries, stats = read_log(args.log, args.format)
    s = logreplay.summary(entries, stats)
    print(json.dumps(s, indent=1) if args.json else logreplay.format_summary(s))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    entries, stats = read_log(args.log, args.format)
    s = logreplay.summary(entries, stats)
    print(logreplay.format_summary(s), file=sys.stderr, flush=True)
    entries = [e for e in entries if e.method in logreplay.REPLAYED_METHODS]
    if not entries:
        raise ValueError(f"{args.log}: no request to replay")
    cmap = logreplay.ClientMap.load(args.client_map, args.map or [], args.default_class,
                                    args.default_addrs)
    users = logreplay.plan(entries, cmap, parse_addr_range(args.servers),
                           time_scale=args.time_scale, http_port=args.http_port,
                           tunnel_port=args.tunnel_port, post_bytes=args.post_bytes,
                           max_age=args.max_age, by_login=args.by_login)
    if cmap.shared():
        print(f"load: {cmap.shared()} clients share a source address with another "
              "(more clients than addresses in a map rule)", file=sys.stderr)
    last = max(st.at for u in users for st in u.steps)
    duration = args.duration or last + args.timeout + 1
    print(f"load: {len(users)} emulated users, {len(entries)} requests over {last:.1f} s "
          f"({'closed' if args.closed_loop else 'open'} loop, time scale {args.time_scale:g}) "
          f"via {args.proxy}", file=sys.stderr, flush=True)
    engine = Engine(proxy_of(args.proxy), args.timeout, args.progress_s, args.proxy_password)
    info = {"log": s, "log_clients": {u.id: u.client for u in users},
            "time_scale": args.time_scale, "closed_loop": args.closed_loop,
            "engine": args.engine}
    if args.engine == "c":
        info["engine_cpu_s"] = cengine.replay(engine, users, args.closed_loop, args.max_conns,
                                              duration, args.out)
        return finish(engine, args.out, info, not args.no_plots)
    rp = logreplay.LogReplay(engine, users, args.closed_loop, args.max_conns)
    return run_engine(engine, rp.tasks(), duration, args.out, info, not args.no_plots)


def log_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("auto", "native", "common"), default="auto",
                   help="log format: Squid native, Common/Combined, or per line (auto)")


def cmd_sessions(args: argparse.Namespace) -> int:
    classes, servers, port = sessions.load_profile(sessions.read_profile(args.profile),
                                                   os.path.dirname(os.path.abspath(args.profile)))
    engine = Engine(proxy_of(args.proxy), args.timeout, args.progress_s, args.proxy_password)
    info: dict = {"profile": args.profile, "seed": args.seed, "engine": args.engine,
                  "classes_profile": [{"name": c.name, "unit": c.unit, "phases": c.phases,
                                       "connections": c.model.connections} for c in classes]}
    if args.worker:
        k, n = args.worker
        classes = [c.share(k, n) for c in classes]
    sl = sessions.SessionLoad(engine, classes, servers, port, args.seed)
    bound = sl.duration() + args.timeout
    if args.procs > 1 or args.hosts:
        print(f"load: {len(classes)} classes for {sl.duration():.0f} s via {args.proxy}, "
              f"{args.procs} processes" + (f" on {','.join(args.hosts)}" if args.hosts else ""),
              file=sys.stderr, flush=True)
        workers, why = multiproc.run_sessions(args, engine, bound)
        if workers is None:
            raise ValueError(why)
        no_address = sum(w["no_address"] for w in workers)
        info |= {"procs": args.procs, "hosts": args.hosts or [], "no_address": no_address,
                 "workers": [{"worker": w["worker"], "t0_offset_s": w["t0_offset_s"],
                              "transactions": w["transactions"], "errors": w["errors"],
                              "no_address": w["no_address"]} for w in workers]}
        rc = finish(engine, args.out, info, not args.no_plots)
    elif args.worker:
        engine.progress_sink = lambda c: print(json.dumps(c), flush=True)
        info |= run_sessions(args, sl, bound)
        info |= {"worker": f"{k}/{n}", "no_address": sl.no_address,
                 "spans": [[c, round(a, 4), round(b, 4)] for c, a, b in engine.spans]}
        return finish(engine, args.out, info, False, quiet=True)
    else:
        print(f"load: {len(classes)} classes for {sl.duration():.0f} s via {args.proxy}, "
              f"engine {args.engine}", file=sys.stderr, flush=True)
        info |= run_sessions(args, sl, bound)
        rc = finish(engine, args.out, info, not args.no_plots)
        no_address = sl.no_address
    if no_address:
        print(f"load: {no_address} users not started: their class had no free address "
              "(at most at once for users profiles, arrivals for sessions_per_s"
              f"{', summed over the processes' if args.procs > 1 else ''})", file=sys.stderr)
    return rc


def run_sessions(args: argparse.Namespace, sl: sessions.SessionLoad, bound: float) -> dict:
    """One process's share of a sessions run (from the wall-clock
    --start-at, a worker's), by the engine --engine names; returns what
    replay.json adds (the C engine's own CPU seconds)."""
    if args.engine == "c":
        return {"engine_cpu_s": cengine.run(sl, bound, args.out, args.start_at)}
    time.sleep(max(0.0, args.start_at - time.time()))
    asyncio.run(sl.engine.run(sl.tasks(), bound))
    return {}


def cmd_tsung(args: argparse.Namespace) -> int:
    classes, servers, port = sessions.load_profile(sessions.read_profile(args.profile),
                                                   os.path.dirname(os.path.abspath(args.profile)))
    names = [c.name for c in classes]
    if args.cls is None and len(classes) > 1 or args.cls not in (None, *names):
        raise ValueError(f"--class: one of {', '.join(names)} (a Tsung run drives one class)")
    c = classes[names.index(args.cls)] if args.cls else classes[0]
    os.makedirs(args.out, exist_ok=True)
    conf = os.path.join(args.out, "tsung.xml")
    lives = os.path.abspath(os.path.join(args.out, "lives.csv"))
    tsung.write_config(tsung.config(c, servers, port, args.seed, args.timeout,
                                    None if args.direct else proxy_of(args.proxy),
                                    tuple(args.hosts.split(",")), not args.no_dump, lives), conf)
    if c.unit == "users":
        with open(lives, "w", encoding="utf-8") as f:
            f.write(tsung.lives(c))
    print(f"load: {conf}: class {c.name}, {len(c.addrs)} addresses, {c.duration:.0f} s "
          f"{'direct' if args.direct else 'via ' + args.proxy}", file=sys.stderr, flush=True)
    if args.config_only:
        return 0
    logs = tsung.run(conf, os.path.join(args.out, "tsung"), c.duration + args.timeout + 60,
                     args.rsh)
    print(f"load: tsung logs in {logs}", file=sys.stderr, flush=True)
    info = {"profile": args.profile, "seed": args.seed, "engine": "tsung", "tsung_logs": logs,
            "classes_profile": [{"name": c.name, "unit": c.unit, "phases": c.phases,
                                 "connections": 1}]}
    if args.no_dump:
        t = tsung.totals(os.path.join(logs, "tsung.log"))
        info |= {"duration_s": c.duration, "completed": t["requests"], "errors": t["errors"]}
        with open(os.path.join(args.out, "replay.json"), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=1)
        print(f"load: {t['requests']} requests, {t['errors']} errors (Tsung's totals; "
              f"no per-second outputs without the dump)", file=sys.stderr, flush=True)
        return 0
    engine = tsung.convert(os.path.join(logs, "tsung.dump"), c.name)
    return finish(engine, args.out, info, not args.no_plots)


def worker_of(text: str) -> tuple[int, int]:
    """K/N of --worker: share K (0 .. N-1) of N."""
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 0 <= K < N")
    return int(k), int(n)


def cmd_genlog(args: argparse.Namespace) -> int:
    opts = {"seed": args.seed, "clients": args.clients, "subnets": args.subnets,
            "pages": args.pages, "span-s": args.span_s, "day-s": args.day_s,
            "sites": args.sites, "objects": args.objects, "post": args.post,
            "head": args.head, "connect": args.connect}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("# reqsched-load genlog OUT " + " ".join(f"--{k} {v}" for k, v in opts.items())
                + "\n")
        n = genlog.generate(f, seed=args.seed, clients=args.clients,
                            subnets=tuple(args.subnets.split(",")), pages=args.pages,
                            span_s=args.span_s, day_s=args.day_s, sites=args.sites,
                            objects=args.objects, post=args.post, head=args.head,
                            connect=args.connect)
    print(f"genlog: {n} lines -> {args.out}", file=sys.stderr)
    return 0


def common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--proxy", default="10.10.0.1:3128", help="proxy HOST:PORT")
    p.add_argument("--timeout", type=positive, default=120.0, help="per-transaction limit in s")
    p.add_argument("--progress-s", type=positive, default=5.0, help="progress line interval")
    p.add_argument("--out", default="load-out", help="output directory")
    p.add_argument("--no-plots", action="store_true", help="no persecond.png")
    p.add_argument("--proxy-password", metavar="PW",
                   help="authenticate users that have a login (logged, or a profile's login) "
                        "to the proxy: Basic LOGIN:PW")


def engine_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=("c", "python"), default="c",
                   help="who runs the transactions: reqsched-loadc (C, loadgen/; "
                        "make tools builds it) or this process (asyncio)")


def profile_args(p: argparse.ArgumentParser) -> None:
    """The arguments of the commands that run a sessions profile."""
    p.add_argument("profile", help="profile file (TOML or JSON)")
    common_args(p)
    p.add_argument("--seed", type=int, default=1)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-load", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("summary", help="summarize an access log")
    p.add_argument("log")
    log_format(p)
    p.add_argument("--json", action="store_true", help="the summary as JSON")
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("replay", help="replay an access log faithfully",
                       description=logreplay.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log")
    log_format(p)
    common_args(p)
    engine_arg(p)
    p.add_argument("--client-map", metavar="FILE", help="'MATCH CLASS ADDRESSES' lines")
    p.add_argument("--map", action="append", metavar="'MATCH CLASS ADDRESSES'",
                   help="a client map rule after the file's (repeatable)")
    p.add_argument("--default-class", default="default", help="class of unmapped clients")
    p.add_argument("--default-addrs", default="10.10.1.1-250",
                   help="source addresses of unmapped clients")
    p.add_argument("--by-login", action="store_true",
                   help="a user per logged login (clients without one: per address)")
    p.add_argument("--servers", default="10.20.0.1-12", help="origin addresses")
    p.add_argument("--http-port", type=count, default=80, help="origin port of http URLs")
    p.add_argument("--tunnel-port", type=count, default=443, help="origin port of CONNECTs")
    p.add_argument("--time-scale", type=positive, default=1.0,
                   help="replay time = log time x SCALE (0.1: ten times faster)")
    p.add_argument("--closed-loop", action="store_true",
                   help="one request at a time per user, the log's think times between")
    p.add_argument("--max-conns", type=count, default=6, help="connections per user (open loop)")
    p.add_argument("--post-bytes", type=count, default=1024, help="request body of POST/PUT")
    p.add_argument("--max-age", type=count, default=0,
                   help="> 0: GET 200 answers cacheable for this many s (cache-on runs)")
    p.add_argument("--duration", type=float, default=0.0,
                   help="stop after this many s (0: when the log is done)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("sessions", help="sessions of page loads under a load profile",
                       description=sessions.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    profile_args(p)
    engine_arg(p)
    p.add_argument("--procs", type=count, default=1,
                   help="worker processes the users are split over (multiproc.py); "
                        "one merged output")
    p.add_argument("--hosts", type=lambda t: [h for h in t.split(",") if h],
                   help="one worker process per host, comma-separated (a host named twice "
                        "runs two; others than localhost started through --rsh; replaces "
                        "--procs; multiproc.py)")
    p.add_argument("--rsh", default="ssh", metavar="CMD",
                   help="remote shell for --hosts: CMD HOST COMMAND... (default ssh; "
                        "'ip netns exec' for network namespaces)")
    p.add_argument("--worker", type=worker_of, help=argparse.SUPPRESS)
    p.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_sessions)

    p = sub.add_parser("tsung", help="one class of a sessions profile run by Tsung",
                       description=tsung.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    profile_args(p)
    p.add_argument("--class", dest="cls", metavar="NAME",
                   help="the profile's class to run (needed if it has several)")
    p.add_argument("--direct", action="store_true",
                   help="to the profile's servers, not through --proxy")
    p.add_argument("--hosts", default="localhost",
                   help="Tsung client hosts, comma-separated (others than localhost: "
                        "reached by ssh, the addresses dealt over them)")
    p.add_argument("--rsh", default="", metavar="CMD",
                   help="Tsung's remote shell for the other --hosts (tsung -r; default ssh)")
    p.add_argument("--no-dump", action="store_true",
                   help="no per-request log (tsung.dump): replay.json gets Tsung's totals, "
                        "no per-second outputs")
    p.add_argument("--config-only", action="store_true", help="write OUT/tsung.xml, do not run")
    p.set_defaults(func=cmd_tsung)

    p = sub.add_parser("genlog", help="write a seeded synthetic access log",
                       description=genlog.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="the log file to write")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--clients", type=count, default=200)
    p.add_argument("--subnets", default="10.1.1.0/24,10.1.2.0/24,10.2.1.0/24,10.3.1.0/24",
                   help="client subnets, comma-separated")
    p.add_argument("--pages", type=count, default=600, help="page loads in the log")
    p.add_argument("--span-s", type=positive, default=600.0, help="the log's time span")
    p.add_argument("--day-s", type=float, default=0.0,
                   help="period of the arrival pattern (0: the span)")
    p.add_argument("--sites", type=count, default=40)
    p.add_argument("--objects", type=count, default=60, help="objects per site")
    p.add_argument("--post", type=float, default=0.03, help="share of POST page loads")
    p.add_argument("--head", type=float, default=0.01, help="share of HEAD page loads")
    p.add_argument("--connect", type=float, default=0.12, help="share of CONNECT page loads")
    p.set_defaults(func=cmd_genlog)

    p = sub.add_parser("plot", help="persecond.png from a run's persecond.csv")
    p.add_argument("dir", help="the run's --out directory")
    p.set_defaults(func=lambda a: print(plot_persecond(a.dir)) or 0)

    args = ap.parse_args(argv)
    if getattr(args, "max_conns", 1) < 1:
        ap.error("--max-conns must be >= 1")
    if getattr(args, "procs", 1) < 1 or getattr(args, "procs", 1) > 1 and args.worker:
        ap.error("--procs must be >= 1 (and is not given to a --worker)")
    if hasattr(args, "procs") and args.hosts:          # sessions (tsung has its own --hosts)
        if args.procs > 1 or args.worker:
            ap.error("--hosts gives the worker processes: not with --procs")
        args.procs = len(args.hosts)
    try:
        return int(args.func(args))
    except (OSError, ValueError) as e:
        print(f"reqsched-load: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
