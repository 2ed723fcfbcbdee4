/* neighbor_dead: neighborhood collectives after rank 1 died (failure known via
 * agree), on a periodic 1-D cart (a ring) and on a directed ring as a distributed
 * graph, both made before the death. None may hang. Each returns PROC_FAILED,
 * except that a rank that is no neighbor of the dead one may succeed, with a
 * correct result. Blocking and non-blocking forms, uniform and v/w variants. */
#include "ulfm_common.h"

static int left_of(int r) { return (r - 1 + u_size) % u_size; }
static int right_of(int r) { return (r + 1) % u_size; }

int main(int argc, char **argv)
{
    int victim = 1, dims[1], periods[1], left, right, rc, i, got[2], cnt[2], ds[2], v;
    int near_cart, near_dist;
    MPI_Aint ad[2];
    MPI_Datatype ty[2];
    MPI_Comm cart, dist;
    MPI_Request r;

    u_init(&argc, &argv, 1);
    left = left_of(u_rank);
    right = right_of(u_rank);
    dims[0] = u_size;
    periods[0] = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dist);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dist, MPI_ERRORS_RETURN);
    /* Every rank has both topologies before the death: a constructor whose member
     * dies while it returns may fail there (ULFM allows it; MPIFT does so), and the
     * program would go on with a null communicator. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("after creating the topologies");
    near_cart = (left == victim || right == victim);
    near_dist = (left == victim); /* receives from the dead rank */

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    got[0] = got[1] = -1;
    rc = MPI_Neighbor_allgather(&u_rank, 1, MPI_INT, got, 1, MPI_INT, cart);
    u_judge("Neighbor_allgather", rc, !near_cart, got[0] == left && got[1] == right);
    cnt[0] = cnt[1] = 1;
    ds[0] = 1;
    ds[1] = 0;
    got[0] = got[1] = -1;
    rc = MPI_Neighbor_allgatherv(&u_rank, 1, MPI_INT, got, cnt, ds, MPI_INT, cart);
    u_judge("Neighbor_allgatherv", rc, !near_cart, got[1] == left && got[0] == right);
    got[0] = got[1] = -1;
    rc = MPI_Ineighbor_allgather(&u_rank, 1, MPI_INT, got, 1, MPI_INT, cart, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    u_judge("Ineighbor_allgather", rc, !near_cart, got[0] == left && got[1] == right);

    v = 10 * u_rank;
    cnt[0] = 1;
    ds[0] = 0;
    ad[0] = 0;
    ty[0] = MPI_INT;
    got[0] = -1;
    rc = MPI_Neighbor_alltoall(&v, 1, MPI_INT, got, 1, MPI_INT, dist);
    u_judge("Neighbor_alltoall", rc, !near_dist, got[0] == 10 * left);
    got[0] = -1;
    rc = MPI_Neighbor_alltoallv(&v, cnt, ds, MPI_INT, got, cnt, ds, MPI_INT, dist);
    u_judge("Neighbor_alltoallv", rc, !near_dist, got[0] == 10 * left);
    got[0] = -1;
    rc = MPI_Neighbor_alltoallw(&v, cnt, ad, ty, got, cnt, ad, ty, dist);
    u_judge("Neighbor_alltoallw", rc, !near_dist, got[0] == 10 * left);
    got[0] = -1;
    rc = MPI_Ineighbor_alltoallv(&v, cnt, ds, MPI_INT, got, cnt, ds, MPI_INT, dist, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    u_judge("Ineighbor_alltoallv", rc, !near_dist, got[0] == 10 * left);

    /* Still no hang on a second round. */
    for (i = 0; i < 2; i++) got[i] = -1;
    rc = MPI_Neighbor_allgather(&u_rank, 1, MPI_INT, got, 1, MPI_INT, cart);
    u_judge("Neighbor_allgather2", rc, !near_cart, got[0] == left && got[1] == right);
    return u_finish();
}
