#!/usr/bin/env python3
"""bench/report.py DIR: tables and plots from the CSVs bench/run.sh wrote to DIR.

Writes DIR/summary.md (machine, failure-free ratios MPIFT/plain per test and size,
accounting, failure-path latencies MPIFT vs Open MPI 5 ULFM, dead-rank CPU, and
which targets of issue 5 are met), DIR/ff-summary.csv (medians and quartiles per
test, size, rank count and variant) and, with gnuplot, DIR/ff-time.png (time of
128 operations vs size, log-log, MPIFT vs plain: thesis figure 6.3 for each test)
and DIR/ff-ratio.png (MPIFT/plain vs size: figure 6.4).

Statistics: a sample is one block of 128 operations (bench/ff.c) or one timed
call (bench/fail.c). Medians, with the 25th-75th percentiles as the spread. The
ratio of a test and size is median(MPIFT) / median(plain); its spread is the
interquartile range of the paired ratios (repetition r and block b of MPIFT over
the same of plain: the two ran one right after the other). Python standard
library only.
"""
import csv
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict

TESTS = {1: "Allreduce", 2: "Send/Recv", 3: "Isend/Irecv+Wait", 4: "Bcast", 5: "Allreduce+Send/Recv"}
FF_TARGET = 1.05
ZOMBIE_TARGET = 0.05
# Failure-path metrics compared with the oracle (lower is better), in table order.
FAIL_METRICS = [
    ("kill_observed_recv", "kill -> every survivor observed (blocked in MPI_Recv from the victim)"),
    ("kill_observed_barrier", "kill -> every survivor observed (blocked in MPI_Barrier)"),
    ("kill_observed_first_recv", "kill -> first survivor observed (MPI_Recv)"),
    ("kill_observed_first_barrier", "kill -> first survivor observed (MPI_Barrier)"),
    ("revoke_normal", "Plan B: barrier on A before the revoke"),
    ("revoke_revoked", "Plan B: the revoked barrier (slowest rank)"),
    ("revoke_call", "Plan B: MPIX_Comm_revoke call at the initiator"),
    ("revoke_post1", "Plan B: 1st barrier on B"),
    ("revoke_post2", "Plan B: 2nd barrier on B"),
    ("revoke_post5", "Plan B: 5th barrier on B"),
    ("agree_nofail", "agree, nobody dead (reference)"),
    ("agree_first", "first agree after the failure (unacknowledged)"),
    ("agree", "agree after failure_ack, one member dead"),
    ("shrink_nofail", "shrink, nobody dead (reference)"),
    ("shrink_first", "first shrink after the failure"),
    ("shrink", "shrink, one member dead"),
    ("agree_nofail_lastin", "agree, nobody dead, from the last survivor's start"),
    ("agree_lastin", "agree after failure_ack, from the last survivor's start"),
    ("shrink_nofail_lastin", "shrink, nobody dead, from the last survivor's start"),
    ("shrink_lastin", "shrink, one member dead, from the last survivor's start"),
]
# The ones the target "no slower than ULFM" is about.
FAIL_TARGETS = ["kill_observed_recv", "kill_observed_barrier", "revoke_revoked", "agree_first", "agree",
                "shrink_first", "shrink"]


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r and r.get("variant") != "variant"]


