#!/usr/bin/env bash
# tests/adversary/run.sh <mpich|openmpi|ompi5>: the adversarial semantics mode
# (MPIFT_SEMANTICS), each choice on and off, at the MPI level.
#
# Builds tests/adversary/collectives.c (4 ranks; rank 3 dies, the survivors
# know it, then make Bcasts, an Allreduce and an Ibcast) and checks:
#   - default mode, and `adversarial:-collectives`: every survivor gets
#     MPI_ERR_PROC_FAILED from every collective (F);
#   - `adversarial` with MPIFT_SEED=5: Bcasts give success (S, data right) at some
#     survivors and F at others; never success with wrong data (W) or another
#     code (X); the Allreduce F everywhere; a second run with the same seed
#     prints the same lines, another seed other ones; the report (MPIFT_REPORT)
#     lists one choice per success told;
#   - `adversarial:bogus`: MPI_Init fails naming the token;
#   - late news (tests/adversary/late.c): a death's and a revoke's news reach
#     each rank no sooner than its drawn delay; MPIFT_LATENCY=2s:1s is refused;
#   - sends and wildcard receives (tests/adversary/p2p.c): small sends to a dead
#     rank told success, wildcard receives held until acknowledged, each on and
#     off, as the report lists;
#   - non-uniform MPI_Comm_dup (tests/adversary/dup.c), on and off;
#   - each adversarial mistake of examples/mistakes: a HANG with its findings,
#     and its fixed twin passing.
# Every mpiexec runs under `timeout` (ADVERSARY_TIMEOUT, default 60 s). Prints
# "PASS|FAIL <case>" and "N passed, M failed"; exits nonzero if any failed.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
mpi=${1:-}
. scripts/mpi-host.sh
mpi_host "$mpi" || { echo "usage: $0 <mpich|openmpi|ompi5>" >&2; exit 2; }
for v in $(env | sed -n 's/^\(MPIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset SIM_FT_TIMEOUT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
lib=$root/target/$mpi/release/libmpift.a
work=$(mktemp -d /tmp/mpift-adversary.XXXXXX)
T=${ADVERSARY_TIMEOUT:-60}
passed=0 failed=0 why=""
fail() { why="${why:+$why; }$*"; }
result() {
  if [ -z "$why" ]; then passed=$((passed + 1)); echo "PASS $mpi: $1"
  else failed=$((failed + 1)); echo "FAIL $mpi: $1: $why"; sed 's/^/    | /' "$work/out" "$work/err" 2>/dev/null | tail -n 12; fi
  why=""
}

# run SEMANTICS SEED: the program's survivor lines, sorted, in $work/out.
run() {
  rm -f "$work/r.json"
  (cd "$work" && MPIFT_SEMANTICS=$1 MPIFT_SEED=$2 MPIFT_REPORT=$work/r.json \
    timeout -k 5 "$T" "$MPIEXEC" -n 4 ./collectives > raw 2> err < /dev/null)
  status=$?
  [ "$status" -eq 124 ] || [ "$status" -eq 137 ] && fail "hung (timeout ${T}s)"
  grep '^rank [012]: ' "$work/raw" | sort > "$work/out"
  [ "$(grep -c ': OUT ' "$work/out")" -eq 3 ] || fail "want 3 survivor lines with OUT"
}
bcasts() { sed -n 's/^rank [0-9]: OUT \([A-Z]*\) .*/\1/p' "$work/out" | tr -d '\n'; }

# shellcheck disable=SC2086
$MPICC -std=c99 -O1 -Wall -Wextra -Werror -I$root/include/compat -I$root/include \
  -I$root/target/$mpi/release/include -I$root/examples/ulfm tests/adversary/collectives.c \
  $lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$work/collectives" 2> "$work/err" \
  || { echo "FAIL $mpi: build"; cat "$work/err"; exit 1; }

for mode in default adversarial:-collectives; do
  run "$mode" 5
  grep -q 'OUT F* A=F I=F$' "$work/out" && [ "$(grep -vc 'OUT F* A=F I=F$' "$work/out")" -eq 0 ] \
    || fail "want F from every collective at every survivor"
  result "MPIFT_SEMANTICS=$mode: every survivor told MPI_ERR_PROC_FAILED"
done

run adversarial 5
first=$(cat "$work/out")
b=$(bcasts)
case $b in *S*) ;; *) fail "no Bcast told success" ;; esac
case $b in *F*) ;; *) fail "no Bcast told MPI_ERR_PROC_FAILED" ;; esac
grep -q '[WX]' <<< "$b" && fail "a Bcast gave wrong data or another code: $b"
[ "$(grep -c ' A=F ' "$work/out")" -eq 3 ] || fail "an Allreduce did not fail"
grep -q 'I=[WX]' "$work/out" && fail "the Ibcast gave wrong data or another code"
told=$(grep -o '"told": "MPI_SUCCESS"' "$work/r.json" 2>/dev/null | wc -l)
want=$(grep -o 'OUT [A-Z]* A=. I=.' "$work/out" | sed 's/OUT \([A-Z]*\) A=. I=\(.\)/\1\2/' | tr -cd S | wc -c)
[ "$told" -eq "$want" ] || fail "the report lists $told successes told, the output $want"
result "MPIFT_SEMANTICS=adversarial: non-uniform Bcasts, real data, Allreduce fails, report lists the choices"

