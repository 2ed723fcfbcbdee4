/* revoke_during_dup: no process fails. ROUNDS times: everyone dups the world; rank
 * 0 revokes its dup as soon as its MPI_Comm_dup returns, and shrinks it; the others
 * call MPI_Barrier on the dup: REVOKED (the revoke may reach them while they are
 * still inside MPI_Comm_dup), then shrink it: every shrink gives the whole world.
 * The most common recovery pattern, without a failure (issue 18, defect 5).
 * Open MPI 5 ULFM itself crashes in ompi_comm_revoke_local when the revoke meets a
 * rank still in MPI_Comm_dup (docs/ULFM-DIFFERENCES.md). Needs np >= 2.
 * revoke_shrink_pending without its pending Isend/Irecv. */
#define NO_PENDING 1
#include "revoke_shrink_pending.c"
