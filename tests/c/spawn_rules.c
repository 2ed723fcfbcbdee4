/* spawn_rules.c: a job that spawns one copy of itself and checks the merged
 * intercommunicator with an MPI_Allreduce (parents + child: the sum of ones is
 * size + 1). Run by make test under rules for the parent job (MPIFT_KILL naming
 * a rank the child's one-process world lacks: the child must not read them) and
 * with a bad MPIFT_KILL_SPAWNED (the child must stop at MPI_Init naming it).
 * Where the host cannot spawn, the parents print the error class and exit 0. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter, merged;
    int r, n, rc, sum = 0, one = 1, errc = -1, cls = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, &errc);
        if (rc != MPI_SUCCESS) {
            MPI_Error_class(rc, &cls);
            printf("parent %d: spawn refused, class %d\n", r, cls);
            MPI_Finalize();
            return 0;
        }
        MPI_Intercomm_merge(inter, 0, &merged);
    } else {
        MPI_Intercomm_merge(parent, 1, &merged);
    }
    MPI_Comm_size(merged, &n);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    printf("%s %d: merged sum %d of %d\n", parent == MPI_COMM_NULL ? "parent" : "child", r, sum, n);
    MPI_Comm_free(&merged);
    MPI_Finalize();
    return sum == n ? 0 : 1;
}
