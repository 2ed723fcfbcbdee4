/* send_as_delivery: a send's success taken as proof that its message arrived.
 *
 * MISTAKE: each step, every rank exchanges the step's number with both
 * neighbours on a ring (MPI_Irecv from each, MPI_Isend to each, the step's
 * local work, then MPI_Wait on the receives and on the sends), and the ranks
 * agree whether every half worked everywhere; if not, they shrink and redo the
 * step, each rank redoing only the halves that failed here: "my send
 * succeeded, so that message is where it belongs". After the shrink, the dead
 * rank's two neighbours are each other's new neighbours: each must send to the
 * other what it had sent to the dead rank. ULFM completes a send locally: a
 * small message to a rank known dead may succeed although that rank never got
 * it (the oracle: MPI_Isend of a small message to a dead rank, then MPI_Wait,
 * may succeed). A neighbour told success does not resend, and the other, whose
 * receive from the dead rank failed, waits in MPI_Wait for that message for
 * ever while the others are in the step's agreement. The fixed twin
 * (examples/mistakes/fixed/send_as_delivery.c) redoes the whole step at every
 * rank after a recovery: a send's success says that its buffer is free again,
 * not that the receiver has the data.
 *
 * MPIFT's default mode fails a send to a dead rank that did not receive it
 * once the sender knows of the death; here each rank waits for its receives
 * (from the dead rank too) before its sends, so it knows by then, except where
 * the dead rank died between its two sends (a receive from it then succeeds).
 *
 * Roles: NSTEP steps; each step is the exchange (tag: the step's number; each
 * message received is checked) around 20 ms of local work, and MPIX_Comm_agree
 * over "every half worked here". On failure: MPIX_Comm_shrink and the step
 * again on the new communicator. Argument V (default -1): world rank V dies at
 * the entry of step 3 (-1: no death of its own, for mpift-campaign).
 *
 * PATTERN: a send's success taken as delivery
 * SEMANTICS: adversarial
 * FINDING: waits in MPI_Wait
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NSTEP 8

#ifndef REDO_WHOLE_STEP
#define REDO_WHOLE_STEP 0 /* the fixed twin sets it */
#endif

int main(int argc, char **argv)
{
    int V, done = 0, rank, size, got[2], rc[4], ok[4] = {0, 0, 0, 0}, all, i;
    MPI_Comm comm, nc;
    MPI_Request r[4];

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    /* The working communicator: a shrink of MPI_COMM_WORLD (it gives a
     * communicator also when a rank died before it). */
    rc[0] = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
    if (rc[0] != MPI_SUCCESS) { u_fail("first shrink=%s", u_name(rc[0])); return u_finish(); }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    while (done < NSTEP) {
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        if (u_rank == V && done == 2) u_die("at the entry of step 3");
        /* Halves 0, 1: the receives from the left and the right; 2, 3: the
         * sends to the left and the right. ok[i]: half i worked. */
        int peer[4] = {(rank + size - 1) % size, (rank + 1) % size, (rank + size - 1) % size, (rank + 1) % size};
        for (i = 0; i < 4; i++) {
            r[i] = MPI_REQUEST_NULL;
            if (ok[i]) rc[i] = MPI_SUCCESS;
            else if (i < 2) rc[i] = MPI_Irecv(&got[i], 1, MPI_INT, peer[i], done, comm, &r[i]);
            else rc[i] = MPI_Isend(&done, 1, MPI_INT, peer[i], done, comm, &r[i]);
        }
        u_sleep_ms(20); /* the step's local work */
        for (i = 0; i < 4; i++) {
            if (ok[i]) continue;
            if (rc[i] == MPI_SUCCESS) rc[i] = MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            ok[i] = rc[i] == MPI_SUCCESS;
            CHECK(i >= 2 || !ok[i] || got[i] == done, "step %d: got step %d", done + 1, got[i] + 1);
        }
        all = ok[0] && ok[1] && ok[2] && ok[3];
        rc[0] = MPIX_Comm_agree(comm, &all);
        if (rc[0] == MPI_SUCCESS && all) {
            done++;
            ok[0] = ok[1] = ok[2] = ok[3] = 0;
            continue;
        }
        rc[0] = MPIX_Comm_shrink(comm, &nc);
        if (rc[0] != MPI_SUCCESS) { u_fail("shrink=%s", u_name(rc[0])); break; }
        MPI_Comm_free(&comm);
        comm = nc;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        /* THE MISTAKE keeps the halves that worked: a send that succeeded is not
         * redone, although its receiver may have died without it. The twin
         * redoes the whole step. */
        if (REDO_WHOLE_STEP) ok[0] = ok[1] = ok[2] = ok[3] = 0;
    }
    MPI_Comm_size(comm, &size);
    u_note("steps=%d size=%d", done, size);
    MPI_Comm_free(&comm);
    return u_finish();
}
