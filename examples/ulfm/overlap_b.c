/* overlap_b: three overlapping communicators, non-blocking and blocking
 * collectives in flight on them at once, 2 (np < 8) or 3 (np >= 8) dead ranks.
 * Dead ranks D = {1 + k * (n / nd)}: {1, 3} at 4 ranks, {1, 3, 5} at 8. L is the
 * list of live ranks. Made with MPI_Comm_split from MPI_COMM_WORLD (the key
 * orders the members; rank 0 of each is the root its collectives use):
 *   P = [D..., L at even positions]   root dead
 *   Q = [L at odd positions, D...]    root live
 *   R = [last dead, other dead but the first, L[0], last of L]   root dead
 * Every dead rank is in P and Q, all but the first also in R; L[0] is in P and R,
 * the last live rank in R and P or Q. A live rank does, in this order:
 *   start Ibcast(P) from the dead root, start Iallreduce(Q), blocking
 *   Allreduce(R), Wait(P), Wait(Q)   -> all PROC_FAILED (the dead never enter);
 *   Reduce(P) to the dead root (PROC_FAILED or success at a non-root: allowed),
 *   start Ibarrier(Q), blocking Bcast(R) from the dead root, Wait(Q)
 *                                    -> Ibarrier and Bcast PROC_FAILED.
 * Both rounds are repeated ROUNDS times (the failures stay unacknowledged, so
 * every repetition fails alike). Then the survivors meet point-to-point (a ring
 * of Sendrecv on MPI_COMM_WORLD) and shrink MPI_COMM_WORLD itself: n - nd
 * members in the old order, and an Allreduce on it works. Final lines name only
 * outcomes ULFM fixes. Needs an even np >= 4 (written for 4 and 8). */
#include "ulfm_common.h"
#include "overlap_common.h"

#ifndef ROUNDS
#define ROUNDS 4
#endif

static int nd, dead[3], rep;

/* Notes what a live rank ran, in the first repetition only (all repeat it). */
static void note(const char *what)
{
    if (rep == 0) u_note("%s", what);
}

static int is_dead(int r)
{
    int k;
    for (k = 0; k < nd; k++)
        if (dead[k] == r) return 1;
    return 0;
}

/* Start code, then (if the start worked) the Wait code. */
static int finish(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? MPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

/* Round 1: non-blocking collectives on P and Q pending across a blocking one on R. */
static void round1(MPI_Comm p, MPI_Comm q, MPI_Comm r)
{
    int xp = -1, xq = u_rank, sq = -1, xr = u_rank, sr = -1, rcp = 0, rcq = 0, rc;
    MPI_Request reqp = MPI_REQUEST_NULL, reqq = MPI_REQUEST_NULL;
    if (p != MPI_COMM_NULL) rcp = MPI_Ibcast(&xp, 1, MPI_INT, 0, p, &reqp);
    if (q != MPI_COMM_NULL) rcq = MPI_Iallreduce(&xq, &sq, 1, MPI_INT, MPI_SUM, q, &reqq);
    if (r != MPI_COMM_NULL) {
        rc = MPI_Allreduce(&xr, &sr, 1, MPI_INT, MPI_SUM, r);
        CHECK_RC("Allreduce(R)", rc, MPIX_ERR_PROC_FAILED);
        note("R:Allreduce");
    }
    if (p != MPI_COMM_NULL) {
        CHECK_RC("Ibcast(P,dead root)", finish(rcp, &reqp), MPIX_ERR_PROC_FAILED);
        note("P:Ibcast");
    }
    if (q != MPI_COMM_NULL) {
        CHECK_RC("Iallreduce(Q)", finish(rcq, &reqq), MPIX_ERR_PROC_FAILED);
        note("Q:Iallreduce");
    }
}

/* Round 2: Reduce to P's dead root; Ibarrier on Q pending across Bcast on R. */
static void round2(MPI_Comm p, MPI_Comm q, MPI_Comm r)
{
    int x = u_rank, s = -1, rcq = 0, rc;
    MPI_Request reqq = MPI_REQUEST_NULL;
    if (p != MPI_COMM_NULL) {
        rc = MPI_Reduce(&x, &s, 1, MPI_INT, MPI_SUM, 0, p);
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Reduce(P,dead root)=%s",
              u_name(rc));
        note("P:Reduce");
    }
    if (q != MPI_COMM_NULL) rcq = MPI_Ibarrier(q, &reqq);
    if (r != MPI_COMM_NULL) {
        rc = MPI_Bcast(&x, 1, MPI_INT, 0, r);
        CHECK_RC("Bcast(R,dead root)", rc, MPIX_ERR_PROC_FAILED);
        note("R:Bcast");
    }
    if (q != MPI_COMM_NULL) {
        CHECK_RC("Ibarrier(Q)", finish(rcq, &reqq), MPIX_ERR_PROC_FAILED);
        note("Q:Ibarrier");
    }
}

int main(int argc, char **argv)
{
    int lp[MAXP], lq[MAXP], lr[MAXP], np_ = 0, nq = 0, nr = 0, i, k, me = -1;
    MPI_Comm p, q, r;

    u_init(&argc, &argv, 1);
    if (u_size < 4 || u_size % 2 || u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    nd = u_size >= 8 ? 3 : 2;
    for (k = 0; k < nd; k++) dead[k] = 1 + k * (u_size / nd);
    for (i = 0; i < u_size; i++) {
        if (is_dead(i)) continue;
        if (i == u_rank) me = ov_n_live;
        ov_live[ov_n_live++] = i;
    }
    for (k = 0; k < nd; k++) lp[np_++] = dead[k];
    for (i = 0; i < ov_n_live; i++) {
        if (i % 2 == 0) lp[np_++] = ov_live[i];
        else lq[nq++] = ov_live[i];
    }
    for (k = 0; k < nd; k++) lq[nq++] = dead[k];
    for (k = nd - 1; k >= 1; k--) lr[nr++] = dead[k];
    lr[nr++] = ov_live[0], lr[nr++] = ov_live[ov_n_live - 1];
    p = ov_split_comm(lp, np_);
    q = ov_split_comm(lq, nq);
    r = ov_split_comm(lr, nr);
    /* Every rank is out of the constructors before anyone dies (a constructor a
     * member dies in may fail). This Barrier itself may see the deaths: either
     * outcome is allowed, so it is not checked. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (is_dead(u_rank)) u_die("after the communicators are built");

    for (rep = 0; rep < ROUNDS; rep++) {
        round1(p, q, r);
        round2(p, q, r);
    }
    ov_ring(me);
    ov_shrink_check(MPI_COMM_WORLD, "shrink(world)", me);
    return u_finish();
}
