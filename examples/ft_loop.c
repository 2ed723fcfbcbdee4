/* ft_loop.c: a canonical ULFM iterative program, the subject of kill-point campaigns
 * (docs/CAMPAIGN.md).
 *
 * Every iteration, on the working communicator:
 *   1. MPI_Allreduce of each member's share of a fixed sum (the work is split over
 *      however many members are left, so the total does not depend on that number);
 *   2. a ring exchange with MPI_Sendrecv (each member sends a token to its right
 *      neighbour and checks the one from its left);
 *   3. MPI_Ibcast of the total from member 0, completed with MPI_Wait (or a
 *      blocking MPI_Bcast), checked against the member's own total;
 *   4. MPIX_Comm_agree on "everything succeeded here".
 * A member whose call fails revokes the communicator at once (so nobody stays
 * blocked in it), then joins the agreement. If the agreement says something failed
 * (or itself fails), the survivors revoke, shrink, and redo the iteration on the
 * shrunk communicator; otherwise they commit its total.
 *
 * At the end every survivor prints "ft_loop: rank R: OK sum S iterations I shrinks K"
 * and exits 0 iff its sum equals the closed form (and no token or broadcast value
 * was wrong); otherwise it prints "ft_loop: rank R: WRONG ..." and exits 1.
 *
 * Usage: ft_loop [iterations (default 12)] [late] [blocking]
 *   late:     a member whose call failed goes straight to the agreement without
 *             revoking (the others then learn of the failure from their own calls or
 *             the agreement).
 *   blocking: step 3 is a blocking MPI_Bcast instead of MPI_Ibcast + MPI_Wait.
 * FT_LOOP_DIE=R,I,S in the environment: world rank R dies itself before step S (1-4:
 * Allreduce, Sendrecv, Ibcast, agree) of iteration I, with Sim_FT_kill_me() under MPIFT
 * and raise(SIGKILL) on a real ULFM MPI, so one death can be compared with the oracle.
 * Builds with MPIFT (-Iinclude/compat; ranks also die by MPIFT_KILL) or against a real
 * ULFM MPI (Open MPI 5 with ULFM). */
#include <mpi.h>
#if defined(OPEN_MPI) && !defined(MPIFT_VERSION)
#include <mpi-ext.h> /* Open MPI 5: MPIX_ names live in the ftmpi extension */
#endif
#include <stdio.h>
#include <stdlib.h>
#ifdef MPIFT_VERSION
#define KILL_ME() Sim_FT_kill_me()
#else
#include <signal.h>
#define KILL_ME() raise(SIGKILL)
#endif

static int die_rank = -1, die_iter = -1, die_step = -1, world_rank, blocking;

/* FT_LOOP_DIE: this rank dies before step s of iteration it. */
static void maybe_die(int it, int s)
{
    if (world_rank == die_rank && it == die_iter && s == die_step) KILL_ME();
}

#define WORK 1000 /* terms of each iteration's sum */

/* Term k of iteration it: an integer, so sums are exact in a double. */
static double term(int it, int k) { return (double)((k * (it + 1)) % 97); }

/* This member's share of iteration it: terms k with k % size == rank. */
static double share(int it, int rank, int size)
{
    double s = 0;
    for (int k = rank; k < WORK; k += size) s += term(it, k);
    return s;
}

/* One iteration's steps 1-3; the first error code, MPI_SUCCESS if none.
 * *wrong is set when a value that arrived is not the one expected. */
static int step(MPI_Comm comm, int it, double *total, int *wrong)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double part = share(it, rank, size);
    maybe_die(it, 1);
    rc = MPI_Allreduce(&part, total, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (rc != MPI_SUCCESS) return rc;

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = it * 1000 + rank, got = -1;
    maybe_die(it, 2);
    rc = MPI_Sendrecv(&token, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, comm,
                      MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    if (got != it * 1000 + left) *wrong |= 1; /* a wrong token */

    double b = (rank == 0) ? *total : -1.0;
    MPI_Request req;
    maybe_die(it, 3);
    if (blocking) {
        rc = MPI_Bcast(&b, 1, MPI_DOUBLE, 0, comm);
    } else {
        rc = MPI_Ibcast(&b, 1, MPI_DOUBLE, 0, comm, &req);
        if (rc != MPI_SUCCESS) return rc;
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return rc;
    if (b != *total) *wrong |= 2; /* a wrong broadcast value */
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 12;
    int late = 0;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == 'l') late = 1;
        if (argv[i][0] == 'b') blocking = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    const char *d = getenv("FT_LOOP_DIE");
    if (d) sscanf(d, "%d,%d,%d", &die_rank, &die_iter, &die_step);
    /* The working communicator: a dup of the world, or, if someone died before or
     * during the dup (which then need not fail everywhere), the world shrunk. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm comm = MPI_COMM_NULL;
    int drc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int dok = (drc == MPI_SUCCESS);
    if (MPIX_Comm_agree(MPI_COMM_WORLD, &dok) != MPI_SUCCESS || !dok) {
        if (drc == MPI_SUCCESS) MPI_Comm_free(&comm);
        if (MPIX_Comm_shrink(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
            fprintf(stderr, "ft_loop: rank %d: WRONG shrink failed\n", world_rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    double sum = 0;
    int wrong = 0, shrinks = 0;
    for (int it = 0; it < iters;) {
        double total = 0;
        int rc = step(comm, it, &total, &wrong);
        if (rc != MPI_SUCCESS && !late) MPIX_Comm_revoke(comm);
        int ok = (rc == MPI_SUCCESS);
        maybe_die(it, 4);
        int arc = MPIX_Comm_agree(comm, &ok);
        if (arc == MPI_SUCCESS && ok) {
            sum += total;
            it++;
            continue;
        }
        /* Something failed somewhere: everybody here knows it. Repair and redo. */
        MPIX_Comm_revoke(comm);
        MPI_Comm shrunk;
        if (MPIX_Comm_shrink(comm, &shrunk) != MPI_SUCCESS) {
            fprintf(stderr, "ft_loop: rank %d: WRONG shrink failed\n", world_rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm_free(&comm);
        comm = shrunk;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        shrinks++;
    }

    double expect = 0;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < WORK; k++) expect += term(it, k);
    int good = !wrong && sum == expect;
    printf("ft_loop: rank %d: %s sum %.0f expected %.0f iterations %d shrinks %d%s%s\n", world_rank,
           good ? "OK" : "WRONG", sum, expect, iters, shrinks, (wrong & 1) ? " (a wrong token arrived)" : "",
           (wrong & 2) ? " (a wrong broadcast value arrived)" : "");
    fflush(stdout);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return good ? 0 : 1;
}
