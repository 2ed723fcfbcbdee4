// master_worker.cpp: the thesis's fault-tolerant master/worker pattern (section 6.1).
//
// Rank 0 is the manager. The other ranks form groups of GROUP ranks (a group master and
// its workers, on a communicator of their own). The manager hands out jobs (sum of i*i
// over a range) to the group masters; each group splits a job among its members with
// Bcast + Reduce and the master returns the result.
//
// Failures: --kill N processes die mid-run (default 1). Death d strikes group 1 + d: a
// worker for even d, the group master for odd d, when the group receives its job number
// --after K + 1 (default 1 + 1), so that job is lost. At np=5 (2 groups) the default kills
// world rank 4, the worker of group 1; at np=7 --kill 2 also kills world rank 5, the
// master of group 2. At least one group survives (N is capped at groups - 1).
//
// Failure handling as in the thesis: the manager waits for results with an
// MPI_ANY_SOURCE MPI_Irecv. While a failure is not acknowledged, MPI_Wait returns
// MPI_ERR_PROC_FAILED_PENDING and the request stays active. The manager then acknowledges
// the failure (MPIX_Comm_failure_ack), gets the failed processes
// (MPIX_Comm_failure_get_acked), intersects them with each group
// (MPI_Group_intersection), drops every group that lost a member, tells that group's
// survivors to stop and gives the lost job to another group; then it waits on the same
// request again. The surviving members of a broken group see their Bcast or Reduce fail,
// revoke the group communicator (so no member stays blocked in it) and wait for the stop.
// The final sum is checked against the closed form; the manager exits 0 iff it is right.
//
// Builds: with MPIFT (make demo; a rank dies with Sim_FT_kill_me() once MPIFT has it), or
// against a real ULFM MPI with -DMPIFT_ORACLE (a rank dies with raise(SIGKILL); see
// examples/oracle/README.md), or plain MPI (nobody dies).
#include <mpi.h>

#if defined(MPIFT_VERSION)
#define HAVE_ULFM 1
#if defined(SIM_FT_HAVE_KILL_ME)
#define HAVE_KILL 1
#define FT_KILL_ME() Sim_FT_kill_me()
#endif
#elif defined(MPIFT_ORACLE)
#include <mpi-ext.h>
#include <signal.h>
#define HAVE_ULFM 1
#define HAVE_KILL 1
#define FT_KILL_ME() raise(SIGKILL)
#endif
#ifndef HAVE_ULFM
#define HAVE_ULFM 0
#endif
#ifndef HAVE_KILL
#define HAVE_KILL 0
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
const int GROUP = 2;
const int TAG_JOB = 1, TAG_RESULT = 2, TAG_STOP = 3;
const long long PER_JOB = 10000;
long long jobs = 24;
int kills = 1, after = 1;

long long expected_total()
{
    long long n = jobs * PER_JOB - 1;
    return n * (n + 1) * (2 * n + 1) / 6;
}

// Which group a world rank belongs to (-1: the manager).
int group_of(int r) { return r == 0 ? -1 : (r - 1) / GROUP; }
int master_of(int g) { return 1 + g * GROUP; }

// The d-th victim: in group 1 + d, a worker (the group's last rank) or the master.
bool is_victim(int r, int ngroups)
{
    int n = kills < ngroups - 1 ? kills : ngroups - 1;
    for (int d = 0; d < n; ++d)
        if (r == (d % 2 == 0 ? master_of(1 + d) + GROUP - 1 : master_of(1 + d))) return true;
    return false;
}

[[noreturn]] void die(int me, int done)
{
#if HAVE_KILL
    std::printf("rank %d (%s of group %d): dies after %d jobs, holding its group's next one\n", me,
                me == master_of(group_of(me)) ? "master" : "worker", group_of(me), done);
    std::fflush(stdout);
    FT_KILL_ME();
#endif
    (void)me;
    (void)done;
    std::abort();
}

