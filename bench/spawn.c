/* bench/spawn.c: time of one MPI_Comm_spawn of 1 process of this program from
 * MPI_COMM_WORLD, with MPI_Intercomm_merge and an MPI_Barrier on the merged
 * communicator (until the child is there to talk to). `spawn [K]` does K
 * spawns one after the other (default 4) and rank 0 prints the mean and the
 * minimum in ms. Built plain or with MPIFT (then with MPIFT_SPARES=K and K more
 * processes launched, the spawns come from spares; without, from the host). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, ic, m;
    int k, i, rank;
    double t, sum = 0, min = 1e9;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Intercomm_merge(parent, 1, &m);
        MPI_Barrier(m);
        MPI_Comm_free(&m);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    k = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 0; i < k; i++) {
        char *args[] = {"child", NULL};
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        if (MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) != MPI_SUCCESS) {
            if (rank == 0) printf("spawn %d failed\n", i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Intercomm_merge(ic, 0, &m);
        MPI_Barrier(m);
        t = MPI_Wtime() - t;
        sum += t;
        if (t < min) min = t;
        MPI_Comm_free(&m);
        MPI_Comm_disconnect(&ic);
    }
    if (rank == 0) printf("spawn+merge+barrier: mean %.3f ms, min %.3f ms over %d spawns\n", 1e3 * sum / k, 1e3 * min, k);
    MPI_Finalize();
    return 0;
}
