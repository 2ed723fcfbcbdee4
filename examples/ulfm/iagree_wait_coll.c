/* iagree_wait_coll: no failure. Every rank starts MPIX_Comm_iagree on the world.
 * Rank 0 then enters a blocking collective on another communicator D (a dup of
 * the world); the others first wait for their iagree and only then join D. ULFM:
 * rank 0's collective progresses the agreement, so every iagree completes and
 * the collective too. Four rounds: MPI_Barrier(D), MPI_Bcast(D) from rank 0,
 * MPI_Allreduce(D), MPI_Bcast(D) from rank 1 (rank 0 waits for the root, which
 * waits for its iagree first). Results: SUCCESS, the bitwise AND, and the
 * collectives'. Needs np >= 2 (np <= 30).
 *
 * MPIFT: its own MPI_Barrier and its own small-message MPI_Allreduce keep
 * serving while they wait, so rank 0 advances the agreement from inside them.
 * Inside a host collective (the Allreduce on Open MPI, where the host's is the
 * default, and the Bcast from rank 1) rank 0 cannot; after a short wait the
 * others compute around it from the contribution it published when it started
 * (docs/DESIGN.md, "Agreement"). */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rc, f, want, x, sum, round;
    static const char *how[4] = {"Barrier", "Bcast", "Allreduce", "Bcast from 1"};
    MPI_Comm d;
    MPI_Request req;

    u_init(&argc, &argv, 1);
    if (u_size < 2 || u_size > 30) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    want = ~((1 << u_size) - 1);
    for (round = 0; round < 4; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        f = ~(1 << u_rank);
        rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &f, &req);
        CHECK_RC("iagree start", rc, MPI_SUCCESS);
        if (u_rank != 0) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && f == want, "round %d (%s): iagree=%s flag %#x (want %#x)", round,
                  how[round], u_name(rc), (unsigned)f, (unsigned)want);
        }
        x = u_rank == 0 ? 1000 + round : -1;
        if (round == 0) {
            rc = MPI_Barrier(d);
        } else if (round == 1) {
            rc = MPI_Bcast(&x, 1, MPI_INT, 0, d);
            CHECK(x == 1000 + round, "Bcast gave %d (want %d)", x, 1000 + round);
        } else if (round == 3) {
            x = u_rank == 1 ? 2000 : -1;
            rc = MPI_Bcast(&x, 1, MPI_INT, 1, d);
            CHECK(x == 2000, "Bcast from 1 gave %d (want 2000)", x);
        } else {
            x = u_rank + 1;
            rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, d);
            CHECK(sum == u_size * (u_size + 1) / 2, "Allreduce gave %d (want %d)", sum, u_size * (u_size + 1) / 2);
        }
        CHECK_RC(how[round], rc, MPI_SUCCESS);
        if (u_rank == 0) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && f == want, "round %d (%s): iagree=%s flag %#x (want %#x)", round,
                  how[round], u_name(rc), (unsigned)f, (unsigned)want);
        }
    }
    u_note("rounds=4");
    MPI_Comm_free(&d);
    return u_finish();
}