run adversarial 5
[ "$(cat "$work/out")" = "$first" ] || fail "seed 5 again gave other outcomes"
result "MPIFT_SEED=5 again: the same outcomes"
run adversarial 6
[ "$(cat "$work/out")" != "$first" ] || fail "seed 6 gave the outcomes of seed 5"
result "MPIFT_SEED=6: other outcomes"

(cd "$work" && MPIFT_SEMANTICS=adversarial:bogus timeout -k 5 "$T" "$MPIEXEC" -n 4 ./collectives > out 2> err < /dev/null)
status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status, want an error"
grep -q 'MPIFT_SEMANTICS.*`bogus`' "$work/err" "$work/out" || fail "no message naming \`bogus\`"
result "MPIFT_SEMANTICS=adversarial:bogus: MPI_Init fails naming the token"

# Late news (tests/adversary/late.c): with `adversarial:latency` each survivor
# detects the death, and with `adversarial:revoke` each member sees the revoke,
# no sooner than the delay the report lists for it (a lower bound: a loaded
# machine only makes news later); the delays differ between ranks; the default
# mode lists no delay. A latency range with its least above its most is refused.
# shellcheck disable=SC2086
$MPICC -std=c99 -O1 -Wall -Wextra -Werror -I$root/include/compat -I$root/include \
  -I$root/target/$mpi/release/include -I$root/examples/ulfm tests/adversary/late.c \
  $lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$work/late" 2> "$work/err" \
  || { echo "FAIL $mpi: build late.c"; cat "$work/err"; exit 1; }
late() { # late SEMANTICS death|revoke: checks in $why
  rm -f "$work/r.json"
  (cd "$work" && MPIFT_SEMANTICS=$1 MPIFT_SEED=3 MPIFT_LATENCY=50ms:1s MPIFT_REPORT=$work/r.json \
    timeout -k 5 "$T" "$MPIEXEC" -n 4 ./late "$2" > out 2> err < /dev/null)
  status=$?
  [ "$status" -eq 0 ] || fail "exit status $status"
  local e
  e=$(python3 - "$work/out" "$work/r.json" "$1" "$2" <<'PY'
import json, re, sys
out, rep, mode, what = sys.argv[1:]
lines = open(out).read()
base = re.search(r"^rank (\d): (?:DIES|REVOKED) at=(\d+)", lines, re.M)
seen = {int(r): (int(t), c) for r, t, c in re.findall(r"^rank (\d): DETECT at=(\d+) rc=(\w)", lines, re.M)}
want = "F" if what == "death" else "V"
if not base or len(seen) != 3:
    sys.exit(print("want one DIES/REVOKED line and 3 DETECT lines"))
bad = [r for r, (_, c) in seen.items() if c != want]
if bad:
    sys.exit(print(f"ranks {bad}: not told {want}"))
made = [m for e in json.load(open(rep))["ranks"] for m in e["adversary"]["choices"]]
if mode == "default":
    sys.exit(print(f"default mode made choices: {made}") if made else 0)
key = "observer" if what == "death" else "member"
delay = {m[key]: m["delay_us"] for m in made if m["choice"] in ("latency", "revoke")}
if set(delay) < set(seen):
    sys.exit(print(f"the report lists delays for {sorted(delay)}, want {sorted(seen)}"))
if len(set(delay[r] for r in seen)) < 2:
    sys.exit(print("every rank drew the same delay"))
t0 = int(base.group(2))
early = [(r, t - t0, delay[r]) for r, (t, _) in seen.items() if t - t0 < delay[r]]
if early:
    sys.exit(print(f"news before its delay (rank, after us, delay us): {early}"))
PY
)
  [ -n "$e" ] && fail "$e"
}
for what in death revoke; do
  late default "$what"
  result "late.c $what, default mode: every rank told, no delay listed"
