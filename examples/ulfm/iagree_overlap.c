/* iagree_overlap: no failure. Every rank starts MPIX_Comm_iagree on two
 * communicators at once (MPI_COMM_WORLD and a dup), except the last rank, which
 * arrives LATE_MS later. The early ranks compute (a busy loop) and call
 * MPI_Testall between slices: the agreements cannot complete before the late rank
 * started them, so some Testall must say "not complete" (the start returned at
 * once and work overlapped the agreement). The results must be those of a
 * blocking MPIX_Comm_agree with the same flags: SUCCESS and the bitwise AND.
 * Rank r contributes ~(1 << r) on the world and ~(1 << (r + 16)) on the dup.
 * Needs np >= 2 (np <= 16). */
#include "ulfm_common.h"

#ifndef LATE_MS
#define LATE_MS 300
#endif

int main(int argc, char **argv)
{
    int rc, f[2], g[2], done = 0, pending_tests = 0, slices = 0, want[2], i;
    int codes[2];
    MPI_Comm d;
    MPI_Request req[2];
    MPI_Status st[2];

    u_init(&argc, &argv, 1);
    if (u_size < 2 || u_size > 16) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    want[0] = ~((1 << u_size) - 1);
    want[1] = ~(((1 << u_size) - 1) << 16);
    MPI_Barrier(MPI_COMM_WORLD);

    if (u_rank == u_size - 1) u_sleep_ms(LATE_MS);
    f[0] = ~(1 << u_rank);
    f[1] = ~(1 << (u_rank + 16));
    rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &f[0], &req[0]);
    CHECK_RC("iagree(world) start", rc, MPI_SUCCESS);
    rc = MPIX_Comm_iagree(d, &f[1], &req[1]);
    CHECK_RC("iagree(dup) start", rc, MPI_SUCCESS);
    codes[0] = codes[1] = MPI_SUCCESS;
    while (!done) {
        u_compute(0.002);
        slices++;
        rc = MPI_Testall(2, req, &done, st);
        if (rc == MPI_ERR_IN_STATUS) {
            codes[0] = st[0].MPI_ERROR, codes[1] = st[1].MPI_ERROR;
            done = 1;
        } else if (rc != MPI_SUCCESS) {
            codes[0] = codes[1] = rc;
            done = 1;
        }
        if (!done) pending_tests++;
        if (slices > 30000) { /* 60 s of work: give up, report */
            u_fail("iagrees not complete after %d slices", slices);
            break;
        }
    }
    for (i = 0; i < 2; i++)
        CHECK(codes[i] == MPI_SUCCESS && f[i] == want[i], "iagree[%d]=%s flag %#x (want %#x)", i,
              u_name(codes[i]), (unsigned)f[i], (unsigned)want[i]);
    if (u_rank != u_size - 1)
        CHECK(pending_tests > 0, "no Testall saw the agreements pending (late rank %d ms)", LATE_MS);

    /* The blocking agree gives the same. */
    g[0] = ~(1 << u_rank);
    g[1] = ~(1 << (u_rank + 16));
    rc = MPIX_Comm_agree(MPI_COMM_WORLD, &g[0]);
    CHECK(rc == MPI_SUCCESS && g[0] == f[0], "agree(world)=%s flag %#x vs iagree %#x", u_name(rc),
          (unsigned)g[0], (unsigned)f[0]);
    rc = MPIX_Comm_agree(d, &g[1]);
    CHECK(rc == MPI_SUCCESS && g[1] == f[1], "agree(dup)=%s flag %#x vs iagree %#x", u_name(rc),
          (unsigned)g[1], (unsigned)f[1]);
    u_note("overlapped=%s", u_rank == u_size - 1 ? "late" : (pending_tests > 0 ? "yes" : "no"));
    MPI_Comm_free(&d);
    return u_finish();
}
