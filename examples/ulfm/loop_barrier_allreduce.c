/* loop_barrier_allreduce.c: the simplest ULFM loop (issue 35), 150 iterations of
 * MPI_Barrier + a 1-int MPI_Allreduce(MPI_SUM) on MPI_COMM_WORLD with
 * MPI_ERRORS_RETURN, made to survive any single death.
 *
 * Each member contributes its world rank + 1, so every successful allreduce must
 * return the sum of (world rank + 1) over the working communicator's members: a
 * dead member's dummy contribution or a stale membership shows as a wrong sum.
 *
 * Recovery: a member whose call fails (PROC_FAILED or REVOKED) revokes the working
 * communicator (so nobody stays blocked in it), joins MPIX_Comm_agree, shrinks, and
 * the survivors resume at the smallest count of completed iterations among them
 * (MPI_Allreduce MIN on the shrunk communicator): a member may have completed
 * iteration i while another failed in it, and redoing i keeps them in step. After the
 * loop every member joins one more agree: it fails uniformly if a failure is not yet
 * acknowledged, so a member that finished cannot leave the others alone in a shrink;
 * the survivors then recover and agree again.
 *
 * Final line per rank: "rank R: OK iters=150 size=N shrinks=K" (N: members of the
 * final communicator), or FAIL with the reason; the victim prints "rank R: DIES ...".
 *
 * Usage: loop_barrier_allreduce [--die R@I[a] | --die none] [--ignore-errors]
 *   default: world rank size/2 dies before the barrier of iteration 50 (issue 35's
 *   death in a barrier); `a`: before the allreduce; `none`: no death of its own
 *   (campaigns, MPIFT_KILL). The victim dies by KILL_ME (ulfm_common.h): Sim_FT_kill_me
 *   under MPIFT, raise(SIGKILL) on a real ULFM MPI.
 *   --ignore-errors: issue 35's loop as a new user writes it, no recovery: all 150
 *   iterations on MPI_COMM_WORLD whatever the calls return. After a death, every
 *   call may fail (PROC_FAILED only: nobody revokes) and a successful allreduce must
 *   still have every member's contribution; "rank R: OK iters=150 size=N
 *   failed_calls=F". This form is what hung under load (MPIFT at d2f3bf9). */
#include "ulfm_common.h"

#define ITERS 150

static int die_rank = -1, die_iter = -1, die_before_allreduce, ignore_errors;

static void parse_die(int argc, char **argv)
{
    int i;
    die_rank = u_size / 2, die_iter = 50;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ignore-errors") == 0) ignore_errors = 1;
        if (strcmp(argv[i], "--die") != 0 || i + 1 == argc) continue;
        if (strcmp(argv[i + 1], "none") == 0) {
            die_rank = -1;
        } else {
            char at = 0;
            if (sscanf(argv[i + 1], "%d@%d%c", &die_rank, &die_iter, &at) < 2) die_rank = -1;
            die_before_allreduce = (at == 'a');
        }
    }
}

static void maybe_die(int it, int before_allreduce)
{
    char where[64];
    if (u_rank != die_rank || it != die_iter || before_allreduce != die_before_allreduce) return;
    snprintf(where, sizeof where, "iter=%d before %s", it, before_allreduce ? "allreduce" : "barrier");
    u_die(where);
}

/* Sum of (world rank + 1) over comm's members. Local calls only (group translation). */
static int member_sum(MPI_Comm comm)
{
    MPI_Group g, wg;
    int n, i, s = 0, *r, *w;
    if (comm == MPI_COMM_WORLD) return u_size * (u_size + 1) / 2;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_size(g, &n);
    r = malloc(2 * n * sizeof *r), w = r + n;
    for (i = 0; i < n; i++) r[i] = i;
    MPI_Group_translate_ranks(g, n, r, wg, w);
    for (i = 0; i < n; i++) s += w[i] + 1;
    free(r);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return s;
}

/* One iteration: barrier then allreduce; the first error code, MPI_SUCCESS if none. */
static int iteration(MPI_Comm comm, int it, int expect)
{
    int rc, mine = u_rank + 1, sum = -1, cls;
    maybe_die(it, 0);
    rc = MPI_Barrier(comm);
    if (rc == MPI_SUCCESS) {
        maybe_die(it, 1);
        rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
    }
    if (rc == MPI_SUCCESS) {
        CHECK(sum == expect, "iter=%d sum=%d(want %d)", it, sum, expect);
        return rc;
    }
    cls = u_class(rc);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "iter=%d %s", it, u_name(rc));
    return rc;
}

/* The agreement after a failure (flag 0) or at the end (flag 1): nonzero when every
 * survivor agreed on success with no unacknowledged failure. */
static int agreed(MPI_Comm comm, int ok)
{
    int flag = ok, rc = MPIX_Comm_agree(comm, &flag);
    return rc == MPI_SUCCESS && flag;
}

/* Revoke-agree-shrink until the survivors agree, on the shrunk communicator, on the
 * smallest number of completed iterations; returns it. `in_agree`: this member has
 * already joined the agreement on *comm (the final one, which failed): each member
 * joins exactly one agreement per communicator, or the agreements would not match. */
static int recover(MPI_Comm *comm, int done, int *shrinks, int in_agree)
{
    for (;;) {
        MPI_Comm s;
        int lo = done, rc;
        MPIX_Comm_revoke(*comm);
        /* Everybody here shrinks: the agreement only meets the members that finished. */
        if (!in_agree) (void)agreed(*comm, 0);
        in_agree = 0;
        rc = MPIX_Comm_shrink(*comm, &s);
        if (rc != MPI_SUCCESS) {
            u_fail("shrink=%s", u_name(rc));
            u_line("FAIL", u_why); /* no way on without a communicator */
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (*comm != MPI_COMM_WORLD) MPI_Comm_free(comm);
        *comm = s;
        (*shrinks)++;
        MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
        rc = MPI_Allreduce(&done, &lo, 1, MPI_INT, MPI_MIN, *comm);
        if (rc == MPI_SUCCESS) return lo;
    }
}

/* --ignore-errors: the loop without recovery; the number of calls that failed. */
static int loop_ignoring_errors(int expect)
{
    int it, rc, failed = 0;
    for (it = 0; it < ITERS; it++) {
        int mine = u_rank + 1, sum = -1;
        maybe_die(it, 0);
        rc = MPI_Barrier(MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) failed++;
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "iter=%d Barrier=%s", it, u_name(rc));
        maybe_die(it, 1);
        rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) failed++;
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "iter=%d Allreduce=%s", it, u_name(rc));
        CHECK(rc != MPI_SUCCESS || sum == expect, "iter=%d sum=%d(want %d)", it, sum, expect);
    }
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int done = 0, shrinks = 0, size, expect;
    u_init(&argc, &argv, 1);
    parse_die(argc, argv);
    expect = member_sum(comm);
    if (ignore_errors) {
        int failed = loop_ignoring_errors(expect);
        u_note("iters=%d size=%d failed_calls=%d", ITERS, u_size, failed);
        return u_finish();
    }
    for (;;) {
        while (done < ITERS) {
            if (iteration(comm, done, expect) == MPI_SUCCESS) {
                done++;
                continue;
            }
            done = recover(&comm, done, &shrinks, 0);
            expect = member_sum(comm);
        }
        if (agreed(comm, 1)) break;
        done = recover(&comm, done, &shrinks, 1);
        expect = member_sum(comm);
    }
    MPI_Comm_size(comm, &size);
    u_note("iters=%d size=%d shrinks=%d", done, size, shrinks);
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    return u_finish();
}
