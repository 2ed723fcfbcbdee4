/* The fixed twin of examples/mistakes/dup_no_agree.c: the ranks agree that
 * every one of them got its duplicate before using it (MPIX_Comm_agree), free
 * it otherwise, and recover together. Same output contract: every survivor
 * prints "OK steps=8 size=S".
 * SEMANTICS: adversarial */
#define AGREE_ON_DUP 1
#include "../dup_no_agree.c"
