// master_worker.cpp: the thesis's fault-tolerant master/worker pattern (section 6.1).
//
// Rank 0 is the manager. The other ranks form groups of GROUP ranks (a group
// master and its workers, on a communicator of their own). The manager hands out
// jobs (sum of i*i over a range) to the group masters; each group splits a job
// among its members with Bcast + Reduce and the master returns the result.
//
// Failure handling as in the thesis: the manager waits for results with an
// MPI_ANY_SOURCE receive. When it fails with MPI_ERR_PROC_FAILED(_PENDING), the
// manager acknowledges the failure (MPIX_Comm_failure_ack), gets the failed
// processes (MPIX_Comm_failure_get_acked), intersects them with each group
// (MPI_Group_intersection), drops every group that lost a member and gives its
// job to another group. The final sum is checked against the closed form.
#include <mpi.h>
#if defined(MPIFT_VERSION)
#include <mpi-ext.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
const int GROUP = 2;
const int TAG_JOB = 1, TAG_RESULT = 2, TAG_STOP = 3;
const long long JOBS = 24, PER_JOB = 10000;

long long expected_total()
{
    long long n = JOBS * PER_JOB - 1;
    return n * (n + 1) * (2 * n + 1) / 6;
}

// Which group a world rank belongs to (-1: the manager).
int group_of(int r) { return r == 0 ? -1 : (r - 1) / GROUP; }

void worker(int me, MPI_Comm group)
{
    int grank = 0, gsize = 0;
    MPI_Comm_rank(group, &grank);
    MPI_Comm_size(group, &gsize);
    for (;;) {
        long long job = -1;
        if (grank == 0) {
            MPI_Status st;
            MPI_Recv(&job, 1, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP) job = -1;
        }
        MPI_Bcast(&job, 1, MPI_LONG_LONG, 0, group);
        if (job < 0) return;
        long long lo = job * PER_JOB, part = 0;
        for (long long i = lo + grank; i < lo + PER_JOB; i += gsize) part += i * i;
        long long sum = 0;
        MPI_Reduce(&part, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, group);
        if (grank == 0) {
            long long msg[2] = {job, sum};
            MPI_Send(msg, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
    }
    (void)me;
}

void manager(int size)
{
    int ngroups = (size - 1) / GROUP;
    std::vector<bool> alive(ngroups, true);
    std::vector<long long> busy(ngroups, -1); // job each group works on
    std::vector<long long> todo;
    for (long long j = JOBS - 1; j >= 0; --j) todo.push_back(j);
    long long total = 0, done = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    auto feed = [&](int g) {
        if (todo.empty() || !alive[g]) return;
        busy[g] = todo.back();
        todo.pop_back();
        MPI_Send(&busy[g], 1, MPI_LONG_LONG, 1 + g * GROUP, TAG_JOB, MPI_COMM_WORLD);
    };
    for (int g = 0; g < ngroups; ++g) feed(g);
    while (done < JOBS) {
        long long msg[2];
        MPI_Status st;
        int rc = MPI_Recv(msg, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        if (rc == MPI_SUCCESS) {
            int g = group_of(st.MPI_SOURCE);
            total += msg[1];
            ++done;
            busy[g] = -1;
            feed(g);
            continue;
        }
        int cls = rc;
        MPI_Error_class(rc, &cls);
#if defined(MPIFT_VERSION)
        if (cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_PROC_FAILED_PENDING) MPI_Abort(MPI_COMM_WORLD, 2);
        // Thesis 6.1: acknowledge, get the failed group, intersect with each group.
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        MPI_Group failed, world_group;
        MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &failed);
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        for (int g = 0; g < ngroups; ++g) {
            if (!alive[g]) continue;
            std::vector<int> members;
            for (int r = 1 + g * GROUP; r < 1 + (g + 1) * GROUP; ++r) members.push_back(r);
            MPI_Group grp, common;
            MPI_Group_incl(world_group, GROUP, members.data(), &grp);
            MPI_Group_intersection(grp, failed, &common);
            int n = 0;
            MPI_Group_size(common, &n);
            if (n > 0) {
                alive[g] = false;
                std::printf("manager: group %d lost %d process(es); dropping it\n", g, n);
                if (busy[g] >= 0) todo.push_back(busy[g]);
                busy[g] = -1;
            }
            MPI_Group_free(&common);
            MPI_Group_free(&grp);
        }
        MPI_Group_free(&world_group);
        MPI_Group_free(&failed);
        for (int g = 0; g < ngroups; ++g)
            if (alive[g] && busy[g] < 0) feed(g);
#else
        std::fprintf(stderr, "manager: error class %d without fault tolerance\n", cls);
        MPI_Abort(MPI_COMM_WORLD, 2);
#endif
    }
    int live = 0;
    for (int g = 0; g < ngroups; ++g) {
        if (!alive[g]) continue;
        ++live;
        long long stop = -1;
        MPI_Send(&stop, 1, MPI_LONG_LONG, 1 + g * GROUP, TAG_STOP, MPI_COMM_WORLD);
    }
    bool ok = total == expected_total();
    std::printf("manager: %lld jobs done by %d of %d groups; sum = %lld (%s)\n", done, live, ngroups, total,
                ok ? "correct" : "WRONG");
    if (!ok) MPI_Abort(MPI_COMM_WORLD, 1);
}
} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 1 + GROUP || (size - 1) % GROUP != 0) {
        if (rank == 0) std::fprintf(stderr, "run with 1 + %d*k ranks (e.g. -n 5)\n", GROUP);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, group_of(rank) < 0 ? MPI_UNDEFINED : group_of(rank), rank, &group);
    if (rank == 0) {
        std::printf("manager: %d groups of %d ranks, %lld jobs\n", (size - 1) / GROUP, GROUP, JOBS);
#if defined(MPIFT_VERSION) && !defined(SIM_FT_HAVE_KILL_ME)
        std::printf("manager: (this MPIFT version cannot simulate failures yet: no rank dies in this run)\n");
#endif
        manager(size);
    } else {
        worker(rank, group);
        MPI_Comm_free(&group);
    }
    MPI_Finalize();
    return 0;
}