// A member of a group that lost a process: make sure no member stays blocked in the group
// communicator, then wait for the manager's stop (unless it came already).
void leave_broken_group(int me, MPI_Comm group, bool got_stop)
{
#if HAVE_ULFM
    MPIX_Comm_revoke(group);
#else
    (void)group;
#endif
    if (!got_stop) {
        long long stop = 0;
        MPI_Recv(&stop, 1, MPI_LONG_LONG, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    std::printf("rank %d: group %d lost a member; stopped by the manager\n", me, group_of(me));
    std::fflush(stdout);
}

void worker(int me, MPI_Comm group, bool victim)
{
    int grank = 0, gsize = 0;
    MPI_Comm_rank(group, &grank);
    MPI_Comm_size(group, &gsize);
    for (int done = 0;; ++done) {
        long long job = -1;
        bool got_stop = false;
        if (grank == 0) {
            MPI_Status st;
            int rc = MPI_Recv(&job, 1, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (rc != MPI_SUCCESS || st.MPI_TAG == TAG_STOP) {
                job = -1;
                got_stop = true;
            }
        }
        if (MPI_Bcast(&job, 1, MPI_LONG_LONG, 0, group) != MPI_SUCCESS) {
            if (!got_stop) leave_broken_group(me, group, false);
            return;
        }
        if (job < 0) {
            // Every live rank but the manager gets exactly one stop; a master got its
            // own as the job, a worker collects it here.
            if (grank != 0) MPI_Recv(&job, 1, MPI_LONG_LONG, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            return;
        }
        if (victim && done == after) die(me, done);
        long long lo = job * PER_JOB, part = 0;
        for (long long i = lo + grank; i < lo + PER_JOB; i += gsize) part += i * i;
        long long sum = 0;
        if (MPI_Reduce(&part, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, group) != MPI_SUCCESS) {
            leave_broken_group(me, group, false);
            return;
        }
        if (grank == 0) {
            long long msg[2] = {job, sum};
            MPI_Send(msg, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
    }
}

// Returns 0 iff the sum is right.
// setup_failed: a process died before the groups were made (main).
int manager(int size, bool setup_failed)
{
    int ngroups = (size - 1) / GROUP;
    std::vector<bool> alive(ngroups, true);
    std::vector<long long> busy(ngroups, -1); // job each group works on
    std::vector<bool> finished(jobs, false);
    std::vector<long long> todo;
    for (long long j = jobs - 1; j >= 0; --j) todo.push_back(j);
    long long total = 0, done = 0, redistributed = 0;
    std::vector<std::string> events;
    std::vector<bool> told(size, false); // sent its one stop message
    auto feed = [&](int g) {
        while (!todo.empty() && finished[todo.back()]) todo.pop_back();
        if (todo.empty() || !alive[g]) return;
        busy[g] = todo.back();
        todo.pop_back();
        // A send to a master that just died may fail; its group is dropped on the next
        // PROC_FAILED_PENDING, and the job goes back then.
        MPI_Send(&busy[g], 1, MPI_LONG_LONG, master_of(g), TAG_JOB, MPI_COMM_WORLD);
    };
    for (int g = 0; g < ngroups; ++g) feed(g);

#if HAVE_ULFM
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int known_failed = 0;
    // Thesis 6.1: acknowledge, get the failed group, intersect it with each group.
    auto handle_failures = [&](const char *how) {
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        MPI_Group failed;
        MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &failed);
        int nf = 0;
        MPI_Group_size(failed, &nf);
        std::vector<int> fr(nf), wr(nf);
        for (int i = 0; i < nf; ++i) fr[i] = i;
        MPI_Group_translate_ranks(failed, nf, fr.data(), world_group, wr.data());
        for (int i = known_failed; i < nf; ++i) {
            std::printf("manager: the any-source receive returned %s: rank %d failed\n", how, wr[i]);
            events.push_back("rank " + std::to_string(wr[i]) + " failed");
        }
        known_failed = nf;
        for (int g = 0; g < ngroups; ++g) {
            if (!alive[g]) continue;
            std::vector<int> members;
            for (int r = master_of(g); r < master_of(g + 1); ++r) members.push_back(r);
            MPI_Group grp, common;
            MPI_Group_incl(world_group, GROUP, members.data(), &grp);
            MPI_Group_intersection(grp, failed, &common);
            int n = 0;
            MPI_Group_size(common, &n);
            if (n > 0) {
                alive[g] = false;
                std::printf("manager: group %d lost %d process(es); dropping it", g, n);
                events.push_back("group " + std::to_string(g) + " dropped");
                if (busy[g] >= 0) {
                    std::printf(", its job %lld goes to another group", busy[g]);
                    todo.push_back(busy[g]);
                    ++redistributed;
                }
                std::printf("\n");
                busy[g] = -1;
                // Tell the group's survivors to stop.
                std::vector<int> idx(GROUP), gone(GROUP);
                for (int i = 0; i < GROUP; ++i) idx[i] = i;
                MPI_Group_translate_ranks(grp, GROUP, idx.data(), common, gone.data());
                long long stop = -1;
                for (int i = 0; i < GROUP; ++i)
                    if (gone[i] == MPI_UNDEFINED && !told[members[i]]) {
                        told[members[i]] = true;
                        MPI_Send(&stop, 1, MPI_LONG_LONG, members[i], TAG_STOP, MPI_COMM_WORLD);
                    }
            }
            MPI_Group_free(&common);
            MPI_Group_free(&grp);
        }
        MPI_Group_free(&failed);
        for (int g = 0; g < ngroups; ++g)
            if (alive[g] && busy[g] < 0) feed(g);
    };
    if (setup_failed) handle_failures("MPIX_Comm_agree at setup");
#else
    (void)setup_failed;
#endif

    MPI_Request req = MPI_REQUEST_NULL;
    long long msg[2];
    while (done < jobs) {
        if (req == MPI_REQUEST_NULL) MPI_Irecv(msg, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &req);
        MPI_Status st;
        int rc = MPI_Wait(&req, &st);
        if (rc == MPI_SUCCESS) {
            int g = group_of(st.MPI_SOURCE);
            long long j = msg[0];
            if (j >= 0 && j < jobs && !finished[j]) {
                finished[j] = true;
                total += msg[1];
                ++done;
            }
            if (busy[g] == j) busy[g] = -1;
            feed(g);
            continue;
        }
        int cls = rc;
        MPI_Error_class(rc, &cls);
#if HAVE_ULFM
        // PENDING: the any-source request is still active; PROC_FAILED: it completed.
        if (cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_PROC_FAILED_PENDING) {
            std::fprintf(stderr, "manager: unexpected error class %d\n", cls);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (cls == MPIX_ERR_PROC_FAILED) req = MPI_REQUEST_NULL;
        handle_failures(cls == MPIX_ERR_PROC_FAILED ? "MPI_ERR_PROC_FAILED" : "MPI_ERR_PROC_FAILED_PENDING");
        bool any = false;
        for (int g = 0; g < ngroups; ++g) any = any || alive[g];
        if (!any) {
            std::fprintf(stderr, "manager: every group lost a process\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
#else
        std::fprintf(stderr, "manager: error class %d without fault tolerance\n", cls);
        MPI_Abort(MPI_COMM_WORLD, 2);
#endif
    }
#if HAVE_ULFM
    MPI_Group_free(&world_group);
#endif
    int live = 0;
    for (int g = 0; g < ngroups; ++g) live += alive[g] ? 1 : 0;
    // The stop to every rank not told yet: live groups, and survivors of a group
    // whose loss came too late to be seen here (they wait for it). A send to a
    // rank that died meanwhile fails; nobody waits for that one.
    for (int r = 1; r < size; ++r) {
        long long stop = -1;
        if (!told[r]) MPI_Send(&stop, 1, MPI_LONG_LONG, r, TAG_STOP, MPI_COMM_WORLD);
    }
    bool ok = total == expected_total();
    std::string what;
    for (const std::string &e : events) what += (what.empty() ? "" : ", ") + e;
    std::printf("manager: %lld jobs done by %d of %d groups (%s; %lld job(s) redistributed); sum = %lld (%s)\n", done,
                live, ngroups, what.empty() ? "no failure" : what.c_str(), redistributed, total,
                ok ? "correct" : "WRONG");
    std::fflush(stdout);
    return ok ? 0 : 1;
}
} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--kill")) kills = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--after")) after = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--jobs")) jobs = std::atoll(argv[++i]);
    }
    if (size < 1 + GROUP || (size - 1) % GROUP != 0) {
        if (rank == 0) std::fprintf(stderr, "run with 1 + %d*k ranks (e.g. -n 5)\n", GROUP);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ngroups = (size - 1) / GROUP;
    MPI_Comm group = MPI_COMM_NULL;
    int color = group_of(rank) < 0 ? MPI_UNDEFINED : group_of(rank);
    int rc = MPI_Comm_split(MPI_COMM_WORLD, color, rank, &group);
    bool setup_failed = false;
#if HAVE_ULFM
    // A process that dies before or during the split: the split need not fail
    // everywhere, so decide together; then split the survivors instead (a group
    // that lost a member is dropped by the manager, its survivors stopped).
    for (MPI_Comm from = MPI_COMM_WORLD;;) {
        int ok = rc == MPI_SUCCESS;
        if (MPIX_Comm_agree(from, &ok) == MPI_SUCCESS && ok) {
            if (from != MPI_COMM_WORLD) MPI_Comm_free(&from);
            break;
        }
        setup_failed = true;
        if (rc == MPI_SUCCESS && group != MPI_COMM_NULL) MPI_Comm_free(&group);
        MPI_Comm shrunk;
        MPIX_Comm_shrink(from, &shrunk);
        if (from != MPI_COMM_WORLD) MPI_Comm_free(&from);
        from = shrunk;
        MPI_Comm_set_errhandler(from, MPI_ERRORS_RETURN);
        group = MPI_COMM_NULL;
        rc = MPI_Comm_split(from, color, rank, &group);
    }
#endif
    (void)rc;
    int status = 0;
    if (rank == 0) {
        int n = kills < ngroups - 1 ? kills : ngroups - 1;
        std::printf("manager: %d groups of %d ranks, %lld jobs, %d process(es) to die\n", ngroups, GROUP, jobs,
                    HAVE_KILL ? n : 0);
#if !HAVE_KILL
        if (n > 0)
            std::printf("manager: (this build cannot kill a process: %s; nobody dies)\n",
                        HAVE_ULFM ? "this MPIFT version has no Sim_FT_kill_me yet" : "plain MPI");
#endif
        std::fflush(stdout);
        status = manager(size, setup_failed);
    } else {
        MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
        worker(rank, group, HAVE_KILL && is_victim(rank, ngroups));
        MPI_Comm_free(&group);
    }
    MPI_Finalize();
    return status;
}
