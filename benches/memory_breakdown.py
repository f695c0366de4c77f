#!/usr/bin/env python3
"""Where the idle operator's memory goes: `navique-operator run` on a fresh
navique-sandbox converges one managed PostgresCluster (cert-manager and
CloudNativePG installed, this script playing CloudNativePG as
operator_bench.py does), idles --hold seconds, then the process's VmRSS is
split into the binary's own pages (RssFile) and anonymous memory (RssAnon:
the heap, what the allocator holds, thread stacks), with its peak (VmHWM).

    NAVIQUE_BENCH_BIN_DIR=target/release python3 benches/memory_breakdown.py [--rounds 3] [--hold 5]

--gdb-call 'call (void)mi_collect(1)' (or malloc_trim for a build on glibc's
allocator) reads the figures again after that call in the process: how much
the allocator held that nothing used.
"""
import argparse, os, statistics, subprocess, threading, time

import operator_bench as ob


def figures(pid):
    mib = {k: ob.status_kib(pid, k) / 1024 for k in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}
    return mib | {"Threads": ob.status_kib(pid, "Threads")}


def one_round(hold, gdb_call):
    s = ob.Server()
    stop = threading.Event()
    op = None
    try:
        op, _ = ob.start_operator(s)
        threading.Thread(target=ob.play_cnpg, args=(s, stop), daemon=True).start()
        ob.ensure_namespace(s, "team-a")
        ob.create_pg(s, "team-a", "app-db")
        while ob.ready_count(s, {("team-a", "app-db")}) < 1:
            time.sleep(0.02)
        time.sleep(hold)
        out = figures(op.pid)
        if gdb_call:
            subprocess.run(["gdb", "-p", str(op.pid), "-batch", "-ex", gdb_call], capture_output=True)
            time.sleep(0.5)
            out |= {f"{k} after call": v for k, v in figures(op.pid).items() if k in ("VmRSS", "RssAnon")}
        return out
    finally:
        ob.tear_down(s, stop, op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hold", type=float, default=5)
    ap.add_argument("--gdb-call", default="")
    a = ap.parse_args()
    rounds = [one_round(a.hold, a.gdb_call) for _ in range(a.rounds)]
    print(f"binaries: {ob.BIN_DIR}; {a.rounds} rounds, idle {a.hold} s after Ready; MiB, median (min-max)")
    for k in rounds[0]:
        vals = [r[k] for r in rounds]
        print(f"| {k} | {statistics.median(vals):.1f} ({min(vals):.1f}-{max(vals):.1f}) |")


if __name__ == "__main__":
    main()
