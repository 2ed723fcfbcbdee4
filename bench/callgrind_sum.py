#!/usr/bin/env python3
"""bench/callgrind_sum.py EXE FILE...: instructions per dump in callgrind output files.

For every FILE (one dump each, as written by CALLGRIND_DUMP_STATS_AT in
bench/calls.c) prints one line

    <trigger> <total Ir> <own Ir>

where <trigger> is the dump's "desc: Trigger: Client Request: NAME" name (the
operation; "-" for other triggers, e.g. program termination), total is the sum of
all self costs (checked against the file's summary/totals line) and own the sum of
the self costs in the object EXE (the executable: bench/calls.c and, statically
linked, MPIFT; not libmpi*, libc, ld.so, ...). Parsed by hand rather than with
callgrind_annotate: name compression ("ob=(N) name" once, "ob=(N)" after; ob= and
cob= share ids) and the inclusive cost line after each "calls=" line, which must not
count as self cost. Used by bench/callgrind.sh.
"""
import os
import sys


def parse(path, exe):
    names = {}  # object id -> name (ob= and cob= share the table)
    obj = None
    trigger = "-"
    npos, ir_idx = 1, None
    total = own = 0
    summary = None
    skip_next_cost = False
    with open(path) as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                if skip_next_cost:  # inclusive cost of a call: not self cost
                    skip_next_cost = False
                    continue
                if ir_idx is None:
                    raise SystemExit(f"{path}: cost line before 'events:'")
                parts = line.split()
                i = npos + ir_idx
                v = int(parts[i]) if i < len(parts) else 0
                total += v
                if obj is not None and obj == exe:
                    own += v
                continue
            if line.startswith("calls="):
                skip_next_cost = True
                continue
            if line.startswith("ob=") or line.startswith("cob="):
                val = line.split("=", 1)[1].strip()
                if val.startswith("("):
                    num, _, name = val.partition(")")
                    name = name.strip()
                    if name:
                        names[num] = name
                    elif num not in names:
                        raise SystemExit(f"{path}: object id {num}) used before defined")
                    name = names[num]
                else:
                    name = val
                if line.startswith("ob="):
                    obj = os.path.realpath(name) if name.startswith("/") else name
                continue
            if line.startswith("desc: Trigger:"):
                t = line.split(":", 2)[2].strip()
                pre = "Client Request:"
                trigger = t[len(pre):].strip() if t.startswith(pre) else "-"
            elif line.startswith("positions:"):
                npos = len(line.split()[1:])
            elif line.startswith("events:"):
                ev = line.split()[1:]
                ir_idx = ev.index("Ir")
            elif line.startswith("summary:") or line.startswith("totals:"):
                summary = int(line.split()[1 + ir_idx] if len(line.split()) > 1 + ir_idx else 0)
    if summary is not None and summary != total:
        raise SystemExit(f"{path}: self costs sum to {total}, the file says {summary}")
    return trigger, total, own


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    exe = os.path.realpath(sys.argv[1])
    for p in sys.argv[2:]:
        t, total, own = parse(p, exe)
        print(t, total, own)


if __name__ == "__main__":
    main()
