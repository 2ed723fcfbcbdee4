/* overlap_a: the thesis's overlapping-communicator deadlock case (Walter 2016,
 * chapter 5, figure 5.2). Two ranks die, d0 = n/4 and d1 = n/4 + 1; both are
 * members of two communicators made with MPI_Comm_create from MPI_COMM_WORLD:
 *   A = [d0, d1, live ranks below n/2]   (collectives rooted at the dead d0)
 *   B = [live ranks from n/2 on, d0, d1]  (collectives rooted at a live rank)
 * A's and B's live members are disjoint and run their collectives at the same
 * time, so a simulator must make each dead rank take part in both at once:
 *   A: Bcast from d0 (PROC_FAILED: the root never sends), Reduce to d0
 *      (PROC_FAILED, or success at a non-root: allowed), Barrier (PROC_FAILED).
 *   B: Barrier, Allreduce (PROC_FAILED: the dead never enter), then
 *      Ibcast + Wait from B's live root (PROC_FAILED or success: allowed).
 * Then the survivors meet point-to-point (a ring of Sendrecv on MPI_COMM_WORLD)
 * and shrink C, a dup of MPI_COMM_WORLD made before the deaths: n - 2 members in
 * the old order, and an Allreduce on it works. A and B repeat their collectives
 * ROUNDS times (the failure stays unacknowledged, so every round fails alike):
 * each round is one more chance for the two dead ranks to be needed in A and B
 * at once. Final lines name only outcomes ULFM fixes. Needs an even np >= 4
 * (written for 4 and 8). */
#include "ulfm_common.h"

#define MAXP 64
#ifndef ROUNDS
#define ROUNDS 8
#endif

static int n_live, live[MAXP]; /* world ranks of the survivors, ascending */

/* A communicator of the listed world ranks, in that order (MPI_COMM_NULL at
 * the others), with MPI_ERRORS_RETURN. Collective over MPI_COMM_WORLD. */
static MPI_Comm make_comm(const int *ranks, int k)
{
    MPI_Group world, g;
    MPI_Comm c;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, k, ranks, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &c);
    if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    return c;
}

/* A's live members: Bcast and Reduce rooted at the dead d0 (A's rank 0). */
static void run_a(MPI_Comm a)
{
    int x = -1, sum = -1, rc;
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, a);
    CHECK_RC("Bcast(A,dead root)", rc, MPIX_ERR_PROC_FAILED);
    x = u_rank;
    rc = MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, 0, a);
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Reduce(A,dead root)=%s",
          u_name(rc));
    rc = MPI_Barrier(a);
    CHECK_RC("Barrier(A)", rc, MPIX_ERR_PROC_FAILED);
}

/* B's live members: Barrier, Allreduce, Ibcast from B's live root (rank 0). */
static void run_b(MPI_Comm b)
{
    int x = u_rank, sum = -1, rc, brank;
    MPI_Request req;
    MPI_Comm_rank(b, &brank);
    rc = MPI_Barrier(b);
    CHECK_RC("Barrier(B)", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, b);
    CHECK_RC("Allreduce(B)", rc, MPIX_ERR_PROC_FAILED);
    x = brank == 0 ? 4242 : -1;
    rc = MPI_Ibcast(&x, 1, MPI_INT, 0, b, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED || (rc == MPI_SUCCESS && x == 4242),
          "Ibcast(B,live root)=%s x=%d", u_name(rc), x);
}

/* Survivors: each sends to the next survivor and receives from the previous. */
static void ring(int me)
{
    int to = live[(me + 1) % n_live], from = live[(me + n_live - 1) % n_live];
    int x = 1000 + u_rank, y = -1, rc;
    rc = MPI_Sendrecv(&x, 1, MPI_INT, to, 7, &y, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && y == 1000 + from, "ring Sendrecv=%s got %d (want %d)", u_name(rc),
          y, 1000 + from);
}

/* Shrink c: the survivors, in the old order; an Allreduce on it works. */
static void shrink_check(MPI_Comm c, int me)
{
    MPI_Comm s = MPI_COMM_NULL;
    int rc, size = -1, r = -1, sum = -1, want = 0, i;
    rc = MPIX_Comm_shrink(c, &s);
    CHECK_RC("shrink(C)", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return;
    MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Comm_size(s, &size);
    MPI_Comm_rank(s, &r);
    CHECK(size == n_live && r == me, "shrunk size %d rank %d (want %d, %d)", size, r, n_live, me);
    for (i = 0; i < n_live; i++) want += live[i];
    rc = MPI_Allreduce(&u_rank, &sum, 1, MPI_INT, MPI_SUM, s);
    CHECK(rc == MPI_SUCCESS && sum == want, "Allreduce(shrunk)=%s sum %d (want %d)", u_name(rc),
          sum, want);
    u_note("shrunk=%d", size);
    MPI_Comm_free(&s);
}

int main(int argc, char **argv)
{
    int d0, d1, la[MAXP], lb[MAXP], na = 0, nb = 0, r, me = -1;
    MPI_Comm a, b, c;

    u_init(&argc, &argv, 1);
    if (u_size < 4 || u_size % 2 || u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    d0 = u_size / 4, d1 = d0 + 1;
    la[na++] = d0, la[na++] = d1; /* A's rank 0 is the dead root */
    for (r = 0; r < u_size; r++) {
        if (r == d0 || r == d1) continue;
        if (r == u_rank) me = n_live;
        live[n_live++] = r;
        if (r < u_size / 2) la[na++] = r;
        else lb[nb++] = r;
    }
    lb[nb++] = d0, lb[nb++] = d1; /* B's rank 0 is live */
    a = make_comm(la, na);
    b = make_comm(lb, nb);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    /* Every rank is out of the constructors before anyone dies (a constructor a
     * member dies in may fail). This Barrier itself may see the deaths: either
     * outcome is allowed, so it is not checked. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == d0 || u_rank == d1) u_die("after the communicators are built");

    for (r = 0; r < ROUNDS; r++) {
        if (a != MPI_COMM_NULL) run_a(a);
        if (b != MPI_COMM_NULL) run_b(b);
    }
    u_note("%s:%d_rounds", a != MPI_COMM_NULL ? "A:Bcast,Reduce,Barrier" : "B:Barrier,Allreduce,Ibcast", ROUNDS);
    ring(me);
    shrink_check(c, me);
    return u_finish();
}
