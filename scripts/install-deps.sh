#!/usr/bin/env bash
# Installs what building and testing MPIFT needs on Debian/Ubuntu, when missing:
# MPICH and Open MPI (both, side by side), libclang (bindgen in mpi-sys), cmake,
# pkg-config, python3 (the campaign tests read JSON with it), python3-xmlschema
# (tests/campaign/junit.sh validates mpift-campaign's JUnit report with it), gdb (the
# stacks of a hung mpi4py module: scripts/mpi4py.sh); plus any packages named as
# arguments (`make bench`: gnuplot-nox).
# Rust itself is expected (rustup). Safe to run repeatedly.
set -euo pipefail
need=()
for pkg in mpich libmpich-dev openmpi-bin libopenmpi-dev libclang-dev cmake pkg-config python3 python3-xmlschema gdb "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "MPIFT: installing ${need[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
