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
 * (written for 4 and 8).
 *
 * --campaign: the same program, robust to ONE more death anywhere (a kill-point
 * campaign's MPIFT_KILL, or --die-extra R@K: world rank R dies before its K-th
 * communication call), also during the recovery. The constructors are checked
 * by an agreement (a failed one skips A and B); calls that must fail may also
 * say REVOKED, calls that may succeed are checked when they do; a failed ring
 * revokes MPI_COMM_WORLD; C is shrunk until an agreement says every survivor
 * has the result. Each survivor prints "OK campaign shrunk=N" (N = size of
 * the shrunk C: n - 2, or n - 3 after the extra death). */
#include "ulfm_common.h"
#include "overlap_common.h"

#ifndef ROUNDS
#define ROUNDS 8
#endif

static int campaign, extra_rank = -1, extra_step = -1, steps;

/* Before each communication call: --die-extra's death, at its step. */
static void step(void)
{
    if (++steps == extra_step && u_rank == extra_rank) u_die("extra death (--die-extra)");
}

/* A failure the call may report: PROC_FAILED, in campaign mode also REVOKED. */
static int failed(int rc)
{
    return u_class(rc) == MPIX_ERR_PROC_FAILED || (campaign && u_class(rc) == MPIX_ERR_REVOKED);
}
#define MUST_FAIL(what, rc) \
    do { if (!campaign || !failed(rc)) CHECK_RC(what, rc, MPIX_ERR_PROC_FAILED); } while (0)

/* A communicator of the listed world ranks, in that order (MPI_COMM_NULL at
 * the others, and where the constructor failed: *ok = 0), with
 * MPI_ERRORS_RETURN. Collective over MPI_COMM_WORLD. */
static MPI_Comm make_comm(const int *ranks, int k, int *ok)
{
    MPI_Group world, g;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, k, ranks, &g);
    step();
    if (MPI_Comm_create(MPI_COMM_WORLD, g, &c) != MPI_SUCCESS) *ok = 0, c = MPI_COMM_NULL;
    if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    return c;
}

/* A's live members: Bcast and Reduce rooted at the dead d0 (A's rank 0). */
static void run_a(MPI_Comm a)
{
    int x = -1, sum = -1, rc;
    step();
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, a);
    MUST_FAIL("Bcast(A,dead root)", rc);
    x = u_rank;
    step();
    rc = MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, 0, a);
    CHECK(rc == MPI_SUCCESS || failed(rc), "Reduce(A,dead root)=%s", u_name(rc));
    step();
    rc = MPI_Barrier(a);
    MUST_FAIL("Barrier(A)", rc);
}

/* B's live members: Barrier, Allreduce, Ibcast from B's live root (rank 0). */
static void run_b(MPI_Comm b)
{
    int x = u_rank, sum = -1, rc, brank;
    MPI_Request req;
    MPI_Comm_rank(b, &brank);
    step();
    rc = MPI_Barrier(b);
    MUST_FAIL("Barrier(B)", rc);
    step();
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, b);
    MUST_FAIL("Allreduce(B)", rc);
    x = brank == 0 ? 4242 : -1;
    step();
    rc = MPI_Ibcast(&x, 1, MPI_INT, 0, b, &req);
    if (rc == MPI_SUCCESS) step(), rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(failed(rc) || (rc == MPI_SUCCESS && x == 4242), "Ibcast(B,live root)=%s x=%d",
          u_name(rc), x);
}

