/* allreduce_check.c: MPI_Allreduce results against what each rank computes by
 * itself, for the cases MPIFT runs as its own allreduce (predefined types and
 * operations, at most 2 KiB) and around them (the host's beyond the limit, an
 * invalid type/operation pair, count 0, MPI_IN_PLACE), on the world, on a
 * communicator of all ranks but the last (odd sizes), and on MPI_COMM_SELF.
 * Floating-point sums of non-integer values must be bitwise the same at every
 * member. Built like api_check (plain MPI and MPIFT); run with any number of ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank = -1, checks = 0, failures = 0;
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "rank %d: FAIL (line %d) ", wrank, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

/* Member r's i-th int. */
static int val(int r, int i) { return (r * 7 + i * 3) % 11 - 5 + r; }

static void ints(MPI_Comm c, int count, int in_place)
{
    int r, n, i, k, rc;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int *in = malloc(sizeof(int) * (count + 1)), *out = malloc(sizeof(int) * (count + 1));
    static const char *names[] = {"SUM", "MAX", "MIN", "PROD", "BAND", "BXOR", "LOR"};
    MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_BAND, MPI_BXOR, MPI_LOR};
    for (k = 0; k < 7; k++) {
        for (i = 0; i < count; i++) out[i] = in[i] = val(r, i);
        out[count] = 12345; /* must stay */
        rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : in, in_place ? in : out, count, MPI_INT, ops[k], c);
        int *res = in_place ? in : out;
        CHECK(rc == MPI_SUCCESS, "%s count %d: rc %d", names[k], count, rc);
        for (i = 0; i < count; i++) {
            int want = val(0, i), m;
            for (m = 1; m < n; m++) {
                int v = val(m, i);
                switch (k) {
                case 0: want += v; break;
                case 1: want = v > want ? v : want; break;
                case 2: want = v < want ? v : want; break;
                case 3: want *= v; break;
                case 4: want &= v; break;
                case 5: want ^= v; break;
                case 6: want = want || v; break;
                }
            }
            if (res[i] != want) {
                CHECK(0, "%s count %d%s size %d: [%d] = %d, want %d", names[k], count, in_place ? " in place" : "", n, i,
                      res[i], want);
                break;
            }
        }
        CHECK(in_place || out[count] == 12345, "%s count %d wrote past the end", names[k], count);
    }
    free(in);
    free(out);
}

static void doubles_same_everywhere(MPI_Comm c, int count)
{
    int r, n, i;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    double *in = malloc(sizeof(double) * count), *out = malloc(sizeof(double) * count), *root = malloc(sizeof(double) * count);
    for (i = 0; i < count; i++) in[i] = 1.0 / (3.0 + r + i) + 1e-9 * r;
    CHECK(MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, c) == MPI_SUCCESS, "double SUM");
    memcpy(root, out, sizeof(double) * count);
    MPI_Bcast(root, count, MPI_DOUBLE, 0, c);
    CHECK(memcmp(root, out, sizeof(double) * count) == 0, "double SUM count %d: not bitwise the same as member 0's", count);
    for (i = 0; i < count; i++) {
        double want = 0;
        int m;
        for (m = 0; m < n; m++) want += 1.0 / (3.0 + m + i) + 1e-9 * m;
        if (out[i] < want * (1 - 1e-12) || out[i] > want * (1 + 1e-12)) {
            CHECK(0, "double SUM count %d: [%d] = %.17g, want %.17g", count, i, out[i], want);
            break;
        }
    }
    free(in);
    free(out);
    free(root);
}

static void maxloc(MPI_Comm c)
{
    int r, n;
    struct { double v; int i; } a[3], b[3];
    struct { int v; int i; } x, y;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    for (int j = 0; j < 3; j++) { a[j].v = (double)((r + j) % n); a[j].i = r; }
    CHECK(MPI_Allreduce(a, b, 3, MPI_DOUBLE_INT, MPI_MAXLOC, c) == MPI_SUCCESS, "MAXLOC");
    for (int j = 0; j < 3; j++)
        CHECK(b[j].v == n - 1 && b[j].i == ((n - 1 - j) % n + n) % n, "DOUBLE_INT MAXLOC [%d] = (%g, %d)", j, b[j].v, b[j].i);
    x.v = 5; x.i = r;
    CHECK(MPI_Allreduce(&x, &y, 1, MPI_2INT, MPI_MINLOC, c) == MPI_SUCCESS, "MINLOC");
    CHECK(y.v == 5 && y.i == 0, "2INT MINLOC tie = (%d, %d), want (5, 0)", y.v, y.i);
}

static void invalid(MPI_Comm c)
{
    double d = 1, e = 0;
    int cls = -1;
    int rc = MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, c);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OP, "BAND on MPI_DOUBLE: rc %d class %d, want MPI_ERR_OP", rc, cls);
}

static void suite(MPI_Comm c)
{
    static const int counts[] = {0, 1, 2, 7, 100, 511, 512, 513, 4096};
    for (unsigned j = 0; j < sizeof counts / sizeof counts[0]; j++) {
        ints(c, counts[j], 0);
        ints(c, counts[j], 1);
    }
    doubles_same_everywhere(c, 1);
    doubles_same_everywhere(c, 255);
    doubles_same_everywhere(c, 1000);
    maxloc(c);
    invalid(c);
}

int main(int argc, char **argv)
{
    MPI_Comm most;
    int n, total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    suite(MPI_COMM_WORLD);
    suite(MPI_COMM_SELF);
    MPI_Comm_split(MPI_COMM_WORLD, wrank < n - 1 || n == 1 ? 0 : MPI_UNDEFINED, n - wrank, &most);
    if (most != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(most, MPI_ERRORS_RETURN);
        suite(most);
        MPI_Comm_free(&most);
    }
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("allreduce_check: %d checks on rank 0, %d failures in all\n", checks, total);
    MPI_Finalize();
    return total != 0;
}
