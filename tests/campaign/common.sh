# tests/campaign/common.sh: what tests/campaign/run.sh and liveness.sh share, sourced
# from the repository root with $mpi set: the host MPI's wrappers (scripts/mpi-host.sh),
# no MPIFT_* variable from the caller's environment, the library built for $mpi
# ($lib), and the runner built from the current sources ($bin). `json FILE KEY`
# prints a top-level value of a JSON file; `check ok|no TEXT` counts a case in
# $passed/$failed and prints it (a failure with the tail of $work/log).
root=$PWD
. scripts/mpi-host.sh
mpi_host "$mpi" || { echo "usage: $0 <mpich|openmpi|ompi5> $usage_more" >&2; exit 2; }
for v in $(env | sed -n 's/^\(MPIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
lib=$root/target/$mpi/release/libmpift.a
[ -f "$lib" ] || { echo "no $lib: make MPI=$mpi lib first" >&2; exit 2; }
bin=$root/target/release/mpift-campaign
# Always through cargo: a runner built from older sources may not read newer traces.
(CARGO_TARGET_DIR=$root/target cargo build --release --quiet -p mpift-campaign) || exit 1

json() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }

check() { # check ok|no TEXT
  if [ "$1" = ok ]; then
    passed=$((passed + 1)); echo "PASS $mpi: $2"
  else
    failed=$((failed + 1)); echo "FAIL $mpi: $2"
    sed 's/^/    | /' "$work/log" 2>/dev/null | tail -n 12
  fi
}
