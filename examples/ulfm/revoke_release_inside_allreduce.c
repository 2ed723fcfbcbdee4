/* revoke_release_inside_allreduce: revoke_release_inside with one-int
 * MPI_Allreduce sums for both collectives: rank 0 waits in MPI_Allreduce(A); the
 * others are inside MPI_Allreduce(B) when rank 1 revokes A. ULFM: rank 0's
 * allreduce returns REVOKED, rank 0 joins B, and everybody leaves B with SUCCESS
 * and the size. Three rounds. Needs np >= 2. */
#define INSIDE_ALLREDUCE 1
#include "revoke_release_inside.c"
