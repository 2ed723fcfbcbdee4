/* bench/idle.c: CPU a live rank burns while it waits inside MPI for a rank
 * that computes (sleeps) outside MPI, plain MPI next to MPIFT (issue 19: a
 * waiting rank must not cost more under MPIFT than under its host MPI).
 *
 * Rank 1 sleeps S seconds (--sleep S, default 2) outside MPI, then joins; every
 * other rank waits meanwhile in one of:
 *   recv      MPI_Recv from rank 1
 *   barrier   MPI_Barrier (MPIFT's own under MPIFT)
 *   allreduce MPI_Allreduce of one int (MPIFT's own on MPICH)
 *   bcast     MPI_Bcast of one int from rank 1 (the host's)
 *   iagree    MPIX_Comm_iagree + MPI_Wait (MPIFT only; plain MPI has none)
 * Prints per waiting rank: mode, CPU seconds (getrusage), wall seconds and their
 * ratio (1.0 = one core busy the whole wait). Build the same source plain and
 * with -Iinclude/compat + libmpift.a; run both side by side (bench/README.md). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int rank, size, i, x = 1, y = 0;
    double sleep_s = 2.0, c0, t0;
    const char *mode = "recv";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "--sleep")) sleep_s = atof(argv[i + 1]);
    }
    if (size < 2) MPI_Abort(MPI_COMM_WORLD, 2);
#ifndef MPIFT_MPI_FT_H
    if (!strcmp(mode, "iagree")) {
        if (rank == 0) printf("idle: iagree needs MPIFT\n");
        MPI_Finalize();
        return 0;
    }
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    c0 = cpu_seconds();
    t0 = MPI_Wtime();
    if (rank == 1) {
        struct timespec ts = {(time_t)sleep_s, (long)((sleep_s - (time_t)sleep_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (!strcmp(mode, "recv")) {
        if (rank == 1)
            for (i = 0; i < size; i++)
                if (i != 1) MPI_Send(&x, 1, MPI_INT, i, 0, MPI_COMM_WORLD);
        if (rank != 1) MPI_Recv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "barrier")) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "allreduce")) {
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "bcast")) {
        MPI_Bcast(&x, 1, MPI_INT, 1, MPI_COMM_WORLD);
#ifdef MPIFT_MPI_FT_H
    } else if (!strcmp(mode, "iagree")) {
        MPI_Request r;
        int f = 1;
        MPIX_Comm_iagree(MPI_COMM_WORLD, &f, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
#endif
    } else {
        if (rank == 0) fprintf(stderr, "idle: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    {
        double cpu = cpu_seconds() - c0, wall = MPI_Wtime() - t0;
        if (rank != 1) printf("idle: mode=%s rank=%d cpu_s=%.3f wall_s=%.3f cpu_fraction=%.3f\n", mode, rank, cpu, wall, cpu / wall);
    }
    MPI_Finalize();
    return 0;
}
