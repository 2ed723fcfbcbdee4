/* error_classes: MPIFT's ULFM classes obey MPI-3.1 §8.4 (issue 33; mpi4py's
 * test_errorcode): every predefined class is at most MPI_ERR_LASTCODE, the ULFM
 * classes are distinct, their own class, with strings; MPI_Add_error_class and
 * MPI_Add_error_code keep working and never return an MPIFT class;
 * MPI_LASTUSEDCODE covers every class and code; a switch on the classes
 * compiles (they are constants). Built with MPIFT only. Prints "OK" and exits 0,
 * or names the failed check and exits 1. Any np. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failed;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL "); printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

static const char *name(int cls)
{
    switch (cls) {
    case MPIX_ERR_PROC_FAILED: return "PROC_FAILED";
    case MPIX_ERR_PROC_FAILED_PENDING: return "PROC_FAILED_PENDING";
    case MPIX_ERR_REVOKED: return "REVOKED";
    default: return "other";
    }
}

int main(int argc, char **argv)
{
    const int ulfm[3] = {MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING, MPIX_ERR_REVOKED};
    const int std_classes[] = {MPI_ERR_BUFFER, MPI_ERR_COMM, MPI_ERR_OTHER, MPI_ERR_IN_STATUS,
                               MPI_ERR_PENDING, MPI_ERR_SPAWN, MPI_ERR_RMA_FLAVOR};
    int i, j, cls, len, rc, newcls, newcode, *lastused, flag, keep[6];
    char text[MPI_MAX_ERROR_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 0; i < 3; i++) {
        CHECK(ulfm[i] > 0 && ulfm[i] <= MPI_ERR_LASTCODE, "%s=%d above MPI_ERR_LASTCODE %d", name(ulfm[i]), ulfm[i], MPI_ERR_LASTCODE);
        for (j = 0; j < (int)(sizeof std_classes / sizeof *std_classes); j++)
            CHECK(ulfm[i] != std_classes[j], "%s equals a standard class", name(ulfm[i]));
        for (j = 0; j < i; j++) CHECK(ulfm[i] != ulfm[j], "two ULFM classes are equal");
        rc = MPI_Error_class(ulfm[i], &cls);
        CHECK(rc == MPI_SUCCESS && cls == ulfm[i], "Error_class(%s)", name(ulfm[i]));
        rc = MPI_Error_string(ulfm[i], text, &len);
        CHECK(rc == MPI_SUCCESS && strstr(text, name(ulfm[i])) && len == (int)strlen(text), "Error_string(%s)=%s", name(ulfm[i]), text);
    }
    for (j = 0; j < (int)(sizeof std_classes / sizeof *std_classes); j++)
        CHECK(std_classes[j] <= MPI_ERR_LASTCODE, "standard class %d above MPI_ERR_LASTCODE", std_classes[j]);

    for (i = 0; i < 3; i++) {
        rc = MPI_Add_error_class(&newcls);
        CHECK(rc == MPI_SUCCESS, "Add_error_class rc=%d", rc);
        rc = MPI_Add_error_code(newcls, &newcode);
        CHECK(rc == MPI_SUCCESS, "Add_error_code rc=%d", rc);
        keep[2 * i] = newcls;
        keep[2 * i + 1] = newcode;
        for (j = 0; j < 3; j++)
            CHECK(newcls != ulfm[j] && newcode != ulfm[j], "added class %d / code %d equals %s", newcls, newcode, name(ulfm[j]));
        CHECK(newcls > MPI_ERR_LASTCODE, "added class %d not above MPI_ERR_LASTCODE %d", newcls, MPI_ERR_LASTCODE);
        rc = MPI_Error_class(newcode, &cls);
        CHECK(rc == MPI_SUCCESS && cls == newcls, "Error_class(added code)=%d want %d", cls, newcls);
        rc = MPI_Add_error_string(newcode, "an error of the program's own");
        rc |= MPI_Error_string(newcode, text, &len);
        CHECK(rc == MPI_SUCCESS && strcmp(text, "an error of the program's own") == 0, "Error_string(added code)=%s", text);
    }
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag);
    CHECK(rc == MPI_SUCCESS && flag, "MPI_LASTUSEDCODE attribute");
    if (rc == MPI_SUCCESS && flag) {
        CHECK(*lastused >= MPI_ERR_LASTCODE, "LASTUSEDCODE %d below MPI_ERR_LASTCODE", *lastused);
        /* MPICH's added codes encode an index above their class: its
         * LASTUSEDCODE counts classes only, with or without MPIFT. */
        for (i = 0; i < 6; i++)
#ifdef MPICH_VERSION
            if (i % 2 == 0)
#endif
            CHECK(keep[i] <= *lastused, "added %d above LASTUSEDCODE %d", keep[i], *lastused);
        for (i = 0; i < 3; i++) CHECK(ulfm[i] <= *lastused, "%s above LASTUSEDCODE", name(ulfm[i]));
    }
    MPI_Finalize();
    if (!failed) printf("OK\n");
    return failed;
}
