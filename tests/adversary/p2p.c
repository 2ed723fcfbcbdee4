/* tests/adversary/p2p.c: the `sends` and `wildcard` choices of MPIFT_SEMANTICS.
 *
 * Rank 3 dies after a barrier; each survivor learns of it (a receive from
 * rank 3 fails), then:
 * `p2p sends`: starts 8 MPI_Isends of one int and one of 64 KiB to rank 3 and
 * waits for each; prints "rank R: SENDS <8 letters> L=<letter>", S for success,
 * F for MPI_ERR_PROC_FAILED, X for another code. Rank 3 received none of them
 * alive, so the default verdict of each is F; the adversary may tell a small one
 * S, never the large one.
 * `p2p wildcard`: waits until the message its next survivor sent it (tag 5) is
 * in (MPI_Probe from that rank), then MPI_Irecv(MPI_ANY_SOURCE, tag 5) and
 * MPI_Wait; prints "rank R: WILDCARD <S|H|X>": S, the message (right data);
 * H, held: MPI_ERR_PROC_FAILED_PENDING with the request still active, after
 * which an acknowledgement (MPIX_Comm_failure_ack) and a second MPI_Wait give
 * the message (else X). tests/adversary/run.sh compares these with the run
 * report's choices. */
#include "ulfm_common.h"

static char letter(int rc)
{
    return rc == MPI_SUCCESS ? 'S' : u_class(rc) == MPIX_ERR_PROC_FAILED ? 'F' : 'X';
}

static void sends(void)
{
    enum { SMALL = 8, LARGE = 16384 };
    int v[SMALL], rc, i;
    static int big[LARGE];
    char text[32];
    MPI_Request r;
    for (i = 0; i < SMALL; i++) {
        v[i] = i;
        rc = MPI_Isend(&v[i], 1, MPI_INT, 3, 7, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        text[i] = letter(rc);
    }
    rc = MPI_Isend(big, LARGE, MPI_INT, 3, 8, MPI_COMM_WORLD, &r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(text + SMALL, sizeof text - SMALL, " L=%c", letter(rc));
    u_line("SENDS", text);
}

static void wildcard(void)
{
    int next = (u_rank + 1) % 3, prev = (u_rank + 2) % 3, out = 100 + u_rank, in = -1, rc;
    char c = 'X';
    MPI_Request r;
    MPI_Send(&out, 1, MPI_INT, prev, 5, MPI_COMM_WORLD);
    MPI_Probe(next, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) {
        c = in == 100 + next ? 'S' : 'X';
    } else if (u_class(rc) == MPIX_ERR_PROC_FAILED_PENDING && r != MPI_REQUEST_NULL) {
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        c = rc == MPI_SUCCESS && in == 100 + next ? 'H' : 'X';
    }
    u_line("WILDCARD", (char[]){c, 0});
}

int main(int argc, char **argv)
{
    int v = 0;
    u_init(&argc, &argv, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 3)
        u_die("after the barrier");
    MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (argc > 1 && strcmp(argv[1], "sends") == 0)
        sends();
    else
        wildcard();
    MPI_Finalize();
    return 0;
}
