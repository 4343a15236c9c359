#!/usr/bin/env python3
"""How often `hbg fit` calls generated costs super-linear.

Writes, for each case and each of 20 seeds, one log per size in the
grammar tests/test_tools_fit.c writes (one cold pass, one warm pass: one
pass per size, as --min-per-log leaves), fits them with `hbg fit --format
json` and counts the seeds whose verdict is super-linear.

Costs: fixed + 50 ns per task (5000 ns fixed, and 7 nodes, 3 replays and
3 slots in every pass, which only the fixed term can hold), sizes of
10^6 / n .. 10^6 tasks evenly spaced, or 10^3 .. 10^6 spaced by decades
(log). quad: a square term adding 20 % or 5 % at the largest size.
Noise: uniform, relative to each cost. Outliers: two passes, at the two
largest or the two smallest sizes (a coin per seed), above the linear
cost by 0.3 % or 2 % of the cost at the largest size.

    scripts/fit-verdicts.py [-s SEEDS] HBG...   one column of counts per binary
"""
import json
import os
import random
import subprocess
import sys
import tempfile

SEEDS = 20
TOP = 1_000_000
FIXED = 5000.0 + 7 * 100.0 + 3 * 150.0 + 3 * 2.0
PER_TASK = 50.0


def sizes(n, spacing):
    if spacing == "even":
        return [TOP * (i + 1) // n for i in range(n)]
    return [round(10 ** (3 + 3 * i / (n - 1))) for i in range(n)]


def costs(case, seed):
    kind, amount, spacing, n, noise = case
    rnd = random.Random(seed)
    tasks = sizes(n, spacing)
    top = FIXED + PER_TASK * TOP
    quad = amount * top / TOP**2 if kind == "quad" else 0.0
    ys = [(FIXED + PER_TASK * t + quad * t * t) * (1 + rnd.uniform(-noise, noise)) for t in tasks]
    if kind == "outliers":
        at = [n - 1, n - 2] if rnd.random() < 0.5 else [0, 1]
        for i in at:
            ys[i] += amount * top
    return tasks, [round(y) for y in ys]


def log_text(tasks, y, pid):
    pre = "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24]"
    out = [f"[stamp] test env HBG_BIND_BREAKDOWN=1 hbg run synth --tasks {tasks}\n"]
    for inv, cost in ((1, 999999), (2, y)):
        out.append(f"{pre} bind phase=args start_ns=1 dur_ns=10 bytes=0 pid={pid} inv={inv}\n")
        out.append(f"{pre} bind phase=host_orch start_ns=2 dur_ns={cost - 300} tasks={tasks} heap_used=0 "
                   f"pid={pid} inv={inv}\n")
        out.append(f"{pre} bind phase=graph_upload start_ns=3 dur_ns=100 defs=0 bytes=0 submissions=3 slots=3 "
                   f"pid={pid} inv={inv}\n")
        out.append(f"{pre} bind phase=arena_h2d start_ns=4 dur_ns=200 bytes=0 pid={pid} inv={inv}\n")
        for op, cnt in (("submit_task", tasks), ("alloc_tensors", 1), ("record_node", 7), ("graph_submit", 3),
                        ("build_definition", 1)):
            out.append(f"[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:46] host-orch phase={op} "
                       f"total_ns=1 count={cnt} detail_sum=0 dropped=0 pid={pid} inv={inv}\n")
    return "".join(out)


def superlinear(hbg, case, seed, tmp):
    tasks, ys = costs(case, seed)
    paths = []
    for i, (t, y) in enumerate(zip(tasks, ys)):
        p = os.path.join(tmp, f"s{i}.log")
        with open(p, "w") as f:
            f.write(log_text(t, y, 1000 + i))
        paths.append(p)
    r = subprocess.run([hbg, "fit", "--format", "json", *paths], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["superlinear"] is True


def cases():
    for spacing in ("even", "log"):
        for n in (6, 8, 10):
            yield ("quad", 0.20, spacing, n, 0.01)
            yield ("quad", 0.05, spacing, n, 0.01)
            yield ("linear", 0.0, spacing, n, 0.01)
            yield ("linear", 0.0, spacing, n, 0.03)
            yield ("outliers", 0.003, spacing, n, 0.001)
            yield ("outliers", 0.02, spacing, n, 0.001)


def name(case):
    kind, amount, spacing, n, noise = case
    what = {"quad": f"quad {amount * 100:2.0f}%", "linear": "linear",
            "outliers": f"linear+2 outliers {amount * 100:g}%"}[kind]
    return f"{what} {spacing} n={n} noise {noise * 100:g}%"


def main():
    global SEEDS
    bins = sys.argv[1:]
    if bins[:1] == ["-s"] and len(bins) > 1 and bins[1].isdigit():
        SEEDS, bins = int(bins[1]), bins[2:]
    if not bins:
        sys.exit("usage: fit-verdicts.py [-s SEEDS] HBG...")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            cols = [f"{sum(superlinear(b, case, s, tmp) for s in range(1, SEEDS + 1)):2d}/{SEEDS}" for b in bins]
            print(f"  {name(case):<45}" + "".join(f"{c:>9} " for c in cols), flush=True)


if __name__ == "__main__":
    main()
