#!/usr/bin/env bash
# make install: the usual layout under PREFIX.
#   include/MPI-FT.h, include/MPI-FT_redefine.h, include/mpift_config.h, include/compat/
#   lib/libmpift.a, lib/cmake/MPIFT/, lib/pkgconfig/mpift.pc
#   bin/mpift-campaign (the kill-point campaign runner, docs/CAMPAIGN.md; built with
#   cargo into target/release/ if it is not there; without it the rest is installed)
#
# Both packages describe exactly the MPI the library was built with (its compiler
# wrapper $mpicc). mpift.pc says `Requires: <that MPI's module>` only when pkg-config
# finds, on its default path, a module of that name whose include and library
# directories are the wrapper's own (Debian's MPICH and Open MPI); otherwise (an MPI
# from a module, Spack or a venv, which often ships no .pc or one off the default
# path, or a same-named .pc of another installation) it carries the wrapper's own
# compile and link flags.
set -euo pipefail
prefix=$1 lib=$2 config=$3 mpicc=$4 mpicxx=$5 mpiexec=$6 mpi_pc=$7 rust_libs=$8
here=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/Cargo.toml" | head -1)
abs() { command -v "$1" || echo "$1"; }
mpicc=$(abs "$mpicc") mpicxx=$(abs "$mpicxx") mpiexec=$(abs "$mpiexec")
display=$(sed -n 's/^#define MPIFT_BUILT_FOR_MPI "\(.*\)"/\1/p' "$config")
if [ -z "$mpi_pc" ]; then
  case "$display" in MPICH*) mpi_pc=mpich ;; "Open MPI"*) mpi_pc=ompi-c ;; esac
fi

# wrapper_flags compile|link: the wrapper's flags without the compiler itself.
# Open MPI: --showme:compile / --showme:link; MPICH (and Intel MPI, MVAPICH):
# -compile-info / -link-info, which print the whole command line.
wrapper_flags() {
  local out
  if out=$("$mpicc" --showme:"$1" 2>/dev/null) && [ -n "$out" ]; then
    echo "$out"
  elif out=$("$mpicc" -"$1"-info 2>/dev/null) && [ -n "$out" ]; then
    set -- $out
    shift
    echo "$*"
  else
    echo "scripts/install.sh: cannot ask $mpicc for its $1 flags (--showme:$1, -$1-info)" >&2
    return 1
  fi
}
cflags=$(wrapper_flags compile) || exit 1
ldflags=$(wrapper_flags link) || exit 1
# Keep what describes the MPI: include paths and macros to compile, library paths,
# libraries and linker options to link (MPICH's -link-info repeats its -I flags).
pick() { # pick REGEX WORDS...: the words that match REGEX
  local re=$1 w out=()
  shift
  for w in "$@"; do [[ $w =~ $re ]] && out+=("$w"); done
  echo "${out[*]}"
}
# shellcheck disable=SC2086
mpi_cflags=$(pick '^(-I|-D|-pthread$)' $cflags)
# shellcheck disable=SC2086
mpi_libs=$(pick '^(-L|-l|-Wl,|-pthread$)' $ldflags)

# dirs FLAG WORDS...: the directories after FLAG (-I or -L), resolved, sorted, without
# the ones pkg-config leaves out anyway.
dirs() {
  local f=$1 w d
  shift
  for w in "$@"; do
    case $w in "$f"*) d=$(realpath -m "${w#"$f"}") ;; *) continue ;; esac
    case $d in /usr/include | /usr/lib | /usr/lib64 | /usr/lib/x86_64-linux-gnu | /lib | /lib64) continue ;; esac
    echo "$d"
  done | sort -u
}
# pc ARGS...: pkg-config as a consumer will run it, without this shell's
# PKG_CONFIG_PATH (a module found only through it would not be found later).
pc() { env -u PKG_CONFIG_PATH pkg-config "$@"; }
# shellcheck disable=SC2086
pc_matches() { # the MPI's module describes the same installation as the wrapper
  [ -n "$mpi_pc" ] && pc --exists "$mpi_pc" 2>/dev/null || return 1
  [ "$(dirs -I $(pc --cflags-only-I "$mpi_pc"))" = "$(dirs -I $mpi_cflags)" ] &&
    [ "$(dirs -L $(pc --libs-only-L "$mpi_pc"))" = "$(dirs -L $mpi_libs)" ]
}
if pc_matches; then
  pc_requires="Requires: $mpi_pc" pc_cflags="" pc_libs=""
