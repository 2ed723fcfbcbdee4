/* iagree_dead: a rank dies while the others have an MPIX_Comm_iagree pending.
 *
 * Phase 1 (np >= 2): every rank but the last (victim 1) starts iagree on
 * MPI_COMM_WORLD and tests it between slices of work; victim 1 dies DIE_MS later
 * without ever starting it. The agreement cannot complete without learning of the
 * death, and the failure is unacknowledged: Wait gives PROC_FAILED at every
 * survivor, the flag is the AND of the live ranks' flags. After failure_ack, a
 * second iagree gives SUCCESS and the same flag.
 *
 * Phase 2 (np >= 3): on a communicator of the ranks below the last (made before
 * any death), everyone starts iagree; victim 2 (rank np-2) starts it too and dies
 * at once. Its contribution (all ones) is neutral. ULFM allows SUCCESS (its
 * contribution counted before the failure) or PROC_FAILED; what it must be is
 * uniform: every survivor checks that all survivors got the same code and flag.
 * Rank r contributes ~(1 << r). Needs np <= 30. */
#include "ulfm_common.h"

#ifndef DIE_MS
#define DIE_MS 200
#endif

/* Tests req between 1 ms naps until it completes; returns its code. */
static int test_until_done(MPI_Request *req, int *pending)
{
    int done = 0, rc = MPI_SUCCESS, i;
    for (i = 0; i < 60000 && !done; i++) {
        rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) break;
        if (!done) {
            (*pending)++;
            u_sleep_ms(1);
        }
    }
    if (!done && rc == MPI_SUCCESS) u_fail("iagree not complete after 60 s");
    return rc;
}

int main(int argc, char **argv)
{
    int rc, flag, v1, v2, want, pending = 0, mine[2], mn[2], mx[2];
    MPI_Comm front = MPI_COMM_NULL, rest = MPI_COMM_NULL;
    MPI_Request req;
    MPI_Group g;

    u_init(&argc, &argv, 1);
    if (u_size > 30) MPI_Abort(MPI_COMM_WORLD, 2);
    v1 = u_size - 1;
    v2 = u_size >= 3 ? u_size - 2 : -1;
    /* front: the ranks below v1 (phase 2); rest: the ranks that survive both. */
    MPI_Comm_split(MPI_COMM_WORLD, u_rank < v1 ? 0 : MPI_UNDEFINED, u_rank, &front);
    MPI_Comm_split(MPI_COMM_WORLD, u_rank != v1 && u_rank != v2 ? 0 : MPI_UNDEFINED, u_rank, &rest);
    if (front != MPI_COMM_NULL) MPI_Comm_set_errhandler(front, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 1 */
    if (u_rank == v1) {
        u_sleep_ms(DIE_MS);
        u_die("while the others' iagree is pending");
    }
    flag = ~(1 << u_rank);
    rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
    CHECK_RC("iagree start", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) rc = test_until_done(&req, &pending);
    want = ~((1 << v1) - 1); /* the AND over ranks 0..v1-1; v1's own bit stays set */
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED && flag == want, "iagree with a death=%s flag %#x (want PROC_FAILED %#x)",
          u_name(rc), (unsigned)flag, (unsigned)want);
    CHECK(pending > 0, "iagree completed before the death");
    /* Open MPI's failure_ack acknowledges what its local detector knows, which may
     * lag behind the agreement (docs/ULFM-DIFFERENCES.md): wait for it first. */
    if (u_poll_failed(MPI_COMM_WORLD, 1, &g) < 1) u_fail("get_failed never showed the death");
    MPI_Group_free(&g);
    rc = MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    CHECK_RC("failure_ack", rc, MPI_SUCCESS);
    flag = ~(1 << u_rank);
    rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && flag == want, "iagree after ack=%s flag %#x", u_name(rc), (unsigned)flag);
    u_note("phase1=PROC_FAILED");

    /* Phase 2 */
    if (v2 >= 0) {
        flag = u_rank == v2 ? ~0 : ~(1 << u_rank);
        rc = MPIX_Comm_iagree(front, &flag, &req);
        CHECK_RC("iagree(front) start", rc, MPI_SUCCESS);
        if (u_rank == v2) u_die("right after starting iagree(front)");
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(u_class(rc) == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "iagree(front)=%s",
              u_name(rc));
        want = ~((1 << v2) - 1);
        CHECK(flag == want, "iagree(front) flag %#x (want %#x)", (unsigned)flag, (unsigned)want);
        /* Uniform: the same code class and flag at every survivor. */
        mine[0] = u_class(rc), mine[1] = flag;
        MPI_Allreduce(mine, mn, 2, MPI_INT, MPI_MIN, rest);
        MPI_Allreduce(mine, mx, 2, MPI_INT, MPI_MAX, rest);
        CHECK(mn[0] == mx[0] && mn[1] == mx[1], "iagree(front) not uniform: codes %d..%d flags %#x..%#x",
              mn[0], mx[0], (unsigned)mn[1], (unsigned)mx[1]);
        u_note("phase2=%s", u_name(rc));
    }
    if (rest != MPI_COMM_NULL) MPI_Comm_free(&rest);
    if (front != MPI_COMM_NULL) MPI_Comm_free(&front);
    return u_finish();
}
