#!/usr/bin/env bash
# make install: the usual layout under PREFIX.
#   include/MPI-FT.h, include/MPI-FT_redefine.h, include/mpift_config.h, include/compat/
#   lib/libmpift.a, lib/cmake/MPIFT/, lib/pkgconfig/mpift.pc
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
mkdir -p "$prefix/include/compat" "$prefix/lib/cmake/MPIFT" "$prefix/lib/pkgconfig"
install -m 644 "$here/include/MPI-FT.h" "$here/include/MPI-FT_redefine.h" "$config" "$prefix/include/"
install -m 644 "$here/include/compat/mpi.h" "$here/include/compat/mpi-ext.h" "$prefix/include/compat/"
install -m 644 "$lib" "$prefix/lib/libmpift.a"
subst() {
  sed -e "s|@VERSION@|$version|g" -e "s|@VERSION_MAJOR@|${version%%.*}|g" \
      -e "s|@MPI_DISPLAY@|$display|g" -e "s|@MPICC@|$mpicc|g" -e "s|@MPICXX@|$mpicxx|g" \
      -e "s|@MPIEXEC@|$mpiexec|g" -e "s|@MPI_PC@|$mpi_pc|g" -e "s|@PREFIX@|$prefix|g" \
      -e "s|@RUST_LIBS@|$rust_libs|g" \
      -e "s|@RUST_LIBS_CMAKE@|$(echo $rust_libs | sed 's/-l//g; s/ /;/g')|g" "$1"
}
subst "$here/cmake/MPIFTConfig.cmake.in" > "$prefix/lib/cmake/MPIFT/MPIFTConfig.cmake"
subst "$here/cmake/MPIFTConfigVersion.cmake.in" > "$prefix/lib/cmake/MPIFT/MPIFTConfigVersion.cmake"
subst "$here/cmake/mpift.pc.in" > "$prefix/lib/pkgconfig/mpift.pc"
echo "MPIFT $version for $display installed in $prefix"