done
late adversarial:latency death
result "late.c death, adversarial:latency: each survivor detects no sooner than its own listed delay"
late adversarial:revoke revoke
result "late.c revoke, adversarial:revoke: each member sees the revoke no sooner than its own listed delay"
(cd "$work" && MPIFT_SEMANTICS=adversarial MPIFT_LATENCY=2s:1s timeout -k 5 "$T" "$MPIEXEC" -n 4 ./late death > out 2> err < /dev/null)
status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status, want an error"
grep -q 'MPIFT_LATENCY.*`2s:1s`' "$work/err" "$work/out" || fail "no message naming \`2s:1s\`"
result "MPIFT_LATENCY=2s:1s: MPI_Init fails naming the token"

# Sends and wildcard receives (tests/adversary/p2p.c): with the choice off
# (the default mode, and every other choice on), each small and the large
# MPI_Isend to the dead rank fail and each wildcard receive takes the message
# that is in; with `adversarial:sends` some small sends are told success, the
# large one never, and with `adversarial:wildcard` some wildcard receives are
# held (PENDING, then the message after the acknowledgement); each outcome told
# is a choice the report lists.
# shellcheck disable=SC2086
$MPICC -std=c99 -O1 -Wall -Wextra -Werror -I$root/include/compat -I$root/include \
  -I$root/target/$mpi/release/include -I$root/examples/ulfm tests/adversary/p2p.c \
  $lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$work/p2p" 2> "$work/err" \
  || { echo "FAIL $mpi: build p2p.c"; cat "$work/err"; exit 1; }
# job PROGRAM SEMANTICS SEED [ARG]: its 3 survivor lines ("rank 0-2: ...") in
# $work/out, the report's choices ("<choice> <told or held>") in $work/made.
job() {
  rm -f "$work/r.json"
  (cd "$work" && MPIFT_SEMANTICS=$2 MPIFT_SEED=$3 MPIFT_REPORT=$work/r.json \
    timeout -k 5 "$T" "$MPIEXEC" -n 4 "./$1" ${4:+"$4"} > raw 2> err < /dev/null)
  status=$?
  [ "$status" -eq 0 ] || fail "seed $3: exit status $status"
  grep '^rank [012]: ' "$work/raw" | grep -v ' DIES ' | sort > "$work/out"
  [ "$(wc -l < "$work/out")" -eq 3 ] || fail "seed $3: want 3 survivor lines"
  python3 -c 'import json,sys; [print(m["choice"], m.get("told", m.get("held"))) for e in json.load(open(sys.argv[1]))["ranks"] for m in e["adversary"]["choices"]]' \
    "$work/r.json" > "$work/made" 2>/dev/null || fail "seed $3: no report"
}
p2p() { job p2p "$1" "$2" "$3"; }
for mode in default adversarial:-sends; do
  p2p "$mode" 1 sends
  [ "$(grep -c 'SENDS FFFFFFFF L=F$' "$work/out")" -eq 3 ] || fail "want F from every send"
  result "p2p.c sends, MPIFT_SEMANTICS=$mode: every send to the dead rank fails"
