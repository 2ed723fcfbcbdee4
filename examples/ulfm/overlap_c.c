/* overlap_c: a three-way cycle of overlapping communicators. Three ranks die,
 * d0, d1, d2 (1, 2, 3 at 4 ranks; 1, 3, 5 at 8), and each pair of them is in
 * one communicator, made with MPI_Comm_split from MPI_COMM_WORLD (the key
 * orders the members; rank 0 of each is the root its rooted collectives use):
 *   A = [d0, d1, LA...]   root dead
 *   B = [LB..., d1, d2]   root live
 *   C = [d2, LC..., d0]   root dead
 * so a dead rank is needed in two communicators at once, and the three form a
 * cycle (no order of the dead ranks serves all three one after the other).
 * At 8 ranks the live sets LA, LB, LC are disjoint (the live ranks dealt out in
 * turn) and every live rank runs blocking collectives on its one communicator,
 * all three communicators at the same time:
 *   A: Bcast from the dead root (PROC_FAILED: it never sends), Reduce to it
 *      (PROC_FAILED, or success at a non-root: allowed), Allgather (PROC_FAILED);
 *   B: Barrier, Allreduce (PROC_FAILED: the dead never enter), Bcast from B's
 *      live root (PROC_FAILED, or success with the root's value: allowed);
 *   C: Allgather, Reduce to the dead root, Barrier (as in A).
 * At 4 ranks the one live rank L = 0 is in all three: it starts Ibcast on A
 * from the dead root, Iallreduce on B, Ibarrier on C and waits for all three
 * with Waitall (each PROC_FAILED); then, in a blocking round, runs A's, B's
 * and C's blocking collectives above in that sequence.
 * The rounds repeat ROUNDS times (the failures stay unacknowledged, so every
 * repetition fails alike). Then the survivors meet point-to-point (a ring of
 * Sendrecv on MPI_COMM_WORLD) and shrink W, a dup of MPI_COMM_WORLD made
 * before the deaths: n - 3 members in the old order, and an Allreduce on it
 * works. Final lines name only outcomes ULFM fixes. Needs np 4 or an even
 * np >= 8 (written for 4 and 8). */
#include "ulfm_common.h"
#include "overlap_common.h"

#ifndef ROUNDS
#define ROUNDS 4
#endif

static int dead[3], rep;

/* Notes what a live rank ran, in the first repetition only (all repeat it). */
static void note(const char *what)
{
    if (rep == 0) u_note("%s", what);
}

static int is_dead(int r)
{
    return r == dead[0] || r == dead[1] || r == dead[2];
}

/* The collectives rooted at a dead rank 0 (A, C): Bcast or Allgather first. */
static void run_dead_root(MPI_Comm c, const char *name, int bcast_first)
{
    int x = u_rank, s = -1, all[MAXP], rc;
    char what[64];
    if (bcast_first) {
        rc = MPI_Bcast(&x, 1, MPI_INT, 0, c);
        snprintf(what, sizeof what, "Bcast(%s,dead root)", name);
        CHECK_RC(what, rc, MPIX_ERR_PROC_FAILED);
    }
    rc = MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, c);
    snprintf(what, sizeof what, "Allgather(%s)", name);
    CHECK_RC(what, rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Reduce(&x, &s, 1, MPI_INT, MPI_SUM, 0, c);
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Reduce(%s,dead root)=%s",
          name, u_name(rc));
    if (!bcast_first) {
        rc = MPI_Barrier(c);
        snprintf(what, sizeof what, "Barrier(%s)", name);
        CHECK_RC(what, rc, MPIX_ERR_PROC_FAILED);
    }
}

/* B: Barrier, Allreduce, Bcast from B's live root (rank 0). */
static void run_b(MPI_Comm b)
{
    int x = u_rank, s = -1, brank, rc;
    MPI_Comm_rank(b, &brank);
    rc = MPI_Barrier(b);
    CHECK_RC("Barrier(B)", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, b);
    CHECK_RC("Allreduce(B)", rc, MPIX_ERR_PROC_FAILED);
    x = brank == 0 ? 4242 : -1;
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, b);
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED || (rc == MPI_SUCCESS && x == 4242),
          "Bcast(B,live root)=%s x=%d", u_name(rc), x);
}

