/* inter_loop.c: an iterative ULFM program on an intercommunicator, the subject of
 * kill-point campaigns (docs/CAMPAIGN.md) for intercommunicator recovery.
 *
 * The live processes split into group A (the lower half) and group B and join
 * them with MPI_Intercomm_create. Every iteration, every member sends a token
 * (iteration * 1000 + its world rank) to every member of the remote group and
 * receives one from each (MPI_Isend/MPI_Irecv + MPI_Waitall), checks each token
 * against the sender's world rank, then takes part in MPIX_Comm_agree on the
 * intercommunicator with "everything succeeded here". A member whose call fails
 * revokes the intercommunicator at once. The agreement fails at every member of
 * both groups alike while a failure is not acknowledged, so a failed agreement or
 * a zero flag means: revoke, MPIX_Comm_shrink the intercommunicator (the
 * survivors of both groups), redo the iteration. The setup is retried the same
 * way on the world shrunk, if a death hits it.
 *
 * At the end every survivor prints "inter_loop: rank R: OK iterations I shrinks K"
 * and exits 0, or "inter_loop: rank R: WRONG ..." (a wrong token arrived, or a
 * group died out) and exits 1.
 *
 * Usage: inter_loop [iterations (default 8)]. INTER_LOOP_DIE=R,I in the
 * environment: world rank R dies itself before the exchange of iteration I.
 * Builds with MPIFT (-Iinclude/compat; ranks also die by MPIFT_KILL) or against a
 * real ULFM MPI (Open MPI 5 with ULFM). Needs 3 <= np <= 64. */
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

#define MAXP 64

static int world_rank;

/* World ranks of the remote group of ic. */
static int remote_worlds(MPI_Comm ic, int *w)
{
    int n, i, r[MAXP];
    MPI_Group g, wg;
    MPI_Comm_remote_group(ic, &g);
    MPI_Group_size(g, &n);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (i = 0; i < n; i++) r[i] = i;
    MPI_Group_translate_ranks(g, n, r, wg, w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return n;
}

/* Makes the intercommunicator over the live processes of *w (which it may
 * replace by its shrunk self); 0 when a group would be empty. */
static int setup(MPI_Comm *w, MPI_Comm *ic)
{
    for (;;) {
        int size, rank, rc, ok, half;
        MPI_Comm local = MPI_COMM_NULL;
        MPI_Comm_size(*w, &size);
        MPI_Comm_rank(*w, &rank);
        if (size < 2) return 0;
        half = size / 2;
        *ic = MPI_COMM_NULL;
        rc = MPI_Comm_split(*w, rank < half ? 0 : 1, rank, &local);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Intercomm_create(local, 0, *w, rank < half ? half : 0, 11, ic);
            MPI_Comm_free(&local);
        }
        ok = (rc == MPI_SUCCESS);
        if (MPIX_Comm_agree(*w, &ok) == MPI_SUCCESS && ok) return 1;
        if (*ic != MPI_COMM_NULL) MPI_Comm_free(ic);
        MPI_Comm s;
        MPIX_Comm_revoke(*w);
        if (MPIX_Comm_shrink(*w, &s) != MPI_SUCCESS) return 0;
        MPI_Comm_free(w);
        *w = s;
        MPI_Comm_set_errhandler(*w, MPI_ERRORS_RETURN);
    }
}

/* One exchange; the first error code. *wrong is set by a wrong token. */
static int exchange(MPI_Comm ic, int it, int *wrong)
{
    int n, i, rc, w[MAXP], got[MAXP], token = it * 1000 + world_rank;
    MPI_Request req[2 * MAXP];
    n = remote_worlds(ic, w);
    for (i = 0; i < n; i++) {
        got[i] = -1;
        rc = MPI_Irecv(&got[i], 1, MPI_INT, i, 5, ic, &req[i]);
        if (rc != MPI_SUCCESS) return rc; /* (the requests started stay: a revoke ends them) */
    }
    for (i = 0; i < n; i++) {
        rc = MPI_Isend(&token, 1, MPI_INT, i, 5, ic, &req[n + i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    rc = MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    for (i = 0; i < n; i++)
        if (got[i] != it * 1000 + w[i]) *wrong = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int iters, die_rank = -1, die_iter = -1, it, wrong = 0, shrinks = 0, good;
    const char *d;
    MPI_Comm w, ic;

    MPI_Init(&argc, &argv);
    iters = argc > 1 ? atoi(argv[1]) : 8;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if ((d = getenv("INTER_LOOP_DIE"))) sscanf(d, "%d,%d", &die_rank, &die_iter);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* The world as a communicator that setup may shrink. */
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    {
        int ok = (w != MPI_COMM_NULL);
        if (MPIX_Comm_agree(MPI_COMM_WORLD, &ok) != MPI_SUCCESS || !ok) {
            if (w != MPI_COMM_NULL) MPI_Comm_free(&w);
            MPIX_Comm_shrink(MPI_COMM_WORLD, &w);
        }
    }
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    if (!setup(&w, &ic)) {
        printf("inter_loop: rank %d: WRONG no intercommunicator (a group died out)\n", world_rank);
        fflush(stdout);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    for (it = 0; it < iters;) {
        int rc, ok, arc;
        if (world_rank == die_rank && it == die_iter) KILL_ME();
        rc = exchange(ic, it, &wrong);
        if (rc != MPI_SUCCESS) MPIX_Comm_revoke(ic);
        ok = (rc == MPI_SUCCESS);
        arc = MPIX_Comm_agree(ic, &ok);
        if (arc == MPI_SUCCESS && ok) {
            it++;
            continue;
        }
        MPI_Comm shrunk;
        MPIX_Comm_revoke(ic);
        if (MPIX_Comm_shrink(ic, &shrunk) != MPI_SUCCESS) {
            printf("inter_loop: rank %d: WRONG shrink failed (a group died out?)\n", world_rank);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm_free(&ic);
        ic = shrunk;
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        shrinks++;
    }
    good = !wrong;
    printf("inter_loop: rank %d: %s iterations %d shrinks %d%s\n", world_rank, good ? "OK" : "WRONG", iters, shrinks,
           wrong ? " (a wrong token arrived)" : "");
    fflush(stdout);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&w);
    MPI_Finalize();
    return good ? 0 : 1;
}
