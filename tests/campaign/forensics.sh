#!/usr/bin/env bash
# tests/campaign/forensics.sh <mpich|openmpi|ompi5>: why a run hangs, end to end.
#
#   1. Each program of examples/mistakes/ (one classic hang of ULFM recovery code,
#      checked on real ULFM) under `mpift-campaign diagnose`: HANG, not called
#      MPIFT's, and every `FINDING:` line of its header in the paragraph; run with
#      the victim V=1 under its own name, and with V=2 (every role turned by one
#      rank, the FINDING ranks shifted) under a neutral name (`prog`), so the
#      finding comes from the graph, not from the name or the ranks
#      (FORENSICS_VARIANTS="1 2", the default, lists the victims to run; 0: none).
#      "rank B is in F on C" is also met by "rank B waits in F on C" (the same
#      fact, said of a rank that itself waits).
#   2. tests/forensics/acked_any_source.c, written for this check after the
#      forensics: its expected lines below.
#   3. The state dump on request: SIGUSR1 to the launcher gives every rank's
#      dump.<rank>.json; MPIFT_DUMP_AFTER=1 gives rank 0's dump.0.txt by itself.
# Every run is under a deadline. Prints "PASS|FAIL <case>" and "N passed, M
# failed"; exits nonzero if any case failed.
set -u
cd "$(dirname "$0")/../.."
mpi=${1:-}
usage_more=''
. tests/campaign/common.sh
work=$(mktemp -d /tmp/mpift-forensics.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
FT="-Iinclude/compat -Iinclude -Itarget/$mpi/release/include -Iexamples/ulfm"
LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl"
WAIT=${FORENSICS_TIMEOUT:-4}
VARIANTS=${FORENSICS_VARIANTS:-1 2}
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "PASS $mpi: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $mpi: $1"; [ -n "${2:-}" ] && sed 's/^/    | /' <<< "$2" | head -n 12; }

# shift LINE K: every "rank N" of LINE as rank (N+K) % 4.
shift_ranks() {
  perl -pe "s/rank (\d+)/'rank '.((\$1+$2)%4)/ge" <<< "$1"
}

# diagnose NAME BINARY ARGS...: runs it, leaves the paragraph in $para, the
# record's mpift flag in $own, the verdict in $verdict.
diagnose() {
  local name=$1; shift
  local out=$work/d-$name
  timeout -k 5 $((WAIT + 60)) "$bin" diagnose --timeout "$WAIT" --out "$out" -- "$MPIEXEC" -n 4 "$@" > "$out.log" 2>&1
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$out/record.json" 2>/dev/null)
  para=$(python3 -c 'import json,sys; print(((json.load(open(sys.argv[1])).get("hang") or {}).get("finding") or {}).get("paragraph",""))' "$out/record.json" 2>/dev/null)
  own=$(python3 -c 'import json,sys; print(((json.load(open(sys.argv[1])).get("hang") or {}).get("finding") or {}).get("mpift",""))' "$out/record.json" 2>/dev/null)
}

# findings NAME: every wanted line ($want, one per line) in $para.
findings() {
  local missing="" line alt
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    alt=${line/ is in / waits in }
    grep -qF -- "$line" <<< "$para" || grep -qF -- "$alt" <<< "$para" || missing+="$line; "
  done <<< "$want"
  if [ "$verdict" = HANG ] && [ "$own" = False ] && [ -z "$missing" ]; then
    ok "$1"
  else
    bad "$1: verdict ${verdict:-none}, MPIFT's ${own:-?}, missing: ${missing:-none}" "$para"
  fi
}

