#!/usr/bin/env python3
"""Per-test outcomes of mpi4py's test suite, from unittest's verbose output (issue 33).

  outcomes.py parse RUNDIR            print RUNDIR's outcomes (lines "NP TEST OUTCOME"),
                                      write RUNDIR/details.json (error texts, skip reasons)
  outcomes.py merge FILE...           merge runs of the same mode: a test whose outcome
                                      differs between them gets every outcome seen, a|b
  outcomes.py compare PLAIN RUNDIR ALLOWED TBL
                                      MPIFT's outcomes (RUNDIR) against the plain file
  outcomes.py tally FILE...           ok/FAIL/ERROR/skipped/... per np, side by side

RUNDIR holds np<N>/<module>/ with rank<R>.log (one per rank: that rank's stdout and
stderr), mpiexec.log (the launcher's own output), rc (mpiexec's exit status under
timeout; 124 and 137 are the timeout) and seconds.

Outcomes per test: ok, FAIL, ERROR, skipped, xfail (expected failure), xpass
(unexpected success), and for a test that started but did not finish, the module's
end: timeout or crash. A test's subtests count toward it. With several ranks the
worst outcome over the ranks is the test's. Every module also has a line
"NP MODULE.py done|timeout|crash": done when mpiexec exited 0 or 1 (1: some test
failed) and every rank printed unittest's summary; a test the module never reached
(on any rank) has no line of its own.
"""
import fnmatch
import json
import os
import re
import sys

ORDER = ["ok", "xfail", "skipped", "xpass", "FAIL", "ERROR", "timeout", "crash"]
RANK = {o: i for i, o in enumerate(ORDER)}

START = re.compile(r"^(?:  )?(\w+) \(((?:\w+\.)+\w+)\)(.*)$")
STATUS = re.compile(r"^(ok|FAIL|ERROR|skipped (?:'.*'|\".*\")|expected failure|unexpected success)\s*$")
SEP1 = "=" * 70
SEP2 = "-" * 70
SUMMARY = re.compile(r"^Ran \d+ tests? in [\d.]+s$", re.M)
VERDICT = re.compile(r"^(OK|FAILED)\b", re.M)
BLOCK_HEAD = re.compile(r"^(ERROR|FAIL|UNEXPECTED SUCCESS): (\w+) \(((?:\w+\.)+\w+)\)")


def status_outcome(text):
    if text == "ok":
        return "ok", None
    if text in ("FAIL", "ERROR"):
        return text, None
    if text == "expected failure":
        return "xfail", None
    if text == "unexpected success":
        return "xpass", None
    if text.startswith("skipped "):
        return "skipped", text[len("skipped "):].strip()[1:-1]
    return None, None


def parse_log(text):
    """One rank's log: ({test: (outcome, skip reason)}, test in progress, complete, {test: error text})."""
    results = {}
    current = None  # test id waiting for its status
    last_started = None
    body, _, tail = text.partition("\n" + SEP1 + "\n")
    if not tail:
        body, tail = text, ""

    def record(test, status):
        outcome, reason = status_outcome(status)
        if outcome is None:
            return False
        old = results.get(test)
        if old is None or RANK[outcome] > RANK[old[0]]:
            results[test] = (outcome, reason)
        return True

    for line in body.split("\n"):
        m = START.match(line)
        if m:
            test, rest = m.group(2), m.group(3)
            last_started = test
            current = test
            if " ... " in rest:
                if record(test, rest.rsplit(" ... ", 1)[1].strip()):
                    current = None
            elif rest.endswith(" ..."):
                pass
            continue
        if current is None:
            continue
        if " ... " in line:
            if record(current, line.rsplit(" ... ", 1)[1].strip()):
                current = None
            continue
        s = STATUS.match(line.strip())
        if s and record(current, s.group(1)):
            current = None
    complete = bool(SUMMARY.search(text)) and bool(VERDICT.search(text))
    in_progress = last_started if last_started is not None and last_started not in results else None
    if current is not None and current not in results:
        in_progress = current
    errors = {}
    if tail:
        blocks = (SEP1 + "\n" + tail).split(SEP1 + "\n")
        for b in blocks:
            m = BLOCK_HEAD.match(b)
            if not m:
                continue
            test = m.group(3)
            text_b = b.split(SEP2 + "\n", 1)[1] if SEP2 + "\n" in b else b
            text_b = text_b.split("\n" + SEP2 + "\nRan ")[0]
            lines = [ln for ln in text_b.rstrip().split("\n") if ln.strip()]
            errors.setdefault(test, []).append("\n".join(lines[-6:]))
    return results, in_progress, complete, errors


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def module_dirs(rundir):
    for npd in sorted(os.listdir(rundir)):
        if not re.fullmatch(r"np\d+", npd):
            continue
        for mod in sorted(os.listdir(os.path.join(rundir, npd))):
            d = os.path.join(rundir, npd, mod)
            if os.path.isdir(d):
                yield int(npd[2:]), mod, d


