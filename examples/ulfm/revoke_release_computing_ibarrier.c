/* revoke_release_computing_ibarrier: revoke_release_computing with rank 0 in
 * MPI_Wait on an MPI_Ibarrier(A) it started before the revoke, while rank 1
 * revokes A and goes to MPI_Barrier(B) and the others compute outside MPI. ULFM:
 * the wait returns REVOKED while the others still compute. Needs np >= 2; one
 * host. */
#define COMPUTING_IBARRIER 1
#include "revoke_release_computing.c"