else
  pc_requires="# No pkg-config module of this MPI matches $mpicc: its own flags follow." pc_cflags=" $mpi_cflags"
  pc_libs=" $mpi_libs"
fi

# The MPI library the wrapper links (for the CMake package's check that FindMPI found
# the same one): the first -l of the link line, looked up in its -L directories, then
# where the compiler looks by default.
mpi_library=""
for w in $mpi_libs; do
  case $w in -l*) name=${w#-l} ;; *) continue ;; esac
  # shellcheck disable=SC2086
  for d in $(dirs -L $mpi_libs) $("$mpicc" -print-search-dirs 2>/dev/null | sed -n 's/^libraries: =//p' | tr : ' '); do
    if [ -e "$d/lib$name.so" ] || [ -e "$d/lib$name.a" ]; then
      mpi_library=$(realpath "$d/lib$name.so" 2>/dev/null || realpath "$d/lib$name.a")
      break
    fi
  done
  break
done

mkdir -p "$prefix/include/compat" "$prefix/lib/cmake/MPIFT" "$prefix/lib/pkgconfig"
install -m 644 "$here/include/MPI-FT.h" "$here/include/MPI-FT_redefine.h" "$config" "$prefix/include/"
install -m 644 "$here/include/compat/mpi.h" "$here/include/compat/mpi-ext.h" "$prefix/include/compat/"
install -m 644 "$lib" "$prefix/lib/libmpift.a"
subst() {
  sed -e "s|@VERSION@|$version|g" -e "s|@VERSION_MAJOR@|${version%%.*}|g" \
      -e "s|@MPI_DISPLAY@|$display|g" -e "s|@MPICC@|$mpicc|g" -e "s|@MPICXX@|$mpicxx|g" \
      -e "s|@MPIEXEC@|$mpiexec|g" -e "s|@MPI_LIBRARY@|$mpi_library|g" -e "s|@PREFIX@|$prefix|g" \
      -e "s|@PC_REQUIRES@|$pc_requires|g" -e "s|@PC_MPI_CFLAGS@|$pc_cflags|g" -e "s|@PC_MPI_LIBS@|$pc_libs|g" \
      -e "s|@RUST_LIBS@|$rust_libs|g" \
      -e "s|@RUST_LIBS_CMAKE@|$(echo $rust_libs | sed 's/-l//g; s/ /;/g')|g" "$1"
}
subst "$here/cmake/MPIFTConfig.cmake.in" > "$prefix/lib/cmake/MPIFT/MPIFTConfig.cmake"
subst "$here/cmake/MPIFTConfigVersion.cmake.in" > "$prefix/lib/cmake/MPIFT/MPIFTConfigVersion.cmake"
subst "$here/cmake/mpift.pc.in" > "$prefix/lib/pkgconfig/mpift.pc"

# The campaign runner does not link MPI: one binary serves every MPI's library.
campaign=$here/target/release/mpift-campaign
if [ ! -x "$campaign" ]; then
  (cd "$here" && CARGO_TARGET_DIR="$here/target" cargo build --release --quiet -p mpift-campaign) ||
    echo "scripts/install.sh: warning: could not build mpift-campaign (cargo build --release -p mpift-campaign); not installed" >&2
fi
if [ -x "$campaign" ]; then
  mkdir -p "$prefix/bin"
  install -m 755 "$campaign" "$prefix/bin/mpift-campaign"
fi
echo "MPIFT $version for $display installed in $prefix"