done
for mode in default adversarial:-wildcard; do
  p2p "$mode" 1 wildcard
  [ "$(grep -c 'WILDCARD S$' "$work/out")" -eq 3 ] || fail "want every wildcard receive to take its message"
  result "p2p.c wildcard, MPIFT_SEMANTICS=$mode: every wildcard receive takes the message that is in"
done
p2p adversarial:sends 1 sends
s=$(sed -n 's/.*SENDS \([A-Z]*\) L=.*/\1/p' "$work/out" | tr -d '\n')
case $s in *S*F* | *F*S*) ;; *) fail "want some small sends told success and some failing: $s" ;; esac
grep -q 'X' <<< "$s" && fail "a send gave another code: $s"
[ "$(grep -c 'L=F$' "$work/out")" -eq 3 ] || fail "a large send did not fail"
[ "$(grep -c '^sends MPI_SUCCESS$' "$work/made")" -eq "$(tr -cd S <<< "$s" | wc -c)" ] || fail "the report's successes told differ from the output's"
[ "$(grep -c '^sends MPI_ERR_PROC_FAILED$' "$work/made")" -eq "$(tr -cd F <<< "$s" | wc -c)" ] || fail "the report's failures told differ from the output's"
result "p2p.c sends, adversarial:sends: small sends to the dead rank succeed as drawn, the large one fails, the report lists each"
held=0
for seed in 1 2 3 4; do
  p2p adversarial:wildcard $seed wildcard
  grep -q 'WILDCARD X' "$work/out" && fail "seed $seed: a wildcard receive gave a wrong outcome"
  h=$(grep -c 'WILDCARD H$' "$work/out")
  [ "$(grep -c '^wildcard True$' "$work/made")" -eq "$h" ] || fail "seed $seed: the report's held receives differ from the output's"
  held=$((held + h))
done
[ "$held" -gt 0 ] && [ "$held" -lt 12 ] || fail "$held of 12 wildcard receives held, want some"
result "p2p.c wildcard, adversarial:wildcard, seeds 1-4: held receives PENDING until acknowledged ($held of 12), as the report lists"

# Non-uniform MPI_Comm_dup (tests/adversary/dup.c): with the choice off every
# survivor's dup fails; with `adversarial:constructors` some survivors get the
# new communicator (4 members, the dead one known failed), as the report lists,
# and where every survivor got it, a barrier on it fails (the dead rank took it
# up and joins) instead of hanging.
# shellcheck disable=SC2086
$MPICC -std=c99 -O1 -Wall -Wextra -Werror -I$root/include/compat -I$root/include \
  -I$root/target/$mpi/release/include -I$root/examples/ulfm tests/adversary/dup.c \
  $lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$work/dup" 2> "$work/err" \
  || { echo "FAIL $mpi: build dup.c"; cat "$work/err"; exit 1; }
dups() { job dup "$1" "$2"; }
for mode in default adversarial:-constructors; do
  dups "$mode" 1
  [ "$(grep -c 'DUPS F\{16\} BARRIER -$' "$work/out")" -eq 3 ] || fail "want every dup to fail"
  result "dup.c, MPIFT_SEMANTICS=$mode: every survivor's MPI_Comm_dup fails"
done
alls=0
for seed in 1 2 3 4; do
  dups adversarial:constructors $seed
  d=$(sed -n 's/.*DUPS \([A-Z]*\) .*/\1/p' "$work/out" | tr -d '\n')
  grep -q X <<< "$d" && fail "seed $seed: a dup gave another code, or a communicator without its 4 members or its dead one"
  [ "$(grep -c '^constructors MPI_SUCCESS$' "$work/made")" -eq "$(tr -cd S <<< "$d" | wc -c)" ] || fail "seed $seed: the report's successes told differ from the output's"
  grep -q 'BARRIER [SX]' "$work/out" && fail "seed $seed: a barrier on a dup with a dead member did not fail"
  [ "$(grep -c 'BARRIER F$' "$work/out")" -eq 3 ] && alls=$((alls + 1))
