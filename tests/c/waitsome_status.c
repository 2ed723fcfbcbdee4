/* waitsome_status: MPI_Waitsome and MPI_Testsome return the status of the k-th
 * completed request in statuses[k] (MPI-3.1 §3.7.5), the same order as
 * indices[k]. The pattern of mpi4py's testWaitSomeRecv (issue 33): six receives
 * from this rank with tags 0-5, then sends in the orders [5], [3 1 2], [0 4],
 * each followed by a Waitsome (or Testsome loop) that must report exactly those,
 * each status with the request's tag, count 1 and the value. Prints "OK" and
 * exits 0, or names the failed check and exits 1. Any np. */
#include <mpi.h>
#include <stdio.h>

static int failed;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL "); printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

static void round_trip(int use_test)
{
    static const int order[3][3] = {{5, -1, -1}, {3, 1, 2}, {0, 4, -1}};
    MPI_Request req[6];
    MPI_Status st[6];
    int buf[6], rank, i, r, out, idx[6], k, cnt, seen, v;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 0; i < 6; i++) {
        buf[i] = -1;
        MPI_Irecv(&buf[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &req[i]);
    }
    for (r = 0; r < 3; r++) {
        int want = 0;
        for (i = 0; i < 3 && order[r][i] >= 0; i++, want++) {
            v = 100 + order[r][i];
            MPI_Ssend(&v, 1, MPI_INT, rank, order[r][i], MPI_COMM_WORLD);
        }
        for (seen = 0; seen < want;) {
            if (use_test) {
                MPI_Testsome(6, req, &out, idx, st);
                if (out == 0) continue;
            } else {
                MPI_Waitsome(6, req, &out, idx, st);
            }
            for (k = 0; k < out; k++, seen++) {
                MPI_Get_count(&st[k], MPI_INT, &cnt);
                CHECK(st[k].MPI_TAG == idx[k] && st[k].MPI_SOURCE == rank && cnt == 1 && buf[idx[k]] == 100 + idx[k],
                      "%s: request %d has status tag %d source %d count %d, value %d",
                      use_test ? "Testsome" : "Waitsome", idx[k], st[k].MPI_TAG, st[k].MPI_SOURCE, cnt, buf[idx[k]]);
                CHECK(req[idx[k]] == MPI_REQUEST_NULL, "completed request %d not freed", idx[k]);
            }
        }
        CHECK(seen == want, "round %d: %d completions, want %d", r, seen, want);
    }
    MPI_Waitsome(6, req, &out, idx, st);
    CHECK(out == MPI_UNDEFINED, "Waitsome with no active request gives outcount %d", out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    round_trip(0);
    round_trip(1);
    MPI_Finalize();
    if (!failed) printf("OK\n");
    return failed;
}