def parse_module(np, mod, d):
    rc_text = read(os.path.join(d, "rc")).strip()
    rc = int(rc_text) if rc_text.lstrip("-").isdigit() else None
    ranks = []
    for r in range(np):
        ranks.append(parse_log(read(os.path.join(d, f"rank{r}.log"))))
    if rc in (124, 137):
        status = "timeout"
    elif rc in (0, 1) and all(c for _, _, c, _ in ranks):
        status = "done"
    else:
        status = "crash"
    tests = {}
    for results, in_progress, complete, errors in ranks:
        seen = dict(results)
        if in_progress is not None:
            seen[in_progress] = (status if status != "done" else "crash", None)
        for t, (o, reason) in seen.items():
            e = tests.setdefault(t, {"outcome": o, "reason": reason, "error": []})
            if RANK[o] > RANK[e["outcome"]]:
                e["outcome"], e["reason"] = o, reason
            for txt in errors.get(t, []):
                if txt not in e["error"]:
                    e["error"].append(txt)
    # A rank that ended early never reports the tests the others ran after its end.
    if status != "done":
        for t, e in tests.items():
            if any(t not in res and t != ip for res, ip, _, _ in ranks):
                if RANK[status] > RANK[e["outcome"]]:
                    e["outcome"], e["reason"] = status, None
    return status, rc, tests


def cmd_parse(rundir):
    lines, details = [], {}
    for np, mod, d in module_dirs(rundir):
        status, rc, tests = parse_module(np, mod, d)
        lines.append((np, mod + ".py", status))
        details[f"{np} {mod}.py"] = {"rc": rc, "seconds": read(os.path.join(d, "seconds")).strip()}
        for t, e in tests.items():
            lines.append((np, t, e["outcome"]))
            details[f"{np} {t}"] = e
    for np, t, o in sorted(lines):
        print(np, t, o)
    with open(os.path.join(rundir, "details.json"), "w") as f:
        json.dump(details, f, indent=1, sort_keys=True)


def load(path):
    out = {}
    for line in read(path).splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        np, t, o = line.split()
        out[(int(np), t)] = set(o.split("|"))
    return out


def cmd_merge(paths):
    runs = [load(p) for p in paths]
    keys = set().union(*runs)
    for np, t in sorted(keys):
        seen = set().union(*(r.get((np, t), set()) for r in runs))
        print(np, t, "|".join(sorted(seen, key=lambda o: RANK.get(o, 99) if o != "done" else -1)))