done
[ "$alls" -gt 0 ] || fail "no seed of 1-4 gave every survivor its dup"
result "dup.c, adversarial:constructors, seeds 1-4: non-uniform dups as the report lists; a barrier on a dup every survivor got fails ($alls seeds)"

# The gallery's adversarial mistakes (examples/mistakes, a `SEMANTICS:
# adversarial` line): each, under `mpift-campaign diagnose`, hangs for one of
# seeds 1-3 x victims 2, 1, 3, with a paragraph that has every FINDING line of its header
# and does not call the hang MPIFT's;
# its fixed twin (examples/mistakes/fixed/) prints OK at the 3 survivors for
# V = 1, 2, 3 (Open MPI: V = 2) in the adversarial mode.
bin=$root/target/release/mpift-campaign
# The twins at every victim on MPICH; on Open MPI, whose jobs start slower, at
# V=2 (for make test's time: the campaigns in examples/mistakes/README.md cover
# the rest).
case $mpi in mpich) twin_victims="1 2 3" ;; *) twin_victims=2 ;; esac
[ -x "$bin" ] || (cd "$root" && cargo build --release --quiet -p mpift-campaign)
for src in $(grep -l '^ \* SEMANTICS: adversarial' examples/mistakes/*.c); do
  p=$(basename "$src" .c)
  for v in "" fixed/; do
    # shellcheck disable=SC2086
    $MPICC -std=c99 -O1 -I$root/include/compat -I$root/include -I$root/target/$mpi/release/include \
      -I$root/examples/ulfm "examples/mistakes/$v$p.c" $lib -lgcc_s -lutil -lrt -lpthread -lm -ldl \
      -o "$work/${v%/}$p" 2> "$work/err" || fail "$v$p does not build"
  done
  # The draws are the seed's, the timing is the machine's: the first of seeds
  # 1-3 x victims 2, 1, 3 that hangs (one does, on each MPI, in every run seen).
  got="" tried=""
  for seed in 1 2 3; do
    for v in 2 1 3; do
      d=$work/d-$p-$seed-$v
      MPIFT_SEMANTICS=adversarial MPIFT_SEED=$seed timeout -k 5 120 "$bin" diagnose --timeout 6 --out "$d" -- \
        "$MPIEXEC" -n 4 "$work/$p" "$v" > "$work/out" 2>&1
      got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); f=((r.get("hang") or {}).get("finding") or {}); print(r["verdict"], f.get("mpift")); print(f.get("paragraph",""))' "$d/record.json" 2>/dev/null)
      tried="$tried s$seed/V$v"
      [ "$(head -n 1 <<< "$got" | cut -d' ' -f1)" = HANG ] && break 2
    done
  done
  [ "$(head -n 1 <<< "$got" | cut -d' ' -f1)" = HANG ] || fail "no HANG in$tried"
  [ "$(head -n 1 <<< "$got" | cut -d' ' -f2)" = False ] || fail "the hang is called MPIFT's: $(tail -n 1 <<< "$got")"
  while IFS= read -r line; do
    [ -n "$line" ] && ! grep -qF -- "$line" <<< "$got" && fail "no \"$line\" in the finding"
  done <<< "$(sed -n 's/^ \* FINDING: //p' "$src")"
  result "$p (adversarial; hung at the first try of:$tried): a HANG with its header's findings"
  for v in $twin_victims; do
    (cd "$work" && MPIFT_SEMANTICS=adversarial MPIFT_SEED=1 timeout -k 5 "$T" "$MPIEXEC" -n 4 "./fixed$p" $v > out 2> err < /dev/null)
    status=$?
    [ "$status" -eq 0 ] || fail "V=$v: exit status $status"
    [ "$(grep -c '^rank [0-9]*: OK ' "$work/out")" -eq 3 ] || fail "V=$v: want 3 OK lines"
  done
  result "fixed/$p (adversarial, seed 1, V=$(tr ' ' , <<< "$twin_victims")): every survivor OK"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && rm -rf "$work"
[ "$failed" -eq 0 ]
