/* tests/adversary/late.c: the `latency` and `revoke` choices of MPIFT_SEMANTICS.
 *
 * `late death`: rank 3 dies after a barrier, printing "rank 3: DIES at=T"
 * (T: CLOCK_MONOTONIC in microseconds, one clock for every rank of the node);
 * each survivor blocks in a receive from rank 3 and prints
 *   rank R: DETECT at=T rc=<F|X>
 * when it returns (F: MPI_ERR_PROC_FAILED).
 * `late revoke`: rank 0 revokes a duplicate of MPI_COMM_WORLD while ranks 1-3
 * block in a receive from rank 0 on it, and prints "rank 0: REVOKED at=T";
 * each of the others prints "rank R: DETECT at=T rc=<V|X>" when its receive
 * returns (V: MPI_ERR_REVOKED).
 * tests/adversary/run.sh compares each time with the delay the report lists for
 * that rank: news held for D microseconds cannot arrive before T + D. */
#include "ulfm_common.h"

static long long now_us(void) { return (long long)(u_now_s() * 1e6); }

int main(int argc, char **argv)
{
    MPI_Comm c2;
    char text[64];
    int v = 0, rc, cls;
    int death = argc > 1 && strcmp(argv[1], "death") == 0;

    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (death) {
        if (u_rank == 3) {
            snprintf(text, sizeof text, "at=%lld", now_us());
            u_die(text);
        }
        rc = MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        snprintf(text, sizeof text, "at=%lld rc=%c", now_us(), cls == MPIX_ERR_PROC_FAILED ? 'F' : 'X');
        u_line("DETECT", text);
    } else if (u_rank == 0) {
        u_sleep_ms(100); /* the others are in their receives */
        snprintf(text, sizeof text, "at=%lld", now_us());
        MPIX_Comm_revoke(c2);
        u_line("REVOKED", text);
    } else {
        rc = MPI_Recv(&v, 1, MPI_INT, 0, 0, c2, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        snprintf(text, sizeof text, "at=%lld rc=%c", now_us(), cls == MPIX_ERR_REVOKED ? 'V' : 'X');
        u_line("DETECT", text);
    }
    MPI_Comm_free(&c2);
    MPI_Finalize();
    return 0;
}
