// MPI_Test.cpp: the thesis's test program (section 6.2), tests 1-11.
//
//   make MPI_Test_regular   plain MPI: tests that need no failure
//   make MPI_Test_ft        with MPIFT (through include/compat: the source is unchanged)
//
// Rank 0 prints one line per test, "Test <k> <name>: PASS|FAIL <reason>|SKIP <reason>",
// then "<p> passed, <f> failed, <s> skipped". Exit status 0 only if nothing failed.
// Options: --iters N (default 128, as in the thesis), --max-exp K (sizes 4^0..4^K ints,
// default 5), --loops N (communicator create/free loops, default 200).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// Tests 6, 7, 9, 10 and 11 need processes to fail; MPIFT announces the kill API.
#if defined(MPIFT_VERSION) && defined(SIM_FT_HAVE_KILL_ME)
#define HAVE_FAILURES 1
#else
#define HAVE_FAILURES 0
#endif

namespace {

int rank = 0, size = 1;
int iters = 128, max_exp = 5, loops = 200;

struct Outcome {
    bool ok;
    std::string why;
};

Outcome pass() { return {true, ""}; }
Outcome fail(const std::string &why) { return {false, why}; }

std::vector<int> sizes()
{
    std::vector<int> s;
    for (int e = 0, n = 1; e <= max_exp; ++e, n *= 4) s.push_back(n);
    return s;
}

// Test 1: Allreduce, every size, checked.
Outcome allreduce_test(MPI_Comm comm)
{
    int n = 0, sz = 0;
    MPI_Comm_size(comm, &sz);
    for (int count : sizes()) {
        std::vector<int> in(count), out(count);
        for (int it = 0; it < iters; ++it) {
            for (int i = 0; i < count; ++i) in[i] = rank + i + it;
            MPI_Allreduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, comm);
            for (int i = 0; i < count; i += 1 + count / 8)
                if (out[i] != sz * (sz - 1) / 2 + sz * (i + it)) ++n;
        }
    }
    return n ? fail(std::to_string(n) + " wrong Allreduce results") : pass();
}

// Test 2: n/2 pairs of blocking Send/Recv.
Outcome sendrecv_test(MPI_Comm comm, bool nonblocking)
{
    int sz = 0, me = 0, bad = 0;
    MPI_Comm_size(comm, &sz);
    MPI_Comm_rank(comm, &me);
    int peer = (me % 2 == 0) ? me + 1 : me - 1;
    if (peer >= sz) return pass(); // odd size: the last rank has no partner
    for (int count : sizes()) {
        std::vector<int> buf(count);
        for (int it = 0; it < iters; ++it) {
            if (me % 2 == 0) {
                for (int i = 0; i < count; ++i) buf[i] = me * 7 + i + it;
                if (nonblocking) {
                    MPI_Request r;
                    MPI_Isend(buf.data(), count, MPI_INT, peer, it, comm, &r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                } else {
                    MPI_Send(buf.data(), count, MPI_INT, peer, it, comm);
                }
            } else {
                MPI_Status st;
                if (nonblocking) {
                    MPI_Request r;
                    MPI_Irecv(buf.data(), count, MPI_INT, peer, it, comm, &r);
                    MPI_Wait(&r, &st);
                } else {
                    MPI_Recv(buf.data(), count, MPI_INT, peer, it, comm, &st);
                }
                int got = 0;
                MPI_Get_count(&st, MPI_INT, &got);
                if (got != count || buf[count - 1] != peer * 7 + count - 1 + it) ++bad;
            }
        }
    }
    return bad ? fail(std::to_string(bad) + " wrong messages") : pass();
}

// Test 4: Bcast from rank 0.
Outcome bcast_test(MPI_Comm comm)
{
    int bad = 0, me = 0;
    MPI_Comm_rank(comm, &me);
    for (int count : sizes()) {
        std::vector<int> buf(count);
        for (int it = 0; it < iters; ++it) {
            for (int i = 0; i < count; ++i) buf[i] = (me == 0) ? i * 3 + it : -1;
            MPI_Bcast(buf.data(), count, MPI_INT, 0, comm);
            if (buf[count - 1] != (count - 1) * 3 + it) ++bad;
        }
    }
    return bad ? fail(std::to_string(bad) + " wrong broadcasts") : pass();
}

// Test 5: test 1 and test 2 alternately.
Outcome alternate_test(MPI_Comm comm)
{
    int saved = iters;
    Outcome o = pass();
    for (int it = 0; it < saved && o.ok; ++it) {
        iters = 1;
        o = allreduce_test(comm);
        if (o.ok) o = sendrecv_test(comm, false);
    }
    iters = saved;
    return o;
}

// Test 8: create and free communicators in a loop.
Outcome split_free_test(MPI_Comm comm)
{
    int bad = 0;
    for (int i = 0; i < loops; ++i) {
        MPI_Comm c;
        MPI_Comm_split(comm, rank % 2, rank, &c);
        int sz = 0;
        MPI_Comm_size(c, &sz);
        if (sz != (size + 1 - rank % 2) / 2) ++bad;
        MPI_Comm_free(&c);
        if (c != MPI_COMM_NULL) ++bad;
    }
    return bad ? fail(std::to_string(bad) + " wrong split/free outcomes") : pass();
}

Outcome needs_failures()
{
#if defined(MPIFT_VERSION)
    return {true, "SKIP simulated failures (Sim_FT_kill_me) are not in this MPIFT version yet"};
#else
    return {true, "SKIP needs MPIFT (make MPI_Test_ft)"};
#endif
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--max-exp")) max_exp = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--loops")) loops = std::atoi(argv[++i]);
    }

    struct Test {
        int k;
        const char *name;
        std::function<Outcome()> run;
    };
    MPI_Comm w = MPI_COMM_WORLD;
    std::vector<Test> tests = {
        {1, "Allreduce", [&] { return allreduce_test(w); }},
        {2, "Send/Recv pairs", [&] { return sendrecv_test(w, false); }},
        {3, "Isend/Irecv pairs + Wait", [&] { return sendrecv_test(w, true); }},
        {4, "Bcast", [&] { return bcast_test(w); }},
        {5, "Allreduce and Send/Recv alternately", [&] { return alternate_test(w); }},
        {6, "tests 1-5 with dead processes (root alive, root dead)", needs_failures},
        {7, "Allreduce with the root and others dead", needs_failures},
        {8, "Comm_split + Comm_free loop", [&] { return split_free_test(w); }},
        {9, "shrink with dead processes, then Bcast", needs_failures},
        {10, "revoke, then operations return MPI_ERR_REVOKED", needs_failures},
        {11, "test 8 with a rank dead in pending Ibarrier/Ibcast", needs_failures},
    };
    int passed = 0, failed = 0, skipped = 0;
    for (const Test &t : tests) {
        auto t0 = std::chrono::steady_clock::now();
        Outcome o = t.run();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        int ok = o.ok ? 1 : 0, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!ok) std::fprintf(stderr, "rank %d: test %d: %s\n", rank, t.k, o.why.c_str());
        bool skip = o.ok && o.why.rfind("SKIP", 0) == 0;
        if (skip) ++skipped;
        else if (all_ok) ++passed;
        else ++failed;
        if (rank == 0) {
            if (skip) std::printf("Test %d %s: %s\n", t.k, t.name, o.why.c_str());
            else if (all_ok) std::printf("Test %d %s: PASS (%.1f ms)\n", t.k, t.name, ms);
            else std::printf("Test %d %s: FAIL %s\n", t.k, t.name, ok ? "on another rank" : o.why.c_str());
            std::fflush(stdout);
        }
    }
    if (rank == 0) std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