def quantiles(xs):
    """(p25, median, p75) of a non-empty list."""
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def fmt_time(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def fmt_size(n):
    return f"2^{n.bit_length() - 1}" if n >= 1024 else str(n)


prefix_ff = "ff-np"


def failure_free(d, md):
    """Tables of the failure-free benchmark; returns (worst ratio at the largest np, rows for plots)."""
    nps = sorted({int(f[len(prefix_ff):-4]) for f in os.listdir(d) if f.startswith(prefix_ff) and f.endswith(".csv")})
    summary_rows = []
    per = {}  # (np, test, size) -> dict
    ctrl = defaultdict(lambda: [0, 0, 0])  # np -> [ctrl msgs, app calls, dummy joins]
    # Variants: plain, mpift, and mimic (bench/ff.c --mimic; optional).
    for np_ in nps:
        samples = defaultdict(list)
        paired = defaultdict(dict)
        for r in read_csv(os.path.join(d, f"{prefix_ff}{np_}.csv")):
            key = (int(r["test"]), int(r["size_ints"]))
            t = float(r["time_s"])
            samples[key + (r["variant"],)].append(t)
            paired[key].setdefault((r["rep"], r["block"]), {})[r["variant"]] = t
            if r["variant"] == "mpift":
                c = ctrl[np_]
                c[0] += int(r["ctrl_msgs"])
                c[1] += int(r["app_calls"])
                c[2] += int(r["dummy_joins"])
        for (test, size) in sorted(paired):
            p = samples.get((test, size, "plain"), [])
            m = samples.get((test, size, "mpift"), [])
            if not p or not m:
                continue
            qp, qm = quantiles(p), quantiles(m)
            ratios = [v["mpift"] / v["plain"] for v in paired[(test, size)].values() if "mpift" in v and "plain" in v and v["plain"] > 0]
            qr = quantiles(ratios) if ratios else (float("nan"),) * 3
            ratio = qm[1] / qp[1] if qp[1] > 0 else float("nan")
            mim = samples.get((test, size, "mimic"), [])
            per[(np_, test, size)] = dict(plain=qp, mpift=qm, ratio=ratio, pr=qr, n=min(len(p), len(m)),
                                          mimic=quantiles(mim) if mim else None)
            summary_rows.append([np_, test, size, len(p), len(m), *qp, *qm, ratio, qr[0], qr[2],
                                 per[(np_, test, size)]["mimic"][1] if mim else ""])
    with open(os.path.join(d, "ff-summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["np", "test", "size_ints", "n_plain", "n_mpift", "plain_p25_s", "plain_median_s", "plain_p75_s",
                    "mpift_p25_s", "mpift_median_s", "mpift_p75_s", "ratio_of_medians", "paired_ratio_p25",
                    "paired_ratio_p75", "mimic_median_s"])
        for row in summary_rows:
            w.writerow([f"{x:.9g}" if isinstance(x, float) else x for x in row])
    if not per:
        md.append("No failure-free results.\n")
        return None, nps, per, ctrl
    md.append("## Failure-free: MPIFT / plain MPI (tests 1-5 of thesis 6.2.1)\n")
    md.append("Cell: ratio of the medians of the time of 128 operations, MPIFT over plain Open MPI "
              "(in brackets: 25th-75th percentile of the paired ratios). **Bold**: above the "
              f"{FF_TARGET} target. Times per size: `ff-summary.csv`; plots: `ff-time.png`, `ff-ratio.png`.\n")
    sizes = sorted({k[2] for k in per})
    worst = {}
    for np_ in nps:
        md.append(f"\n### {np_} ranks\n")
        md.append("| size (ints) | " + " | ".join(f"{t} {TESTS[t]}" for t in TESTS) + " |")
        md.append("|---:|" + "---:|" * len(TESTS))
        for s in sizes:
            cells = []
            for t in TESTS:
                e = per.get((np_, t, s))
                if not e:
                    cells.append("")
                    continue
                worst[np_] = max(worst.get(np_, 0), e["ratio"])
                r = f"{e['ratio']:.2f}"
                if e["ratio"] > FF_TARGET:
                    r = f"**{r}**"
                cells.append(f"{r} [{e['pr'][0]:.2f}-{e['pr'][2]:.2f}]")
            md.append(f"| {fmt_size(s)} | " + " | ".join(cells) + " |")
        md.append("")
        md.append("Median time of 128 operations, plain / MPIFT, at sizes 1 and the largest:\n")
        md.append("| test | " + " | ".join(f"{fmt_size(s)}: plain / MPIFT" for s in (sizes[0], sizes[-1])) + " |")
        md.append("|---|---|---|")
        for t in TESTS:
            cells = []
            for s in (sizes[0], sizes[-1]):
                e = per.get((np_, t, s))
                cells.append(f"{fmt_time(e['plain'][1])} / {fmt_time(e['mpift'][1])}" if e else "")
            md.append(f"| {t} {TESTS[t]} | " + " | ".join(cells) + " |")
        md.append("")
        mimic_sizes = [x for x in sizes if x <= 4096 and per.get((np_, 1, x), {}).get("mimic")]
        if mimic_sizes:
            md.append("Where the overhead comes from: *mimic* is the plain program with MPIFT's extra MPI "
                      "state but none of its code (an RMA window in a lock_all epoch, a duplicate of the "
                      "world with a receive always posted, blocking Send/Recv as Isend/Irecv + MPI_Waitany "
                      "over {request, that receive}). Cell: mimic/plain, then MPIFT/mimic (medians).\n")
            md.append("| size (ints) | " + " | ".join(f"{t} {TESTS[t]}" for t in TESTS) + " |")
            md.append("|---:|" + "---:|" * len(TESTS))
            for x in mimic_sizes:
                cells = []
                for t in TESTS:
                    e = per.get((np_, t, x))
                    if not e or not e["mimic"]:
                        cells.append("")
                        continue
                    cells.append(f"{e['mimic'][1] / e['plain'][1]:.2f}, {e['mpift'][1] / e['mimic'][1]:.2f}")
                md.append(f"| {fmt_size(x)} | " + " | ".join(cells) + " |")
            md.append("")
    return worst, nps, per, ctrl


def accounting(d, md, ctrl):
    rows = [r for r in read_csv(os.path.join(d, "acct.csv")) if r["variant"] == "mpift"]
    md.append("## Accounting (MPIFT's own traffic and objects, `Sim_FT_stats`)\n")
    md.append("| ranks | control messages / application call | dummy joins | application calls counted "
              "| layer communicators (program has 2 / 6) | layer windows | MPI_Init collectives |")
    md.append("|---:|---:|---:|---:|---|---:|---:|")
    result = {"ctrl": 0, "comms": 0.0}
    for np_ in sorted(ctrl):
        c = ctrl[np_]
        per_call = c[0] / c[1] if c[1] else float("nan")
        result["ctrl"] = max(result["ctrl"], c[0])
        a = [r for r in rows if int(r["np"]) == np_]
        if a:
            lc = sorted({(r["layer_comms"], r["user_comms"], r["layer_comms_4dups"], r["user_comms_4dups"]) for r in a})
            comm = "; ".join(f"{x[0]} with {x[1]} user comms, {x[2]} with {x[3]}" for x in lc)
            for x in lc:
                result["comms"] = max(result["comms"], int(x[0]) / max(1, int(x[1])), int(x[2]) / max(1, int(x[3])))
            win = ",".join(sorted({r["layer_windows"] for r in a}))
            ic = ",".join(sorted({r["init_collectives"] for r in a}))
        else:
            comm = win = ic = "?"
        md.append(f"| {np_} | {c[0]} / {c[1]} = {per_call:.3g} | {c[2]} | {c[1]} | {comm} | {win} | {ic} |")
    md.append("\nControl messages: one-sided operations on another process's window region plus wake "
              "messages, summed over all ranks and every timed block; application calls: the MPI calls "
              "the benchmark made in those blocks. The program's communicators are MPI_COMM_WORLD and "
              "MPI_COMM_SELF, then 4 duplicates of the world.\n")
    return result


def failure_path(d, md):
    nps = sorted({int(f[len("fail-np"):-4]) for f in os.listdir(d) if f.startswith("fail-np") and f.endswith(".csv")})
    ratios = {}
    early = defaultdict(lambda: defaultdict(int))
    ctl = defaultdict(list)
    md.append("## Failure path: MPIFT vs Open MPI 5 ULFM (`bench/fail.c`)\n")
    md.append("Median [25th-75th percentile] (n samples); ratio = median MPIFT / median ULFM. "
              "Each latency is the slowest survivor's (revoke: slowest rank's), timed from a common start.\n")
    for np_ in nps:
        rows = read_csv(os.path.join(d, f"fail-np{np_}.csv"))
        vals = defaultdict(list)
        for r in rows:
            if r["metric"] == "revoke_early_count":
                early[np_][r["variant"]] += int(float(r["value_s"]))
                continue
            if r["metric"].startswith("ctl_"):
                ctl[(np_, r["metric"])].append(float(r["value_s"]))
                continue
            vals[(r["variant"], r["metric"])].append(float(r["value_s"]))
        md.append(f"\n### {np_} ranks\n")
        md.append("| what | MPIFT | ULFM | MPIFT/ULFM |")
        md.append("|---|---:|---:|---:|")
        for m, label in FAIL_METRICS:
            cells = []
            med = {}
            for v in ("mpift", "ulfm"):
                xs = vals.get((v, m))
                if xs:
                    q = quantiles(xs)
                    med[v] = q[1]
                    cells.append(f"{fmt_time(q[1])} [{fmt_time(q[0])}-{fmt_time(q[2])}] ({len(xs)})")
                else:
                    cells.append("-")
            ratio = med["mpift"] / med["ulfm"] if len(med) == 2 and med["ulfm"] > 0 else None
            if ratio is not None:
                ratios[(np_, m)] = ratio
            rtxt = "" if ratio is None else (f"**{ratio:.2f}**" if ratio > 1 and m in FAIL_TARGETS else f"{ratio:.2f}")
            md.append(f"| {label} (`{m}`) | {cells[0]} | {cells[1]} | {rtxt} |")
        e = early.get(np_)
        if e:
            md.append("\nRanks whose last barrier before the revoke returned MPI_ERR_REVOKED (the revoke "
                      "arrived while it was pending): " + ", ".join(f"{v} {n}" for v, n in sorted(e.items())) + ".")
        md.append("")
    control_traffic(nps, ctl, md)
    return nps, ratios


def control_traffic(nps, ctl, md):
    """MPIFT's own traffic per operation vs n (the ctl_ rows of bench/fail.c)."""
    if not ctl:
        return
    md.append("### MPIFT's control traffic per operation\n")
    md.append("Summed over the ranks taking part (Sim_FT_stats), median over the runs: one-sided "
              "operations / wake messages / dummy collective joins. revoke: one Plan B repetition "
              "(revoke, the revoked barrier, the barriers on B); agree: after failure_ack with one "
              "member dead; shrink: with one member dead.\n")
    md.append("| ranks | revoke | agree | shrink |")
    md.append("|---:|---:|---:|---:|")
    for np_ in nps:
        cells = []
        for phase in ("revoke", "agree", "shrink"):
            parts = []
            for what in ("rma", "wake", "dummy"):
                xs = ctl.get((np_, f"ctl_{what}_{phase}"))
                parts.append(f"{statistics.median(xs):.1f}" if xs else "-")
            cells.append(" / ".join(parts))
        md.append(f"| {np_} | " + " | ".join(cells) + " |")
    md.append("")


PARTS = [
    ("barrier", "MPI_Barrier among the survivors"),
    ("allreduce", "MPI_Allreduce of one int among the survivors"),
    ("create_group", "MPI_Comm_create_group of the survivors (shrink's construction)"),
    ("dup", "MPI_Comm_dup of the survivors' communicator"),
    ("rget", "MPI_Rget of 8 bytes + MPI_Wait (one)"),
    ("fetch_op", "MPI_Fetch_and_op + MPI_Win_flush (one)"),
    ("handoff", "hand-off: a store seen by a peer polling with MPI_Rget + sched_yield"),
]


def host_parts(d, md):
    """bench/parts.c: the host MPI's cost of the failure path's pieces (plain MPI)."""
    files = sorted(f for f in os.listdir(d) if f.startswith("parts-np") and f.endswith(".csv"))
    if not files:
        return
    md.append("### What the host MPI charges for the pieces (`bench/parts.c`, plain MPI)\n")
    md.append("The last rank sleeps outside MPI (the dead rank); the survivors' slowest time, "
              "median [25th-75th percentile] (n samples).\n")
    for f in files:
        np_ = int(f[len("parts-np"):-4])
        vals = defaultdict(list)
        for r in read_csv(os.path.join(d, f)):
            vals[r["metric"]].append(float(r["value_s"]))
        md.append(f"| {np_} ranks | time |")
        md.append("|---|---:|")
        def ft(x):
            return f"{x * 1e9:.0f} ns" if x < 1e-6 else fmt_time(x)
        for m, label in PARTS:
            if vals.get(m):
                q = quantiles(vals[m])
                md.append(f"| {label} (`{m}`) | {ft(q[1])} [{ft(q[0])}-{ft(q[2])}] ({len(vals[m])}) |")
        md.append("")


def zombie(d, md):
    rows = read_csv(os.path.join(d, "zombie.csv"))
    md.append("## Dead rank's CPU while the survivors sleep outside MPI\n")
    frac = None
    if rows:
        for r in rows:
            frac = float(r["cpu_fraction"])
            md.append(f"- {r['np']} ranks: the dead rank used {float(r['cpu_s']):.3f} s of CPU in the "
                      f"{float(r['wall_s']):.2f} s from its death to its exit = **{100 * frac:.2f} %** of a core "
                      f"(measured in the process: getrusage at death and at exit).")
    times = sorted(f for f in os.listdir(d) if f.startswith("zombie-time-"))
    if times:
        md.append("- `/usr/bin/time` per rank over the whole run (elapsed, user, system seconds; the dead "
                  "rank is the last; its figures include its life before the death):")
        for f in times:
            with open(os.path.join(d, f)) as fh:
                line = fh.read().strip().splitlines()
            md.append(f"  - rank {f.rsplit('.', 1)[-1]}: {line[-1] if line else '?'}")
    if not rows and not times:
        md.append("No measurement.")
    md.append("")
    return frac


def plots(d, nps, per):
    gp = shutil.which("gnuplot")
    if not gp:
        print("report.py: gnuplot not found (make bench installs gnuplot-nox): no PNGs", file=sys.stderr)
        return False
    data = os.path.join(d, "plot-data")
    os.makedirs(data, exist_ok=True)
    sizes = sorted({k[2] for k in per})
    for t in TESTS:
        with open(os.path.join(data, f"t{t}.dat"), "w") as f:
            f.write("# size " + " ".join(f"plain{n} mpift{n} ratio{n}" for n in nps) + "\n")
            for s in sizes:
                cols = []
                for n in nps:
                    e = per.get((n, t, s))
                    cols += [f"{e['plain'][1]:.9g}", f"{e['mpift'][1]:.9g}", f"{e['ratio']:.6g}"] if e else ["NaN"] * 3
                f.write(f"{s} " + " ".join(cols) + "\n")
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

    def script(kind):
        out = os.path.join(d, f"ff-{kind}.png")
        lines = [f"set terminal pngcairo size 1500,950 font ',10'", f"set output '{out}'",
                 "set multiplot layout 2,3 title " +
                 ("'Time of 128 operations vs message size: MPIFT (solid) and plain Open MPI (dashed)'"
                  if kind == "time" else
                  f"'MPIFT / plain Open MPI, ratio of median times (target {FF_TARGET})'"),
                 "set logscale x 2", "set format x '2^{%L}'", "set xlabel 'message size (ints)'", "set grid",
                 "set key top left"]
        if kind == "time":
            lines += ["set logscale y 10", "set format y '10^{%L}'", "set ylabel 'seconds'"]
        else:
            # Log scale: 2x slower and 2x faster are as far from 1.
            lines += ["set logscale y 2", "set format y '%g'", "set ylabel 'MPIFT / plain (log scale)'"]
        for t in TESTS:
            lines.append(f"set title 'Test {t}: {TESTS[t]}'")
            parts = []
            for i, n in enumerate(nps):
                base = 2 + 3 * i
                c = colors[i % len(colors)]
                f = os.path.join(data, f"t{t}.dat")
                if kind == "time":
                    parts.append(f"'{f}' u 1:{base + 1} w lp lw 2 pt 7 lc rgb '{c}' t 'MPIFT, {n} ranks'")
                    parts.append(f"'{f}' u 1:{base} w lp lw 2 dt 2 pt 6 lc rgb '{c}' t 'plain, {n} ranks'")
                else:
                    parts.append(f"'{f}' u 1:{base + 2} w lp lw 2 pt 7 lc rgb '{c}' t '{n} ranks'")
            if kind == "ratio":
                parts.append(f"{FF_TARGET} w l lw 1 dt 3 lc rgb 'black' t 'target {FF_TARGET}'")
                parts.append("1 w l lw 1 lc rgb 'gray' notitle")
            lines.append("plot " + ", ".join(parts))
        lines.append("unset multiplot")
        return "\n".join(lines) + "\n"

    ok = True
    for kind in ("time", "ratio"):
        r = subprocess.run([gp], input=script(kind), text=True, capture_output=True)
        if r.returncode != 0:
            print(f"report.py: gnuplot failed for ff-{kind}.png:\n{r.stderr}", file=sys.stderr)
            ok = False
    return ok


def main():
    if len(sys.argv) != 2:
        print("usage: report.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    md = ["# MPIFT benchmark results\n"]
    machine = os.path.join(d, "machine.txt")
    if os.path.exists(machine):
        with open(machine) as f:
            md.append("```\n" + f.read().strip() + "\n```\n")
    worst, nps, per, ctrl = failure_free(d, md)
    acct = accounting(d, md, ctrl)
    fnps, fratios = failure_path(d, md)
    host_parts(d, md)
    frac = zombie(d, md)
    errors = os.path.join(d, "errors.txt")
    if os.path.exists(errors) and os.path.getsize(errors) > 0:
        with open(errors) as f:
            md.append("## Runs that failed\n\n```\n" + f.read().strip() + "\n```\n")

    # Targets (issue 5), judged at the largest rank count measured.
    md.append("## Targets (issue 5)\n")
    top = max(nps) if nps else None
    if worst and top in worst:
        bad = sorted(((e["ratio"], t, s) for (n, t, s), e in per.items() if n == top and e["ratio"] > FF_TARGET),
                     reverse=True)
        verdict = "met" if not bad else f"**missed** in {len(bad)} of {sum(1 for k in per if k[0] == top)} cells"
        md.append(f"- Failure-free ratio <= {FF_TARGET} for every test and size at {top} ranks: {verdict} "
                  f"(worst {worst[top]:.2f}" + (f": test {bad[0][1]}, {bad[0][2]} ints" if bad else "") + ").")
    md.append(f"- 0 control messages per application operation: {'met' if acct['ctrl'] == 0 else '**missed**'} "
              f"({acct['ctrl']} control messages in all timed blocks).")
    md.append(f"- <= 1 extra communicator per user communicator: {'met' if acct['comms'] <= 1 else '**missed**'} "
              f"(at most {acct['comms']:.2f} layer communicators per program communicator).")
    ftop = max(fnps) if fnps else None
    if ftop is not None:
        got = [(m, fratios[(ftop, m)]) for m in FAIL_TARGETS if (ftop, m) in fratios]
        slower = [(m, r) for m, r in got if r > 1]
        if got:
            md.append(f"- Failure path at {ftop} ranks no slower than Open MPI 5 ULFM: "
                      + ("met" if not slower else "**missed** for " + ", ".join(f"`{m}` ({r:.2f}x)" for m, r in slower))
                      + "; ratios: " + ", ".join(f"`{m}` {r:.2f}" for m, r in got) + ".")
        else:
            md.append("- Failure path vs ULFM: no oracle measurement.")
    if frac is not None:
        md.append(f"- Dead rank idle <= {100 * ZOMBIE_TARGET:.0f} % of a core: "
                  f"{'met' if frac <= ZOMBIE_TARGET else '**missed**'} ({100 * frac:.2f} %).")
    md.append("")
    ok = plots(d, nps, per) if per else False
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(md))
    print(f"report.py: wrote {os.path.join(d, 'summary.md')}" + (" and the PNGs" if ok else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