/* The blocking round: A's, B's, C's collectives, on those this rank is in. */
static void blocking_round(MPI_Comm a, MPI_Comm b, MPI_Comm c)
{
    if (a != MPI_COMM_NULL) run_dead_root(a, "A", 1), note("A:Bcast,Allgather,Reduce");
    if (b != MPI_COMM_NULL) run_b(b), note("B:Barrier,Allreduce,Bcast");
    if (c != MPI_COMM_NULL) run_dead_root(c, "C", 0), note("C:Allgather,Reduce,Barrier");
}

/* The non-blocking round (the one live rank, in A, B and C): Ibcast from A's
 * dead root, Iallreduce on B, Ibarrier on C, all pending at once; Waitall
 * reports each one's PROC_FAILED in its status (MPI_ERR_IN_STATUS). */
static void nonblocking_round(MPI_Comm a, MPI_Comm b, MPI_Comm c)
{
    static const char *names[3] = {"Ibcast(A,dead root)", "Iallreduce(B)", "Ibarrier(C)"};
    MPI_Request req[3];
    MPI_Status st[3];
    int xa = -1, xb = u_rank, sb = -1, start[3], rc, i;
    start[0] = MPI_Ibcast(&xa, 1, MPI_INT, 0, a, &req[0]);
    start[1] = MPI_Iallreduce(&xb, &sb, 1, MPI_INT, MPI_SUM, b, &req[1]);
    start[2] = MPI_Ibarrier(c, &req[2]);
    for (i = 0; i < 3; i++) {
        CHECK_RC(names[i], start[i], MPI_SUCCESS); /* the start itself */
        if (start[i] != MPI_SUCCESS) req[i] = MPI_REQUEST_NULL;
        st[i].MPI_ERROR = MPI_SUCCESS;
    }
    rc = MPI_Waitall(3, req, st);
    CHECK_RC("Waitall(A,B,C)", rc, MPI_ERR_IN_STATUS);
    for (i = 0; i < 3 && u_class(rc) == MPI_ERR_IN_STATUS; i++)
        if (start[i] == MPI_SUCCESS) CHECK_RC(names[i], st[i].MPI_ERROR, MPIX_ERR_PROC_FAILED);
    note("Waitall(A:Ibcast,B:Iallreduce,C:Ibarrier)");
}

int main(int argc, char **argv)
{
    int la[MAXP], lb[MAXP], lc[MAXP], na = 0, nb = 0, nc = 0, i, me = -1, step;
    MPI_Comm a, b, c, w;

    u_init(&argc, &argv, 1);
    if (u_size < 4 || u_size % 2 || u_size == 6 || u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    step = u_size == 4 ? 1 : 2;
    for (i = 0; i < 3; i++) dead[i] = 1 + i * step;
    for (i = 0; i < u_size; i++) {
        if (is_dead(i)) continue;
        if (i == u_rank) me = ov_n_live;
        ov_live[ov_n_live++] = i;
    }
    la[na++] = dead[0], la[na++] = dead[1];
    for (i = 0; i < ov_n_live; i++) {
        if (ov_n_live == 1 || i % 3 == 0) la[na++] = ov_live[i];
        if (ov_n_live == 1 || i % 3 == 1) lb[nb++] = ov_live[i];
    }
    lb[nb++] = dead[1], lb[nb++] = dead[2];
    lc[nc++] = dead[2];
    for (i = 0; i < ov_n_live; i++)
        if (ov_n_live == 1 || i % 3 == 2) lc[nc++] = ov_live[i];
    lc[nc++] = dead[0];
    a = ov_split_comm(la, na);
    b = ov_split_comm(lb, nb);
    c = ov_split_comm(lc, nc);
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    /* Every rank is out of the constructors before anyone dies (a constructor a
     * member dies in may fail). This Barrier itself may see the deaths: either
     * outcome is allowed, so it is not checked. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (is_dead(u_rank)) u_die("after the communicators are built");

    for (rep = 0; rep < ROUNDS; rep++) {
        if (ov_n_live == 1) nonblocking_round(a, b, c);
        blocking_round(a, b, c);
    }
    ov_ring(me);
    ov_shrink_check(w, "shrink(W)", me);
    return u_finish();
}
