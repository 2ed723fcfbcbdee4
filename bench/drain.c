/* drain.c: what a full fence costs on this machine right after the host MPI's
 * MPI_Isend, against the same fence before it and again just after (plain MPI,
 * no MPIFT). The send's stores into the shared-memory queue whose lines the other
 * rank polls stay in the store buffer until they own those lines; a fence, a load
 * that the store buffer cannot forward, or a full store buffer waits for them
 * there. A program's own code after MPI_Isend overlaps that wait with its work;
 * MPIFT's bookkeeping after the host's start and at the next completion call
 * (dozens of stores) meets it, so this figure is a floor of MPIFT's time per
 * started send on the machine, whatever its instruction count
 * (bench/README.md, "Where the time goes after a send").
 *
 *   mpicc -O2 bench/drain.c -o drain && mpiexec -n 2 ./drain [ITERATIONS]
 *
 * Rank 0 prints the time stamp counter's rate and the mean cost in ns of one
 * mfence before MPI_Isend, right after it, and once more after that; rank 1
 * answers each message (a ping-pong, so the queue is polled as in a program).
 * x86-64 only (rdtsc, mfence). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static unsigned long long fence_cycles(void)
{
    unsigned long long a = __rdtsc();
    _mm_mfence();
    return __rdtsc() - a;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 200000;
    if (size != 2 || n <= 0) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 drain [ITERATIONS > 0]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int v = 1, w = 0;
    MPI_Request r;
    unsigned long long before = 0, after = 0, again = 0;
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            before += fence_cycles();
            MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
            after += fence_cycles();
            again += fence_cycles();
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Recv(&w, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        double t0 = MPI_Wtime();
        unsigned long long c0 = __rdtsc();
        while (MPI_Wtime() - t0 < 0.2) {
        }
        double ghz = (double)(__rdtsc() - c0) / (MPI_Wtime() - t0) / 1e9;
        printf("tsc %.2f GHz; mfence before MPI_Isend %.1f ns, right after it %.1f ns, once more %.1f ns\n", ghz,
               before / (double)n / ghz, after / (double)n / ghz, again / (double)n / ghz);
    }
    MPI_Finalize();
    return w == 1 ? 0 : 1;
}
