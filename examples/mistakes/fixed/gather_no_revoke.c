/* The fixed twin of examples/mistakes/gather_no_revoke.c: a rank whose collective
 * fails revokes the communicator before the shrink, so a rank told success
 * learns of the recovery from its next call (MPI_ERR_REVOKED). Same output
 * contract: every survivor prints "OK tasks=8".
 * SEMANTICS: adversarial */
#define REVOKE_ON_COLLECTIVE_ERROR 1
#include "../gather_no_revoke.c"
