/* revoke_release_ibarrier: no failure. As revoke_release_recv, but rank 0 is
 * blocked in MPI_Wait on an MPI_Ibarrier(A) it started before the revoke: the
 * wait returns REVOKED, rank 0 sends to every other rank on B (which wait in
 * MPI_Recv from it), and every rank frees A at once. The real non-blocking
 * barrier may still be running under the freed A (the others join it with dummy
 * data in their wait); freeing must not break the next communicator call
 * (MPI_Comm_dup of the next round). Three rounds. Needs np >= 2. */
#define RELEASE_IBARRIER 1
#include "revoke_release_recv.c"
