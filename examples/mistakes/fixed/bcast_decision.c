/* The fixed twin of examples/mistakes/bcast_decision.c: the ranks decide whether
 * to recover with MPIX_Comm_agree instead of rank 0's MPI_Bcast. Same output
 * contract: every survivor prints "OK steps=8 size=S".
 * SEMANTICS: adversarial */
#define AGREE_ON_RECOVERY 1
#include "../bcast_decision.c"
