#!/usr/bin/env python3
"""How often `hbg compare` gives each verdict on synthetic logs of a known
effect: an A/A run (--effect 1) says how often an honest comparison is
called slower, faster or contended; an A/B run how often a real effect is
found. Each trial writes REPS base and REPS measure logs in our grammar
(one rank, ROUNDS passes, the first cold) and reads `hbg compare --format
json`'s verdict.

The noise model: each repetition runs at its own machine level, 1 plus up
to DRIFT, shared by both arms of the repetition (a machine slowing down
over the run, which the interleaving is meant to cancel); each arm of a
repetition adds its own level, up to +-ARM_JITTER (what does not cancel);
each pass adds a right-skewed spike, exponential with mean PASS_NOISE.
host_orch is scaled by EFFECT in the measure arm. The control,
runtime_init, is 45 ns (--control short: too short to witness noise) or
9 us (--control long).

    bench/bench_compare_calibration.py --hbg build/hbg --trials 200 --effect 1
    bench/bench_compare_calibration.py --hbg build/hbg --effect 0.8 --drift 0.3
"""
import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

SEGS = ["args", "arena_build", "static_arena", "gm_heap", "shared_mem", "runtime_init", "host_orch",
        "graph_upload", "arena_h2d", "host_view_close"]
BASE_NS = [50000, 400, 300, 20, 60, 9000, 100000, 5000, 900, 70000]
ATTRS = ["ntensor=20 staged=19 bytes=40859999040", "bytes=9437184 device=704", "heap=268435456 arena=1048576",
         "", "bytes=177152", "", "tasks=47 heap_used=127673344", "defs=1 bytes=130432 submissions=40",
         "nt=47 bytes=180480 copied=704 sm=56320 subs=40 args=96/40/0", "count=19 bytes=40859999040"]
ORDER = [0, 1, 2, 3, 4, 5, 6, 7, 9, 8]


def write_log(path, commit, a, level, effect, rng):
    ctl_ns = 45 if a.control == "short" else 9000
    with open(path, "w") as f:
        f.write(f"[stamp] {commit} env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=1 "
                f"HBG_LOG_LEVEL=timing hbg run qwen --mode numbers --rounds {a.rounds}\n")
        mono = 5000000000000
        for inv in range(1, a.rounds + 1):
            spike = rng.expovariate(1 / a.pass_noise) if a.pass_noise > 0 else 0
            t = mono
            for i in ORDER:
                if i == 5:   # the control: its own clock-read jitter, no machine level
                    v = ctl_ns * (1 + 0.3 * rng.random()) if a.control == "short" else ctl_ns * level * (1 + spike)
                else:
                    v = BASE_NS[i] * level * (1 + spike + 0.005 * rng.random())
                    if i == 6:
                        v *= effect
                d = int(v + 0.5)
                f.write(f"[mono_ns={t + d}][T0x7f00aa000640][TIMING] bind_trace_end: [bind_trace.c:212] bind "
                        f"phase={SEGS[i]} start_ns={t} dur_ns={d} {ATTRS[i]} pid=4242 inv={inv}\n")
                t += d + 1
            mono = t + 1000000


def trial(a, seed, tmp):
    rng = random.Random(seed)
    base, measure = [], []
    for r in range(a.reps):
        level = 1 + a.drift * rng.random()
        for arm, commit, eff, out in (("b", "aaaaaaa", 1.0, base), ("m", "bbbbbbb", a.effect, measure)):
            path = os.path.join(tmp, f"bind_qwen_numbers_{commit}_r{r + 1}.log")
            write_log(path, commit, a, level * (1 + a.arm_jitter * (2 * rng.random() - 1)), eff, rng)
            out.append(path)
    p = subprocess.run([a.hbg, "compare", "--format", "json", "--base", *base, "--measure", *measure],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"bench_compare_calibration: hbg compare exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)["verdict"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hbg", default="build/hbg")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--effect", type=float, default=1.0, help="host_orch's scale in the measure arm")
    ap.add_argument("--drift", type=float, default=0.0)
    ap.add_argument("--arm-jitter", type=float, default=0.0)
    ap.add_argument("--pass-noise", type=float, default=0.03)
    ap.add_argument("--control", choices=("short", "long"), default="short")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not (os.path.isfile(a.hbg) and os.access(a.hbg, os.X_OK)):
        ap.error(f"--hbg {a.hbg}: no such program (build it: make build)")
    for name in ("trials", "reps", "rounds"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} is a count from 1, not {getattr(a, name)}")
    if a.rounds < 2:
        ap.error("--rounds needs 2 at least: a cold pass and a warm one")
    tmp = tempfile.mkdtemp(prefix="hbg-calib-")
    try:
        c = collections.Counter()
        for t in range(a.trials):
            c[trial(a, a.seed * 1000003 + t, tmp)] += 1
            if sys.stderr.isatty():
                print(f"\rtrial {t + 1}/{a.trials}", end="", file=sys.stderr)
        if sys.stderr.isatty():
            print(file=sys.stderr)
    finally:
        shutil.rmtree(tmp)
    cfg = " ".join(f"{k}={v}" for k, v in vars(a).items() if k not in ("hbg", "seed"))
    print(cfg + ": " + ", ".join(f"{n} {k} ({100 * n / a.trials:.1f} %)" for k, n in c.most_common()))

if __name__ == "__main__":
    main()