def load_allowed(path, tbl_path):
    """The allowed skips: lines 'SKIP-REASON MPI_FUNCTION [# note]'; each function must be
    in mpi4_not_covered.tbl (MPI-4.0 functions outside MPIFT's scope)."""
    tbl = set()
    for line in read(tbl_path).splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("["):
            tbl.update(line.split())
    allowed, problems = {}, []
    for n, line in enumerate(read(path).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        reason, *funcs = line.split()
        for f in funcs:
            if f not in tbl:
                problems.append(f"{path}:{n}: {f} is not in {tbl_path}")
        allowed[reason] = funcs
    return allowed, problems


FRAME = re.compile(r"^\[[^\]]+\] \[ *\d+\] ")  # a line of Open MPI's backtrace


def tail(path, n):
    lines = [ln for ln in read(path).rstrip("\n").split("\n") if not FRAME.match(ln)]
    return "\n".join(lines[-n:]) if lines != [""] else "(empty)"


def crash_note(d, np):
    """The first line a crashed or hung module printed after unittest's last word."""
    for r in range(np):
        lines = [ln for ln in read(os.path.join(d, f"rank{r}.log")).split("\n") if not FRAME.match(ln)]
        last = -1
        for i, ln in enumerate(lines):
            if START.match(ln) or SUMMARY.match(ln) or VERDICT.match(ln) or STATUS.match(ln.strip()):
                last = i
        rest = [ln.strip() for ln in lines[last + 1:] if ln.strip()]
        if rest:
            return rest[0]
    return ""


def error_line(text):
    """The line of a traceback that says what went wrong."""
    lines = text.strip().split("\n")
    for ln in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Failure|Exit)\b", ln):
            return ln
    return lines[-1]


def load_version_path(path, mpi):
    """Tests allowed to take their MPI-3.1 path on `mpi`: lines 'MPI PATTERN OUTCOME'."""
    out = []
    for line in read(path).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            m, pattern, outcome = line.split()
            if m == mpi:
                out.append((pattern, outcome))
    return out


