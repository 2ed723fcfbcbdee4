"""tests/mpi4py/spawn_hang.py N: Open MPI 4.1's spawn hang, without MPIFT.

Repeats the body of mpi4py's test_util_pool test_terminate N times (each
iteration spawns two one-process pools and terminates them at once) and prints
the iteration number after each. Run it at one rank with the plain mpi4py that
scripts/mpi4py.sh builds:

  mpiexec.openmpi -n 1 ~/.cache/mpift/mpi4py-4.1.2/plain-openmpi/venv/bin/python \
      tests/mpi4py/spawn_hang.py 600

On Debian 12's Open MPI 4.1 with two busy loops beside it, the count stops
within a few dozen iterations: the spawned child waits in PMIx_Init inside
MPI_Init and the parent in MPI_Comm_spawn (PMIx_Lookup), for ever. With MPIFT
(the mpift-openmpi venv) it stops the same way. scripts/mpi4py.sh reruns a
module once when its hung run shows that picture.
"""
import sys
import time

from mpi4py.util import pool


def terminate_twice():
    p = pool.Pool(1)
    for _ in range(100):
        p.apply_async(time.sleep, (0.1,))
    result = p.apply_async(time.sleep, (0.1,))
    p.terminate()
    p.join()
    result.wait()
    assert not result.successful()
    p = pool.Pool(1)
    result = p.map_async(time.sleep, [0.1] * 100, chunksize=1)
    p.terminate()
    p.join()
    result.wait()
    assert not result.successful()


def main():
    for i in range(int(sys.argv[1])):
        terminate_twice()
        print(i + 1, flush=True)


if __name__ == "__main__":  # the spawned workers import this file
    main()
