#!/usr/bin/env python3
"""ulfm_loop.py: a canonical ULFM loop in Python with mpi4py (docs/PYTHON.md).

Every iteration each member of the working communicator computes its share of a
fixed sum (the terms are split over however many members are left, so the total
does not depend on that number) and MPI_Allreduce adds the shares up. When a call
raises MPI.Exception with error class MPI.ERR_PROC_FAILED or MPI.ERR_REVOKED, the
member revokes the communicator (so nobody stays blocked in it). An Allreduce can
succeed on some members and fail on others, so each iteration ends with an agreement
(comm.Agree) on "it succeeded here": if it did not everywhere (or the agreement
itself reports the failure), every survivor revokes, shrinks the communicator to the
survivors and redoes the iteration there; otherwise all commit its total.

At the end every survivor prints
    ulfm_loop: rank R: OK sum S iterations I shrinks K size N
and exits 0 iff its sum equals the closed form; otherwise it prints WRONG and exits 1.

A rank dies in one of two ways:
  * MPIFT_KILL='rank=1@call=N' in the environment (docs/INJECTION.md): MPIFT kills
    it at the entry of its N-th MPI call, nothing in the program;
  * --kill-me R,I: world rank R calls Sim_FT_kill_me() at the start of iteration I,
    reached through ctypes in the mpi4py extension module, which links libmpift.a.

Usage: mpiexec -n 4 python3 ulfm_loop.py [--iterations N] [--kill-me R,I]
"""
import argparse
import ctypes
import sys
from array import array

from mpi4py import MPI

WORK = 1000  # terms of each iteration's sum


def term(it, k):
    return (k * (it + 1)) % 97


def share(it, rank, size):
    """This member's share of iteration it: the terms k with k % size == rank."""
    return float(sum(term(it, k) for k in range(rank, WORK, size)))


def kill_me_function():
    """Sim_FT_kill_me from the extension module (None on an MPI without MPIFT)."""
    lib = ctypes.CDLL(MPI.__file__)
    try:
        fn = lib.Sim_FT_kill_me
    except AttributeError:
        return None
    fn.restype = None
    fn.argtypes = []
    return fn


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--kill-me", metavar="R,I", help="world rank R dies at the start of iteration I")
    args = parser.parse_args()
    world = MPI.COMM_WORLD.Get_rank()
    die_rank = die_iter = -1
    if args.kill_me:
        die_rank, die_iter = map(int, args.kill_me.split(","))
    kill_me = kill_me_function()
    if args.kill_me and kill_me is None:
        print("ulfm_loop: --kill-me needs mpi4py built with MPIFT (no Sim_FT_kill_me)", file=sys.stderr)
        return 2

    comm = MPI.COMM_WORLD.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)  # errors become MPI.Exception
    totals = []  # the committed total of each iteration
    shrinks = 0
    while len(totals) < args.iterations:
        it = len(totals)
        if world == die_rank and it == die_iter:
            kill_me()  # never returns
        ok = 1
        try:
            part = array("d", [share(it, comm.Get_rank(), comm.Get_size())])
            total = array("d", [0.0])
            comm.Allreduce(part, total, op=MPI.SUM)
        except MPI.Exception as e:
            if e.Get_error_class() not in (MPI.ERR_PROC_FAILED, MPI.ERR_REVOKED):
                raise
            ok = 0
            comm.Revoke()  # nobody stays blocked in comm
        try:
            # Did the iteration succeed everywhere? The answer is the same at every
            # survivor (an agreement is not affected by the revoke).
            ok = comm.Agree(ok)
        except MPI.Exception as e:
            if e.Get_error_class() not in (MPI.ERR_PROC_FAILED, MPI.ERR_REVOKED):
                raise
            ok = 0
        if ok:
            totals.append(total[0])
            continue
        comm.Revoke()
        old, comm = comm, comm.Shrink()  # the survivors; redo the iteration there
        old.Free()
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        shrinks += 1

    got = sum(totals)
    want = float(sum(term(it, k) for it in range(args.iterations) for k in range(WORK)))
    verdict = "OK" if got == want else f"WRONG (want {want:.0f})"
    line = (f"ulfm_loop: rank {world}: {verdict} sum {got:.0f} iterations {len(totals)} "
            f"shrinks {shrinks} size {comm.Get_size()}\n")
    sys.stdout.write(line)  # one write: lines of different ranks do not interleave
    sys.stdout.flush()
    comm.Free()
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
