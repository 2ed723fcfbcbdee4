#!/usr/bin/env bash
# tests/campaign/junit.sh <mpich|openmpi|ompi5>: mpift-campaign --junit end to end.
#
# Builds examples/master_worker.cpp against target/<mpi>/release/libmpift.a (make
# MPI=<mpi> lib first) and runs a small campaign on its workers (ranks 2 and 4: 6
# sampled kill points, 2 pairs, 2 times) with a --check that makes every run killing
# rank 2 WRONG, so the report has passes and failures. Then:
#   1. the JUnit file is valid against tests/campaign/junit.xsd (python3-xmlschema,
#      scripts/install-deps.sh: a missing validator FAILS the test, it is not skipped),
#      and a copy with a testcase's name removed is not (the check can fail);
#   2. its counts are the campaign's: testcases = runs in summary.json, failures =
#      its non-PASS runs, the same in the tests/failures attributes;
#   3. every failure says its verdict (type, message) and carries the replay command
#      of summary.json and the run directory; the names read `rank R dies at call C
#      (MPI_...)`, `rank R at call C (F) + rank S at call D (G)`, `rank R dies at T s`.
# Prints "PASS|FAIL <case>" and "N passed, M failed"; exits nonzero if any case
# failed. CAMPAIGN_KEEP=1 keeps the work directory.
set -u
cd "$(dirname "$0")/../.."
mpi=${1:-}
usage_more=''
. tests/campaign/common.sh
work=$(mktemp -d /tmp/mpift-junit.XXXXXX)
passed=0 failed=0

# The validator: Debian's python3-xmlschema is installed for /usr/bin/python3,
# which a python3 earlier on PATH (pyenv, a virtualenv) does not see.
py=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import xmlschema' 2>/dev/null; then py=$p; break; fi
done

prog=$work/master_worker
"$MPICXX" -O2 -Iinclude/compat -Iinclude -I"target/$mpi/release/include" examples/master_worker.cpp "$lib" \
  -lpthread -ldl -lm -lgcc_s -lutil -lrt -o "$prog" || { echo "cannot build master_worker" >&2; exit 1; }
xsd=$root/tests/campaign/junit.xsd
cd "$work"
job=("$MPIEXEC" -n 5 ./master_worker --kill 0)

# WRONG whenever the rule kills rank 2 (alone or in a pair); master_worker itself
# survives any worker's death, so the other runs PASS.
timeout 900 "$bin" --out c --jobs 2 --ranks 2,4 --sample 6 --pairs 2 --time 2 --seed 3 \
  --expect '\(correct\)$' --check 'case "$CAMPAIGN_KILL" in *rank=2@*) exit 1 ;; esac' \
  --junit "$work/report/junit.xml" -- "${job[@]}" > log 2>&1
status=$?
runs=$(json c/summary.json runs) pass=$(json c/summary.json PASS)
if [ -s report/junit.xml ] && [ -n "$runs" ] && [ "$runs" -ge 8 ] && [ "$pass" -lt "$runs" ] && [ "$pass" -gt 0 ] \
   && [ "$status" = 1 ]; then r=ok; else r=no; fi
check $r "campaign with --junit: $pass of $runs runs PASS, exit $status, report/junit.xml written"

# 1. Valid against the schema; a broken copy is refused (the validator really checks).
if [ -z "$py" ]; then
  echo "no python3 with the xmlschema module: install python3-xmlschema (scripts/install-deps.sh)" > log
  check no "the JUnit file is valid against tests/campaign/junit.xsd (validator missing)"
else
  "$py" -c 'import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])' "$xsd" report/junit.xml > log 2>&1
  check "$([ $? = 0 ] && echo ok || echo no)" "the JUnit file is valid against tests/campaign/junit.xsd ($("$py" -c 'import xmlschema; print("xmlschema", xmlschema.__version__)'))"
  sed '0,/<testcase name="[^"]*"/s//<testcase/' report/junit.xml > broken.xml
  "$py" -c 'import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])' "$xsd" broken.xml > log 2>&1
  check "$([ $? != 0 ] && grep -q "name" log && echo ok || echo no)" "a testcase without its name is refused by the schema"
fi

# 2. and 3. Counts, failures, names (ElementTree: part of every python3).
python3 - c/summary.json report/junit.xml > log 2>&1 <<'EOF'
import json, re, sys
import xml.etree.ElementTree as ET
summary, doc = json.load(open(sys.argv[1])), ET.parse(sys.argv[2]).getroot()
bad = []
suites = doc.findall("testsuite")
assert doc.tag == "testsuites" and len(suites) == 1, "one testsuite under testsuites"
suite = suites[0]
cases = suite.findall("testcase")
fails = [c for c in cases if c.find("failure") is not None]
runs, nonpass = summary["runs"], summary["runs"] - summary["PASS"]
print(f"{len(cases)} testcases, {len(fails)} failures; summary.json: {runs} runs, {nonpass} not PASS")
if len(cases) != runs or suite.get("tests") != str(runs) or doc.get("tests") != str(runs):
    bad.append("testcases != runs")
if len(fails) != nonpass or suite.get("failures") != str(nonpass):
    bad.append("failures != non-PASS runs")
replays = {f["replay"]: f["verdict"] for f in summary["failures"]}
for c in fails:
    f = c.find("failure")
    v, text = f.get("type"), f.text or ""
    m = re.search(r"^replay: (.*)$", text, re.M)
    if v not in ("HANG", "CRASH", "WRONG") or not f.get("message", "").startswith(v + ": "):
        bad.append(f"{c.get('name')}: type/message {v!r} {f.get('message')!r}")
    if not m or replays.get(m.group(1)) != v or "\nrun directory: " not in text:
        bad.append(f"{c.get('name')}: no replay command of summary.json or no run directory")
single = r"rank \d+ dies at call \d+ \(MPI_\w+\)"
pair = r"rank \d+ at call \d+ \(MPI_\w+\) \+ rank \d+ at call \d+ \(MPI_\w+\)"
time = r"rank \d+ dies at [0-9.]+(e-?\d+)? s"
for c in cases:
    if not re.fullmatch(f"{single}|{pair}|{time}", c.get("name", "")):
        bad.append(f"name {c.get('name')!r}")
    if c.get("classname") != "master_worker" or float(c.get("time", "-1")) < 0:
        bad.append(f"{c.get('name')}: classname {c.get('classname')!r} time {c.get('time')!r}")
kinds = [sum(bool(re.fullmatch(k, c.get("name"))) for c in cases) for k in (single, pair, time)]
if 0 in kinds:
    bad.append(f"not every kind of name present: single/pair/time = {kinds}")
if len({c.get("name") for c in cases}) != len(cases):
    bad.append("names are not unique")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
EOF
r=$([ $? = 0 ] && echo ok || echo no)
check $r "counts and failures match summary.json, names in the program's terms: $(head -n 1 log)"

echo "$passed passed, $failed failed"
if [ "${CAMPAIGN_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
[ "$failed" = 0 ]