/* Survivors: each sends to the next survivor and receives from the previous. */
static void ring(int me)
{
    int to = ov_live[(me + 1) % ov_n_live], from = ov_live[(me + ov_n_live - 1) % ov_n_live];
    int x = 1000 + u_rank, y = -1, rc;
    step();
    rc = MPI_Sendrecv(&x, 1, MPI_INT, to, 7, &y, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    if (campaign && failed(rc)) {
        /* A neighbour died: the revoke frees whoever still waits for us. */
        step();
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        return;
    }
    CHECK(rc == MPI_SUCCESS && y == 1000 + from, "ring Sendrecv=%s got %d (want %d)", u_name(rc),
          y, 1000 + from);
}

/* Campaign mode: shrink c until an agreement (on c, which works whatever
 * died) says every survivor got the result; a rank dying in the shrink may
 * make it fail. A result nobody agreed on is dropped, not freed: freeing it
 * would be one more collective with a possibly dead member. */
static MPI_Comm shrink_agreed(MPI_Comm c)
{
    MPI_Comm s = MPI_COMM_NULL;
    int rc, flag, tries;
    for (tries = 0; tries < 10; tries++) {
        step();
        rc = MPIX_Comm_shrink(c, &s);
        CHECK(rc == MPI_SUCCESS || failed(rc), "shrink(C)=%s", u_name(rc));
        flag = rc == MPI_SUCCESS;
        step();
        MPIX_Comm_agree(c, &flag); /* PROC_FAILED here still gives the AND */
        if (flag) return s;
    }
    u_fail("shrink(C) failed 10 times");
    return MPI_COMM_NULL;
}

/* Campaign mode: the shrunk C holds me and every survivor but d0, d1 and maybe
 * one more (the extra death), in the old order; an Allreduce on it gives the
 * sum of its world ranks, or fails if a member died since. */
static void shrink_campaign(MPI_Comm c, int d0, int d1)
{
    MPI_Comm s = shrink_agreed(c);
    MPI_Group world, g;
    int size = -1, r = -1, i, ranks[MAXP], w[MAXP], want = 0, sum = -1, rc, sorted = 1, mine = 0;
    if (s == MPI_COMM_NULL) return;
    MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Comm_size(s, &size);
    MPI_Comm_rank(s, &r);
    CHECK(size == ov_n_live || size == ov_n_live - 1, "shrunk size %d (want %d or %d)", size,
          ov_n_live, ov_n_live - 1);
    if (size < 1 || size > MAXP) return;
    MPI_Comm_group(s, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (i = 0; i < size; i++) ranks[i] = i;
    MPI_Group_translate_ranks(g, size, ranks, world, w);
    for (i = 0; i < size; i++) {
        want += w[i];
        if (i > 0 && w[i] <= w[i - 1]) sorted = 0;
        if (w[i] == d0 || w[i] == d1) u_fail("shrunk C holds dead rank %d", w[i]);
        if (i == r && w[i] == u_rank) mine = 1;
    }
    CHECK(sorted && mine, "shrunk C not in the old order or rank %d misplaced", r);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    step();
    rc = MPI_Allreduce(&u_rank, &sum, 1, MPI_INT, MPI_SUM, s);
    CHECK(failed(rc) || (rc == MPI_SUCCESS && sum == want), "Allreduce(shrunk)=%s sum %d (want %d)",
          u_name(rc), sum, want);
    u_note("campaign shrunk=%d", size);
}

/* argv: --campaign, --die-extra R@K (campaign mode only). */
static void parse_args(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--campaign")) campaign = 1;
        else if (!strcmp(argv[i], "--die-extra") && i + 1 < argc &&
                 sscanf(argv[++i], "%d@%d", &extra_rank, &extra_step) == 2) continue;
        else MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!campaign) extra_rank = extra_step = -1;
}

int main(int argc, char **argv)
{
    int d0, d1, la[MAXP], lb[MAXP], na = 0, nb = 0, r, me = -1, ok_ab = 1, ok_c = 1, flag;
    MPI_Comm a, b, c;

    u_init(&argc, &argv, 1);
    parse_args(argc, argv);
    if (u_size < 4 || u_size % 2 || u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    d0 = u_size / 4, d1 = d0 + 1;
    la[na++] = d0, la[na++] = d1; /* A's rank 0 is the dead root */
    for (r = 0; r < u_size; r++) {
        if (r == d0 || r == d1) continue;
        if (r == u_rank) me = ov_n_live;
        ov_live[ov_n_live++] = r;
        if (r < u_size / 2) la[na++] = r;
        else lb[nb++] = r;
    }
    lb[nb++] = d0, lb[nb++] = d1; /* B's rank 0 is live */
    a = make_comm(la, na, &ok_ab);
    b = make_comm(lb, nb, &ok_ab);
    step();
    if (MPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS) ok_c = 0, c = MPI_COMM_NULL;
    if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (campaign) {
        /* A constructor an extra death hit may have failed somewhere: agree on
         * bit 0 (A and B everywhere), bit 1 (C everywhere); without A and B
         * the phase is skipped, without C MPI_COMM_WORLD is shrunk. */
        flag = (ok_ab ? 1 : 0) | (ok_c ? 2 : 0);
        step();
        MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        if (!(flag & 1)) a = b = MPI_COMM_NULL;
        if (!(flag & 2)) c = MPI_COMM_WORLD;
    } else {
        /* Every rank is out of the constructors before anyone dies (a
         * constructor a member dies in may fail). This Barrier itself may see
         * the deaths: either outcome is allowed, so it is not checked. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (u_rank == d0 || u_rank == d1) u_die("after the communicators are built");

    for (r = 0; r < ROUNDS; r++) {
        if (a != MPI_COMM_NULL) run_a(a);
        if (b != MPI_COMM_NULL) run_b(b);
    }
    if (!campaign)
        u_note("%s:%d_rounds", a != MPI_COMM_NULL ? "A:Bcast,Reduce,Barrier" : "B:Barrier,Allreduce,Ibcast", ROUNDS);
    ring(me);
    if (campaign) shrink_campaign(c, d0, d1);
    else ov_shrink_check(c, "shrink(C)", me);
    return u_finish();
}
