/* The fixed twin of examples/mistakes/local_failure_check.c: the ranks agree
 * (MPIX_Comm_agree) on whether to recover, instead of each deciding from its
 * own MPIX_Comm_get_failed. Same output contract: every survivor prints
 * "OK steps=8 size=S".
 * SEMANTICS: adversarial */
#define AGREE_ON_RECOVERY 1
#include "../local_failure_check.c"
