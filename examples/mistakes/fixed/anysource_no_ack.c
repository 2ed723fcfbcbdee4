/* The fixed twin of examples/mistakes/anysource_no_ack.c: once the master has
 * taken over a dead worker's tasks it acknowledges the failure
 * (MPIX_Comm_failure_ack), so its wildcard receive matches the live workers'
 * results again. Same output contract: every survivor prints "OK ...", the
 * master "OK results=48".
 * SEMANTICS: adversarial */
#define ACK_FAILURES 1
#include "../anysource_no_ack.c"
