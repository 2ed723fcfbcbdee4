/* revoke_release_inside_ibarrier: revoke_release_inside with rank 0 waiting in
 * MPI_Wait on an MPI_Ibarrier(A) it started before the revoke, while the others
 * are inside MPI_Barrier(B). ULFM: the wait returns REVOKED, everybody leaves B
 * with SUCCESS. Three rounds. Needs np >= 2. */
#define INSIDE_IBARRIER 1
#include "revoke_release_inside.c"