for src in examples/mistakes/*.c; do
  p=$(basename "$src" .c)
  # The adversarial mode's mistakes (a `SEMANTICS:` line) hang by the seed's
  # draws, not always in the default mode: tests/adversary/run.sh runs them.
  grep -q '^ \* SEMANTICS: adversarial' "$src" && continue
  "$MPICC" -std=c99 -O1 $FT "$src" $LIBS -o "$work/$p" || { bad "$p builds"; continue; }
  base=$(sed -n 's/^ \* FINDING: //p' "$src")
  [ -n "$base" ] || { bad "$p: no FINDING line in its header"; continue; }
  for v in $VARIANTS; do
    if [ "$v" = 0 ]; then
      continue
    elif [ "$v" = 1 ]; then
      want=$base; diagnose "$p-v1" "$work/$p" 1; findings "$p, victim 1"
    else
      cp "$work/$p" "$work/prog"
      want=$(shift_ranks "$base" $((v - 1))); diagnose "$p-v$v" "$work/prog" "$v"; findings "$p renamed, victim $v (roles turned)"
    fi
  done
done

"$MPICC" -std=c99 -O1 $FT tests/forensics/acked_any_source.c $LIBS -o "$work/acked" || bad "acked_any_source builds"
want="rank 0 waits in MPI_Recv from any rank on MPI_COMM_WORLD
rank 1 is dead
rank 2 has finished
rank 3 has finished"
diagnose acked "$work/acked" 1; findings "acked_any_source (written after the forensics)"

# A campaign whose one kill point hangs: the record's finding, the summary's
# paragraph, the picture beside matrix.png, the JUnit failure's text.
timeout -k 5 120 "$bin" --out "$work/camp" --fresh --ranks 1 --calls-of MPI_Send --timeout "$WAIT" --junit "$work/camp/junit.xml" \
  -- "$MPIEXEC" -n 4 "$work/acked" -1 > "$work/camp.log" 2>&1
if grep -q "why it hangs: rank 0 waits in MPI_Recv from any rank on MPI_COMM_WORLD" "$work/camp.log" \
   && ls "$work"/camp/waits/rank_1_call_*.png > /dev/null 2>&1 \
   && grep -q "why it hangs (waits-for-finished): rank 0 waits in MPI_Recv" "$work/camp/junit.xml" \
   && python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r)==1 and r[0]["verdict"]=="HANG" and r[0]["hang"]["finding"]["pattern"]=="waits-for-finished"' "$work/camp/runs.jsonl"; then
  ok "a campaign's HANG: finding in runs.jsonl, paragraph in the summary and the JUnit file, waits/<rule>.png"
else
  bad "a campaign's HANG: no finding where expected" "$(cat "$work/camp.log")"
fi

# 3. The dump on request.
dir=$work/dump
rm -rf "$dir"
( MPIFT_TRACE=$dir/sig timeout -k 5 30 "$MPIEXEC" -n 4 "$work/acked" > "$dir.sig.out" 2>&1 & 
  launcher=$!
  sleep 4
  # The launcher under `timeout`: its child.
  l=$(pgrep -P "$launcher" | head -n 1)
  kill -USR1 "${l:-$launcher}"
  sleep 2
  kill -TERM "$launcher" 2>/dev/null
  wait ) 2>/dev/null
n=$(python3 - "$dir/sig" <<'EOF' 2>&1
import json, sys, os
d = sys.argv[1]
good = 0
for r in range(4):
    try:
        j = json.load(open(os.path.join(d, "dump.%d.json" % r)))
        good += j.get("why") == "signal SIGUSR1" and j.get("rank") == str(r)
    except Exception as e:
        print(e, file=sys.stderr)
print(good)
EOF
)
[ "$n" = 4 ] && ok "SIGUSR1 to the launcher: every rank's dump.<rank>.json" || bad "SIGUSR1 to the launcher: $n of 4 dumps" "$(ls "$dir/sig" 2>&1)"
MPIFT_TRACE=$dir/after MPIFT_DUMP_AFTER=1 timeout -k 5 5 "$MPIEXEC" -n 4 "$work/acked" > "$dir.after.out" 2>&1
if grep -q "^why: more than 1 s in one call (MPIFT_DUMP_AFTER)" "$dir/after/dump.0.txt" 2>/dev/null \
   && grep -q "^function: MPI_Recv" "$dir/after/dump.0.txt"; then
  ok "MPIFT_DUMP_AFTER=1: rank 0's dump.0.txt names its MPI_Recv"
else
  bad "MPIFT_DUMP_AFTER=1: no dump.0.txt naming MPI_Recv" "$(cat "$dir/after/dump.0.txt" 2>&1)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && rm -rf "$work"
[ "$failed" = 0 ]
