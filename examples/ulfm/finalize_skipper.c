/* finalize_skipper: a survivor learns of a death from a point-to-point call and
 * goes straight to MPI_Finalize, skipping the collective the others call later
 * (ULFM programs do this: "my receive failed, I am done"). The victim (the last
 * rank) dies at once; rank 0 receives from it (PROC_FAILED) and finalizes; the
 * other survivors compute for a while outside MPI, so rank 0 is inside
 * MPI_Finalize before they enter, then call MPI_Bcast from the dead victim:
 * PROC_FAILED, the collective cannot complete without its root. Then they
 * finalize. Under MPIFT the dead victim joins a collective only once every
 * live member has entered it, so rank 0, in MPI_Finalize, must fill in for the
 * Bcast it skipped (engine::fillin::settle_owed); before issue 52 it said it
 * was finalizing at once and the others stayed in the Bcast for ever. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, x = 0, rc;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Barrier(MPI_COMM_WORLD); /* everyone alive here */
    if (u_rank == victim) u_die("at start");
    if (u_rank == 0) {
        rc = MPI_Recv(&x, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC("Recv(victim)", rc, MPIX_ERR_PROC_FAILED);
        u_note("Recv=PROC_FAILED, straight to MPI_Finalize");
        return u_finish();
    }
    u_sleep_ms(500); /* rank 0 reaches MPI_Finalize first */
    rc = MPI_Bcast(&x, 1, MPI_INT, victim, MPI_COMM_WORLD);
    CHECK_RC("Bcast(dead root)", rc, MPIX_ERR_PROC_FAILED);
    u_note("Bcast=PROC_FAILED");
    return u_finish();
}
