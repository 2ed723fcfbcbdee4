/* iagree_wait_p2p: no failure. Every rank starts MPIX_Comm_iagree on the world.
 * Rank 0 then blocks in a receive from rank 1, while rank 1 waits for its iagree
 * and only then sends to rank 0; the others wait for their iagree. ULFM: rank 0's
 * blocking call progresses the agreement, so every iagree completes, rank 1
 * sends, rank 0 receives and then waits for its own iagree. Three rounds, rank 0
 * blocking in MPI_Recv, then MPI_Probe + MPI_Recv, then MPI_Irecv + MPI_Waitall.
 * Results: SUCCESS and the bitwise AND, each round. Needs np >= 2 (np <= 30). */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rc, f, want, x, round;
    static const char *how[3] = {"Recv", "Probe", "Waitall"};
    MPI_Request req, rreq;

    u_init(&argc, &argv, 1);
    if (u_size < 2 || u_size > 30) MPI_Abort(MPI_COMM_WORLD, 2);
    want = ~((1 << u_size) - 1);
    for (round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        f = ~(1 << u_rank);
        rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &f, &req);
        CHECK_RC("iagree start", rc, MPI_SUCCESS);
        if (u_rank == 0) {
            x = 0;
            if (round == 1) {
                rc = MPI_Probe(1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK_RC("Probe", rc, MPI_SUCCESS);
            }
            if (round < 2) {
                rc = MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Irecv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rreq);
                rc = MPI_Waitall(1, &rreq, MPI_STATUSES_IGNORE);
            }
            CHECK(rc == MPI_SUCCESS && x == 42 + round, "%s: %s, received %d (want %d)", how[round], u_name(rc), x,
                  42 + round);
        }
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && f == want, "round %d (%s): iagree=%s flag %#x (want %#x)", round, how[round],
              u_name(rc), (unsigned)f, (unsigned)want);
        if (u_rank == 1) {
            x = 42 + round;
            rc = MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            CHECK_RC("Send", rc, MPI_SUCCESS);
        }
    }
    u_note("rounds=3");
    MPI_Barrier(MPI_COMM_WORLD);
    return u_finish();
}