def cmd_compare(plain_path, rundir, allowed_path, tbl_path):
    plain = load(plain_path)
    mpi = os.path.basename(plain_path)[len("plain-"):-len(".txt")]
    version_path = load_version_path(os.path.join(os.path.dirname(allowed_path), "mpi31-path.txt"), mpi)
    mine = load(os.path.join(rundir, "outcomes.txt"))
    with open(os.path.join(rundir, "details.json")) as f:
        details = json.load(f)
    allowed, problems = load_allowed(allowed_path, tbl_path)
    for p in problems:
        print("ERROR", p)
    ran = {(np, t[:-3]) for np, t in mine if t.endswith(".py")}  # (np, module) MPIFT ran
    plain_timeouts = {(np, t[:-3]) for (np, t), o in plain.items() if t.endswith(".py") and "timeout" in o}
    keys = sorted({k for k in plain if (k[0], k[1].split(".")[0]) in ran} | set(mine))
    passed, failed, allowed_list, diffs = 0, 0, [], []
    for np, t in keys:
        mod = t.split(".")[0]
        p = plain.get((np, t), {"absent"})
        (mo,) = mine.get((np, t), {"absent"})
        e = details.get(f"{np} {t}", {})
        if mo in p:
            if not t.endswith(".py"):
                passed += 1
            continue
        if (np, mod) in plain_timeouts:
            allowed_list.append((np, t, p, mo, f"{mod} times out on plain too"))
            passed += not t.endswith(".py")
            continue
        if mod == "test_ulfm" and p == {"skipped"} and mo == "ok":
            allowed_list.append((np, t, p, mo, "ULFM: plain MPI has none (mpi4py skips), MPIFT provides it"))
            passed += 1
            continue
        if mo == "skipped" and "skipped" not in p and e.get("reason") in allowed:
            funcs = ", ".join(allowed[e["reason"]])
            allowed_list.append((np, t, p, mo, f"skipped '{e['reason']}': needs {funcs} (mpi4_not_covered.tbl)"))
            passed += 1
            continue
        if any(fnmatch.fnmatchcase(t, pat) and mo == want for pat, want in version_path):
            allowed_list.append((np, t, p, mo, "its MPI-3.1 path: MPIFT says MPI 3.1 (tests/mpi4py/mpi31-path.txt)"))
            passed += 1
            continue
        failed += 1
        diffs.append((np, t, p, mo, e))
    if allowed_list:
        print(f"Allowed differences ({len(allowed_list)}):")
        for np, t, p, mo, why in allowed_list:
            print(f"  np={np} {t}: plain {'|'.join(sorted(p))}, MPIFT {mo}: {why}")
    if diffs:
        # The modules' output first, the list of differences last (nearest the summary).
        for np, mod in sorted({(np, t.split(".")[0]) for np, t, _, _, _ in diffs}):
            d = os.path.join(rundir, f"np{np}", mod)
            (st,) = mine.get((np, mod + ".py"), {"?"})
            print(f"--- np={np} {mod}: {st}, exit status {read(os.path.join(d, 'rc')).strip()}, "
                  f"{read(os.path.join(d, 'seconds')).strip()} s; the tail of its output ({d}):")
            for r in range(np):
                print(f"  [rank {r}]")
                print("    " + tail(os.path.join(d, f"rank{r}.log"), 12).replace("\n", "\n    "))
            print("  [mpiexec]")
            print("    " + tail(os.path.join(d, "mpiexec.log"), 12).replace("\n", "\n    "))
        print(f"Differences ({len(diffs)}):")
        shown, absent = set(), {}
        for np, t, p, mo, e in diffs:
            mod = t.split(".")[0]
            (st,) = mine.get((np, mod + ".py"), {"?"})
            if mo == "absent" and st in ("crash", "timeout"):
                absent.setdefault((np, mod, st), []).append((t, p))
                continue
            errs = e.get("error", [])
            last = error_line(errs[0]) if errs else ""
            if not last and st in ("crash", "timeout"):
                d = os.path.join(rundir, f"np{np}", mod)
                note = crash_note(d, np)
                last = f"module {st}, exit status {read(os.path.join(d, 'rc')).strip()}" + (f": {note}" if note else "")
            extra = f": skipped {e['reason']!r}" if e.get("reason") else (f": {last}" if last else "")
            print(f"  DIFF np={np} {t}: plain {'|'.join(sorted(p))}, MPIFT {mo}{extra}")
            if errs and errs[0] not in shown:  # each traceback once
                shown.add(errs[0])
                print("       | " + errs[0].replace("\n", "\n       | "))
        for (np, mod, st), tests in sorted(absent.items()):
            counts = {}
            for _, p in tests:
                k = "|".join(sorted(p))
                counts[k] = counts.get(k, 0) + 1
            plain_s = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            print(f"  DIFF np={np} {mod}: {len(tests)} tests not run after the module's {st} (plain: {plain_s})")
    failed += len(problems)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_tally(named):
    """tally LABEL=FILE ...: per np, count outcomes (a flaky test counts as its worst)."""
    cols = []
    for arg in named:
        label, path = arg.split("=", 1)
        counts = {}
        for (np, t), o in load(path).items():
            if t.endswith(".py"):
                key = "modules " + max(o, key=lambda x: {"done": 0, "timeout": 1, "crash": 2}.get(x, 3))
            else:
                key = max(o, key=lambda x: RANK.get(x, 99))
                if len(o) > 1:
                    counts[(np, "flaky")] = counts.get((np, "flaky"), 0) + 1
            counts[(np, key)] = counts.get((np, key), 0) + 1
        cols.append((label, counts))
    nps = sorted({np for _, c in cols for np, _ in c})
    kinds = ORDER + ["flaky", "modules done", "modules timeout", "modules crash"]
    print("np  outcome          " + "".join(f"{label:>12}" for label, _ in cols))
    for np in nps:
        for k in kinds:
            vals = [c.get((np, k), 0) for _, c in cols]
            if any(vals):
                print(f"{np:<3} {k:<16} " + "".join(f"{v:>12}" for v in vals))


def main(argv):
    if len(argv) >= 2 and argv[0] == "parse":
        cmd_parse(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "merge":
        cmd_merge(argv[1:])
        return 0
    if len(argv) == 5 and argv[0] == "compare":
        return cmd_compare(*argv[1:])
    if len(argv) >= 2 and argv[0] == "tally":
        cmd_tally(argv[1:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
