/* legacy.c: a test program in the style of those written for a real ULFM MPI
 * (tests/inject/run.sh): the victim kills itself with a signal or exit(), the
 * survivors see the failure. Built with -DMPIFT_MAP_SIGNALS (and -I
 * include/compat); under a real ULFM MPI the same source really dies.
 *
 *   legacy raise   rank 1: raise(SIGKILL)
 *   legacy term    rank 1: kill(getpid(), SIGTERM)
 *   legacy exit    rank 1: exit(3) (run with MPIFT_EXIT_KILLS=1)
 *   legacy other   every rank: kill(getpid(), 0) and raise(SIGUSR1) with a
 *                  handler behave as usual; nobody dies
 * The survivors loop on MPI_Barrier until it fails with MPI_ERR_PROC_FAILED (or
 * 200 barriers pass: FAIL unless mode "other"). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

int main(int argc, char **argv)
{
    int rank, i, rc = MPI_SUCCESS, cls = MPI_SUCCESS;
    const char *mode = argc > 1 ? argv[1] : "raise";

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!strcmp(mode, "other")) {
        int ok;
        signal(SIGUSR1, on_usr1);
        ok = kill(getpid(), 0) == 0;
        raise(SIGUSR1);
        ok &= got_usr1 == 1;
        MPI_Barrier(MPI_COMM_WORLD);
        printf("rank %d: %s\n", rank, ok ? "OK other signals behave as usual" : "FAIL kill(pid, 0) or SIGUSR1");
        MPI_Finalize();
        return ok ? 0 : 1;
    }
    if (rank == 1) {
        printf("rank 1: DIES by %s\n", mode);
        fflush(stdout);
        if (!strcmp(mode, "raise")) raise(SIGKILL);
        else if (!strcmp(mode, "term")) kill(getpid(), SIGTERM);
        else exit(3);
        printf("rank 1: FAIL still alive after %s\n", mode);
        return 1;
    }
    for (i = 0; i < 200 && rc == MPI_SUCCESS; i++) rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls == MPIX_ERR_PROC_FAILED) printf("rank %d: OK barrier %d failed with PROC_FAILED\n", rank, i);
    else printf("rank %d: FAIL barrier loop ended with class %d after %d\n", rank, cls, i);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
