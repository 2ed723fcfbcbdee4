/* log_keep_full_v: MPIFT's limit (docs/ULFM-DIFFERENCES.md, "A collective whose
 * entry only its writer had can be lost when nine of them are open at once"),
 * not a ULFM behaviour check. examples/ulfm/log_ring_gap_v with nine Scatterv
 * instead of one: the root returns from each at once, so their nine entries are
 * open together (nothing on MPI_COMM_WORLD closes them in between), and its 40
 * collectives on its own communicator push all nine out of its ring. It keeps
 * eight (KEEP_LEN); the first is given up, so rank 2 cannot join it, nor the
 * Barrier after them, and the survivors wait in the Barrier. Under real ULFM
 * the Barrier returns PROC_FAILED. MPIFT must say on stderr which collective
 * cannot be joined: tests/ulfm/limits.sh runs this program under a timeout and
 * checks that line. Needs 4 or more ranks. */
#define NSCATTER 9
#include "log_ring_gap_v.c"
