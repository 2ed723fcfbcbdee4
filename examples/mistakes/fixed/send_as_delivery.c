/* The fixed twin of examples/mistakes/send_as_delivery.c: after a recovery
 * every rank redoes the whole step, sends included, instead of trusting a
 * send's success to mean its message arrived. Same output contract: every
 * survivor prints "OK steps=8 size=S".
 * SEMANTICS: adversarial */
#define REDO_WHOLE_STEP 1
#include "../send_as_delivery.c"
