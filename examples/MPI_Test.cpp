// MPI_Test.cpp: the thesis's test program (section 6.2), tests 1-11.
//
//   make MPI_Test_regular   plain MPI: tests that need no failure (6, 7, 9, 10, 11 SKIP)
//   make MPI_Test_ft        with MPIFT (through include/compat: the source is unchanged)
//   mpicxx -DMPIFT_ORACLE   against a real ULFM MPI (Open MPI 5 --with-ft ulfm): a rank
//                           dies by raise(SIGKILL); see examples/oracle/README.md
//
// The first live rank prints one line per test, "Test <k> <name>: PASS (<ms> ms)|FAIL
// <reason>|SKIP <reason>", then "<p> passed, <f> failed, <s> skipped". Exit status 0 only
// if nothing failed. Options: --iters N (default 128, as in the thesis), --max-exp K
// (sizes 4^0..4^K ints, default 5), --loops N (communicator create/free loops, default
// 200), --verbose (each rank reports on stderr what the failure tests saw).
//
// Failure tests (ULFM semantics, not the thesis layer's): a rank that dies stays dead, so
// the tests keep `live`, a communicator of the survivors, and replace it by its shrink
// after every test that kills. Results are aggregated over `live`, never over
// MPI_COMM_WORLD (it holds the dead). Survivors learn of a death only through an MPI call
// that fails or through MPIX_Comm_shrink, so every run is deterministic up to what ULFM
// itself leaves open (which ranks see an error in a collective). A victim dies only after
// every other rank has passed the point (kill_point). Every communicator used in them
// returns errors (MPI_ERRORS_RETURN).
//
//   6  The last live rank dies. Tests 1-5 run, each on its own communicator made before
//      the death: every call returns, with correct data or PROC_FAILED/REVOKED (a rank
//      that sees an error revokes, ULFM's recipe); Allreduce must fail. Then live :=
//      shrink(live) and tests 1-5 must pass on it. Same again with the root dead: the live
//      rank 0 dies (np >= 6), or, at small np, on communicators whose rank 0 is the first
//      victim.
//   7  The root and the last live rank die (np >= 7; otherwise no new death). Allreduce on
//      `rev` (root dead, every victim in it) fails at every survivor; then loops/50 times:
//      shrink `rev`, test 1 on the result, free it.
//   9  agree on `all` (MPI_COMM_WORLD's dup, holds every victim) returns PROC_FAILED with
//      the AND of the survivors' flags; shrink gives the survivors in order; Bcast of
//      known values from every root of the new communicator.
//   10 The last rank revokes a communicator the others wait on in a Barrier; that Barrier
//      and later calls (collectives, Send/Recv, Issend/Irecv, Ibarrier, Comm_dup) return
//      MPI_ERR_REVOKED, is_revoked says 1, agree and shrink still work.
//   11 Live rank 1 dies right after starting an Ibarrier and an Ibcast on two
//      communicators; survivors complete one pair at once, free the other communicator
//      with its requests pending, run test 8 on shrink(live), then complete the others.
//
// After each test the survivors shrink `live` and agree on the outcome (settle), so a
// death the tests did not plan (injected from outside: MPIFT_KILL, mpift-campaign) is
// found: the test it hit prints "DISTURBED by a death it did not cause" (unless a call
// returned wrong data: always a FAIL), the later failure tests SKIP, the others must
// still pass on the shrunk `live`. A rank whose call fails revokes that communicator,
// so no peer waits for it in a call it skips. Exit 0 if nothing FAILed.
//
// Victims (world ranks):
//
//   np=4: test 6 kills 3 (the root-dead case uses a communicator whose rank 0 is 3);
//         test 11 kills 1. Survivors 0, 2.
//   np=8: test 6 kills 7, then the root 0; test 7 kills the root 1 and 6; test 11 kills 3.
//         Survivors 2, 4, 5.
//
// At least two ranks survive every test (np >= 4); failure tests SKIP at np < 4.
#include <mpi.h>

// Tests 6, 7, 9, 10 and 11 need processes to fail: MPIFT announces its kill API; the real
// ULFM oracle (Open MPI 5 with ULFM) kills the process for real.
#if defined(MPIFT_VERSION) && defined(SIM_FT_HAVE_KILL_ME)
#define HAVE_FAILURES 1
#define FT_KILL_ME() Sim_FT_kill_me()
#elif !defined(MPIFT_VERSION) && defined(MPIFT_ORACLE)
#include <mpi-ext.h>
#include <signal.h>
#define HAVE_FAILURES 1
#define FT_KILL_ME() raise(SIGKILL)
#else
#define HAVE_FAILURES 0
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

int rank = 0, size = 1; // in MPI_COMM_WORLD
int iters = 128, max_exp = 5, loops = 200;
bool verbose = false;

// The survivors: MPI_COMM_WORLD's dup, replaced by its shrink after each killing test.
MPI_Comm live = MPI_COMM_NULL;
// Made at start while everybody lives, kept for the tests that need a communicator with
// dead members: `all` is MPI_COMM_WORLD's dup, `rev` the same ranks in reverse order (its
// rank 0, world rank size-1, is the first victim).
MPI_Comm all = MPI_COMM_NULL, rev = MPI_COMM_NULL;
// Communicators that were revoked or lost a rank in mid-traffic are freed only at the end.
// Open MPI 5.0 (the ULFM oracle) reuses a freed communicator's id for the next new one,
// and messages of the old one still in flight (a late revoke, fragments of an interrupted
// collective) then land in the new one: its collectives hang, or it crashes in
// ompi_comm_revoke_local. Freeing them last keeps the tests about the layer, not that bug.
std::vector<MPI_Comm> graveyard;

struct Outcome {
    bool ok;
    std::string why;
    bool wrong_data = false; // a call succeeded with wrong data: a failure whatever else died
};

Outcome pass() { return {true, ""}; }
Outcome fail(const std::string &why) { return {false, why}; }
Outcome skip(const std::string &why) { return {true, "SKIP " + why}; }

#if HAVE_FAILURES
// Deaths the tests caused so far (the same count at every survivor), and whether a death
// they did not cause was seen (a kill injected from outside: MPIFT_KILL, a campaign).
int planned_deaths = 0;
bool unplanned_death = false;
int unplanned_seen = 0; // how many: the world's size - live's size - planned_deaths
#endif

std::vector<int> sizes()
{
    std::vector<int> s;
    for (int e = 0, n = 1; e <= max_exp; ++e, n *= 4) s.push_back(n);
    return s;
}

int comm_rank(MPI_Comm c)
{
    int r = 0;
    MPI_Comm_rank(c, &r);
    return r;
}

int comm_size(MPI_Comm c)
{
    int s = 0;
    MPI_Comm_size(c, &s);
    return s;
}

int error_class(int rc)
{
    int cls = rc;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = rc;
    return cls;
}

std::string class_name(int cls)
{
#if HAVE_FAILURES
    if (cls == MPIX_ERR_PROC_FAILED) return "MPI_ERR_PROC_FAILED";
    if (cls == MPIX_ERR_PROC_FAILED_PENDING) return "MPI_ERR_PROC_FAILED_PENDING";
    if (cls == MPIX_ERR_REVOKED) return "MPI_ERR_REVOKED";
#endif
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(cls, s, &len) != MPI_SUCCESS) return "error " + std::to_string(cls);
    return "error " + std::to_string(cls) + " (" + std::string(s, len) + ")";
}

[[maybe_unused]] void note(const std::string &s)
{
    if (verbose) std::fprintf(stderr, "[world rank %d] %s\n", rank, s.c_str());
}

// Checks every MPI call of a test on one communicator. Strict (nothing dead in `comm`):
// any error fails the test. Tolerant (`comm` holds a dead rank): a call may fail with
// PROC_FAILED, or REVOKED once someone revoked. Either way the first failing call ends
// the test at this rank, and the rank revokes `comm` so that peers blocked on it get out
// (ULFM's recipe: a live peer may have left the collective or the exchange they wait in;
// in a strict test that happens only after an unplanned death). A call that succeeds
// must deliver correct data.
struct Ops {
    MPI_Comm comm;
    bool tolerant;
    int err = MPI_SUCCESS; // class of the first error
    long done = 0;         // calls that succeeded
    int wrong = 0;         // of them, with wrong data

    bool check(int rc)
    {
        if (rc == MPI_SUCCESS) {
            ++done;
            return true;
        }
        if (err == MPI_SUCCESS) {
            err = error_class(rc);
            if (err == MPI_SUCCESS) err = MPI_ERR_OTHER;
#if HAVE_FAILURES
            // Strict or not: a peer may wait for this rank in a call it now skips.
            if (comm != MPI_COMM_NULL) MPIX_Comm_revoke(comm);
#endif
        }
        return false;
    }
    bool stopped() const { return err != MPI_SUCCESS; }

    Outcome outcome(const std::string &what) const
    {
        if (wrong) return {false, what + ": " + std::to_string(wrong) + " wrong results", true};
        if (err == MPI_SUCCESS) return pass();
#if HAVE_FAILURES
        if (tolerant && (err == MPIX_ERR_PROC_FAILED || err == MPIX_ERR_REVOKED)) return pass();
#endif
        return fail(what + ": " + class_name(err) + " after " + std::to_string(done) + " calls");
    }
    std::string summary() const
    {
        return std::to_string(done) + " calls ok" + (stopped() ? ", then " + class_name(err) : "");
    }
};

// Test 1: Allreduce, every size, checked.
void allreduce_test(Ops &o)
{
    int sz = comm_size(o.comm), me = comm_rank(o.comm);
    for (int count : sizes()) {
        std::vector<int> in(count), out(count);
        for (int it = 0; it < iters; ++it) {
            for (int i = 0; i < count; ++i) in[i] = me + i + it;
            if (!o.check(MPI_Allreduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, o.comm))) return;
            for (int i = 0; i < count; i += 1 + count / 8)
                if (out[i] != sz * (sz - 1) / 2 + sz * (i + it)) ++o.wrong;
        }
    }
}

// Tests 2 and 3: n/2 pairs of Send/Recv, or Isend/Irecv + Wait.
void sendrecv_test(Ops &o, bool nonblocking)
{
    int sz = comm_size(o.comm), me = comm_rank(o.comm);
    int peer = (me % 2 == 0) ? me + 1 : me - 1;
    if (peer >= sz) return; // odd size: the last rank has no partner
    for (int count : sizes()) {
        std::vector<int> buf(count);
        for (int it = 0; it < iters; ++it) {
            if (me % 2 == 0) {
                for (int i = 0; i < count; ++i) buf[i] = me * 7 + i + it;
                if (nonblocking) {
                    MPI_Request r;
                    if (!o.check(MPI_Isend(buf.data(), count, MPI_INT, peer, it, o.comm, &r))) return;
                    if (!o.check(MPI_Wait(&r, MPI_STATUS_IGNORE))) return;
                } else {
                    if (!o.check(MPI_Send(buf.data(), count, MPI_INT, peer, it, o.comm))) return;
                }
            } else {
                MPI_Status st;
                if (nonblocking) {
                    MPI_Request r;
                    if (!o.check(MPI_Irecv(buf.data(), count, MPI_INT, peer, it, o.comm, &r))) return;
                    if (!o.check(MPI_Wait(&r, &st))) return;
                } else {
                    if (!o.check(MPI_Recv(buf.data(), count, MPI_INT, peer, it, o.comm, &st))) return;
                }
                int got = 0;
                MPI_Get_count(&st, MPI_INT, &got);
                if (got != count || buf[count - 1] != peer * 7 + count - 1 + it) ++o.wrong;
            }
        }
    }
}

// Test 4: Bcast from rank 0.
void bcast_test(Ops &o)
{
    int me = comm_rank(o.comm);
    for (int count : sizes()) {
        std::vector<int> buf(count);
        for (int it = 0; it < iters; ++it) {
            for (int i = 0; i < count; ++i) buf[i] = (me == 0) ? i * 3 + it : -1;
            if (!o.check(MPI_Bcast(buf.data(), count, MPI_INT, 0, o.comm))) return;
            if (buf[count - 1] != (count - 1) * 3 + it) ++o.wrong;
        }
    }
}

// Test 5: test 1 and test 2 alternately.
void alternate_test(Ops &o)
{
    int saved = iters;
    iters = 1;
    for (int it = 0; it < saved && !o.stopped(); ++it) {
        allreduce_test(o);
        if (!o.stopped()) sendrecv_test(o, false);
    }
    iters = saved;
}

// Test 8: create and free communicators in a loop.
void split_free_test(Ops &o)
{
    int me = comm_rank(o.comm), sz = comm_size(o.comm);
    for (int i = 0; i < loops && !o.stopped(); ++i) {
        MPI_Comm c = MPI_COMM_NULL;
        if (!o.check(MPI_Comm_split(o.comm, me % 2, me, &c))) return;
        if (comm_size(c) != (sz + 1 - me % 2) / 2) ++o.wrong;
        if (!o.check(MPI_Comm_free(&c))) return;
        if (c != MPI_COMM_NULL) ++o.wrong;
    }
}

#if HAVE_FAILURES

void bury(MPI_Comm &c)
{
    graveyard.push_back(c);
    c = MPI_COMM_NULL;
}

const char *const suite_names[5] = {"Allreduce", "Send/Recv", "Isend/Irecv", "Bcast", "alternating"};

void run_suite_test(int k, Ops &o)
{
    switch (k) {
    case 0: allreduce_test(o); break;
    case 1: sendrecv_test(o, false); break;
    case 2: sendrecv_test(o, true); break;
    case 3: bcast_test(o); break;
    default: alternate_test(o); break;
    }
}

// Tests 1-5 on a communicator where everybody lives: all must pass.
Outcome strict_suite(MPI_Comm comm, const std::string &where)
{
    for (int k = 0; k < 5; ++k) {
        Ops o{comm, false};
        run_suite_test(k, o);
        note(where + ", test " + std::to_string(k + 1) + " (" + suite_names[k] + "): " + o.summary());
        Outcome r = o.outcome(where + ", test " + std::to_string(k + 1) + " (" + suite_names[k] + ")");
        if (!r.ok) return r;
    }
    return pass();
}

// Keeps the first failure in `first`, but wrong data over anything else.
void keep_first(Outcome &first, const Outcome &r)
{
    if (!r.ok && (first.ok || (r.wrong_data && !first.wrong_data))) first = r;
}

Outcome first_failure(std::initializer_list<Outcome> l)
{
    Outcome first = pass();
    for (const Outcome &o : l) keep_first(first, o);
    return first;
}

[[noreturn]] void die()
{
    note("dies now");
    std::fflush(stdout);
    std::fflush(stderr);
    FT_KILL_ME();
    std::abort(); // not reached: the kill does not return
}

// Before `victims` (ranks of `comm`) die: every rank of `comm` calls it; it returns true
// at a victim once every other rank has told it that it is past this point. Otherwise a
// rank still finishing an earlier collective could miss the victim's part of it (ULFM may
// report PROC_FAILED for a message that the dead rank sent before dying) and the test
// would depend on timing. A victim first tells the survivors that it reached this point
// (a survivor receives that before it sends): a survivor that cannot receive it saw the
// victim die earlier, which the test did not plan (`early_victim_death`).
bool early_victim_death = false;
bool victims_ready(MPI_Comm comm, const std::vector<int> &victims)
{
    const int tag = 4242, here_tag = 4243;
    int me = comm_rank(comm), n = comm_size(comm), token = 0;
    auto is_victim = [&](int r) { return std::find(victims.begin(), victims.end(), r) != victims.end(); };
    if (!is_victim(me)) {
        for (int v : victims) {
            int here = 0;
            if (MPI_Recv(&here, 1, MPI_INT, v, here_tag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                early_victim_death = true;
            MPI_Send(&token, 1, MPI_INT, v, tag, comm);
        }
        return false;
    }
    // Errors are ignored here: a fellow victim may already be dead.
    std::vector<MPI_Request> rq;
    std::vector<int> in(n);
    for (int r = 0; r < n; ++r) {
        if (is_victim(r)) continue;
        rq.emplace_back();
        MPI_Isend(&token, 1, MPI_INT, r, here_tag, comm, &rq.back());
    }
    for (int v : victims) {
        if (v == me) continue;
        rq.emplace_back();
        MPI_Isend(&token, 1, MPI_INT, v, tag, comm, &rq.back());
    }
    for (int r = 0; r < n; ++r) {
        if (r == me) continue;
        rq.emplace_back();
        MPI_Irecv(&in[r], 1, MPI_INT, r, tag, comm, &rq.back());
    }
    MPI_Waitall((int)rq.size(), rq.data(), MPI_STATUSES_IGNORE);
    return true;
}

// Where `victims` die; only survivors return.
void kill_point(MPI_Comm comm, const std::vector<int> &victims)
{
    if (victims_ready(comm, victims)) die();
    planned_deaths += (int)victims.size();
}

// After communicators were made from `parent` (default `live`): whether every survivor
// has all of its own (agreed). A death during the creation may fail it at some ranks
// only; then everybody gives up on them (ULFM's recipe), instead of some waiting on them
// for the others.
bool made_everywhere(const std::vector<MPI_Comm> &made, MPI_Comm parent = MPI_COMM_NULL)
{
    int flag = 1;
    for (MPI_Comm c : made) flag = flag && c != MPI_COMM_NULL;
    MPIX_Comm_agree(parent == MPI_COMM_NULL ? live : parent, &flag); // PROC_FAILED still agrees on the flag
    return flag != 0;
}

MPI_Comm returning(MPI_Comm c)
{
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

// live := shrink(live). Every survivor calls it, so it is where they all learn who died;
// exactly `dead` ranks must be gone (a crash would count as a death).
Outcome shrink_live(const std::string &where, int dead)
{
    int before = comm_size(live);
    MPI_Comm s = MPI_COMM_NULL;
    int rc = MPIX_Comm_shrink(live, &s);
    if (rc != MPI_SUCCESS) return fail(where + ": MPIX_Comm_shrink returned " + class_name(error_class(rc)));
    MPI_Comm old = live;
    live = returning(s);
    rc = MPI_Comm_free(&old);
    if (rc != MPI_SUCCESS) return fail(where + ": freeing the old communicator returned " + class_name(error_class(rc)));
    note(where + ": live communicator shrunk to " + std::to_string(comm_size(live)) + " ranks");
    if (comm_size(live) != before - dead)
        return fail(where + ": " + std::to_string(before - comm_size(live)) + " ranks gone, " + std::to_string(dead) +
                    " killed");
    return pass();
}

// Tests 1-5, each on its own communicator (made before the death) that holds a dead rank:
// every call returns, with correct data or PROC_FAILED/REVOKED. Buries the communicators.
Outcome tolerant_suite(std::vector<MPI_Comm> &comms, const std::string &where)
{
    Outcome first = pass();
    for (int k = 0; k < 5; ++k) {
        Ops o{comms[k], true};
        run_suite_test(k, o);
        std::string what = where + ", test " + std::to_string(k + 1) + " (" + suite_names[k] + ")";
        note(what + ": " + o.summary());
        Outcome r = o.outcome(what);
        // Allreduce needs every contribution: it cannot succeed with a rank dead from the start.
        if (r.ok && (k == 0 || k == 4) && !o.stopped()) r = fail(what + ": succeeded without the dead rank");
        keep_first(first, r);
        bury(comms[k]);
    }
    return first;
}

// Test 6: tests 1-5 with dead processes: first the last rank dies (root alive), then the
// root. Each time tests 1-5 run on a communicator holding the dead (tolerant), then on the
// shrunk live communicator (strict).
Outcome test6()
{
    int n = comm_size(live), me = comm_rank(live);
    // Kill the real root only if 3 ranks stay for tests 7-11 (np >= 6). Otherwise the
    // root-dead case uses communicators whose rank 0 is the first victim.
    bool kill_root = n - 1 >= 5;
    std::vector<MPI_Comm> alive_root(5), dead_root(5);
    for (int k = 0; k < 5; ++k) {
        MPI_Comm_dup(live, &alive_root[k]);
        returning(alive_root[k]);
        if (kill_root) MPI_Comm_dup(live, &dead_root[k]);
        else MPI_Comm_split(live, 0, n - 1 - me, &dead_root[k]);
        returning(dead_root[k]);
    }
    // Everybody has the communicators before anything happens on them (Open MPI crashes
    // when a revoke reaches a rank still building the communicator). The agreement is
    // that point, and it finds a creation that an unplanned death made fail.
    std::vector<MPI_Comm> made(alive_root);
    made.insert(made.end(), dead_root.begin(), dead_root.end());
    if (!made_everywhere(made)) {
        for (MPI_Comm &c : made)
            if (c != MPI_COMM_NULL) bury(c);
        return fail("creating the communicators failed");
    }
    kill_point(live, {n - 1});
    Outcome a = tolerant_suite(alive_root, "root alive, dead communicator");
    Outcome b = shrink_live("root alive", 1);
    Outcome c = b.ok ? strict_suite(live, "root alive, shrunk") : pass();
    if (kill_root) kill_point(live, {0});
    Outcome d = tolerant_suite(dead_root, "root dead, dead communicator");
    Outcome e = kill_root ? shrink_live("root dead", 1) : pass();
    Outcome f = e.ok ? strict_suite(live, "root dead, shrunk") : pass();
    return first_failure({a, b, c, d, e, f});
}

// Test 7: Allreduce on a communicator whose root and others are dead fails everywhere;
// then, repeatedly, shrink it, run test 1 on the shrunk communicator and free it.
Outcome test7()
{
    int n = comm_size(live);
    bool kill = n >= 5; // keep 3 for test 11
    if (kill) kill_point(live, {0, n - 1});
    // `rev`: rank 0 is world rank size-1, dead since test 6, and it holds every victim.
    Ops o{rev, true};
    int one = 1, sum = 0;
    o.check(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, rev));
    note("test 7: Allreduce with the root dead: " + o.summary());
    Outcome first = o.outcome("Allreduce with the root dead");
    if (first.ok && !o.stopped()) first = fail("Allreduce succeeded with the root dead");
    if (!o.stopped()) MPIX_Comm_revoke(rev); // the others may wait for this rank
    int rounds = loops / 50 > 2 ? loops / 50 : 2;
    for (int r = 0; r < rounds; ++r) {
        MPI_Comm s = MPI_COMM_NULL;
        int rc = MPIX_Comm_shrink(rev, &s);
        if (rc != MPI_SUCCESS) {
            if (first.ok) first = fail("shrink " + std::to_string(r) + " returned " + class_name(error_class(rc)));
            break;
        }
        returning(s);
        if (first.ok && comm_size(s) != n - (kill ? 2 : 0))
            first = fail("shrink " + std::to_string(r) + " kept " + std::to_string(comm_size(s)) + " ranks");
        Ops a{s, false};
        allreduce_test(a);
        Outcome ar = a.outcome("Allreduce on shrink " + std::to_string(r));
        keep_first(first, ar);
        rc = MPI_Comm_free(&s);
        if (first.ok && rc != MPI_SUCCESS) first = fail("Comm_free returned " + class_name(error_class(rc)));
    }
    bury(rev);
    Outcome sh = kill ? shrink_live("test 7", 2) : pass();
    return first_failure({first, sh});
}

// Test 8 on the live communicator.
Outcome test8()
{
    Ops o{live, false};
    split_free_test(o);
    return o.outcome("split/free");
}

// Test 9: agree, then shrink, on `all` (every victim is in it, the root too from np 6),
// then Bcast specific values from every root of the new communicator.
Outcome test9()
{
    // The live world ranks, to predict agree's flag and shrink's group.
    MPI_Group wg, lg, ag;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(live, &lg);
    int nl = comm_size(live);
    std::vector<int> lr(nl), wr(nl);
    for (int i = 0; i < nl; ++i) lr[i] = i;
    MPI_Group_translate_ranks(lg, nl, lr.data(), wg, wr.data());
    const int mask = 0x3fffffff;
    int expect = mask;
    for (int r : wr) expect &= ~(1 << (r % 30));
    MPI_Group_free(&wg);

    // agree with unacknowledged failures: PROC_FAILED at every survivor, flag = AND of
    // the survivors' contributions.
    int flag = mask & ~(1 << (rank % 30));
    int rc = MPIX_Comm_agree(all, &flag);
    Outcome first = pass();
    if (error_class(rc) != MPIX_ERR_PROC_FAILED)
        first = fail("agree returned " + class_name(error_class(rc)) + ", not MPI_ERR_PROC_FAILED");
    else if (flag != expect)
        first = fail("agree flag " + std::to_string(flag) + ", expected " + std::to_string(expect));

    MPI_Comm s = MPI_COMM_NULL;
    rc = MPIX_Comm_shrink(all, &s);
    if (rc != MPI_SUCCESS) {
        MPI_Group_free(&lg);
        return fail("shrink returned " + class_name(error_class(rc)));
    }
    returning(s);
    MPI_Comm_group(s, &ag);
    int cmp = MPI_UNEQUAL;
    MPI_Group_compare(ag, lg, &cmp);
    if (first.ok && cmp != MPI_IDENT) first = fail("the shrunk group is not the survivors in order");
    MPI_Group_free(&ag);
    MPI_Group_free(&lg);

    Ops o{s, false};
    int me = comm_rank(s), n = comm_size(s);
    for (int root = 0; root < n && !o.stopped(); ++root) {
        for (int count : {1, 17, 1000}) {
            std::vector<long long> buf(count, -1);
            if (me == root)
                for (int i = 0; i < count; ++i) buf[i] = 1000003LL * root + 31LL * i + count;
            if (!o.check(MPI_Bcast(buf.data(), count, MPI_LONG_LONG, root, s))) break;
            for (int i = 0; i < count; ++i)
                if (buf[i] != 1000003LL * root + 31LL * i + count) {
                    ++o.wrong;
                    break;
                }
        }
    }
    Outcome b = o.outcome("Bcast on the shrunk communicator");
    MPI_Comm_free(&s);
    bury(all);
    return first_failure({first, b});
}

// Completes `r` within `seconds`, or cancels it and returns STILL_PENDING.
const int STILL_PENDING = -4242;
int wait_bounded(MPI_Request &r, double seconds)
{
    auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        int done = 0;
        int rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
            MPI_Cancel(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            return STILL_PENDING;
        }
    }
}

// Test 10: the last rank revokes a communicator on which the others wait in a Barrier.
// The Barrier and every later call on it return MPI_ERR_REVOKED; is_revoked says 1;
// agree and shrink still work (Comm_free of it: at the end, see `graveyard`).
Outcome test10()
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(live, &c);
    returning(c);
    // Everybody has `c` before the revoke (see test6).
    if (!made_everywhere({c})) {
        if (c != MPI_COMM_NULL) bury(c);
        return fail("Comm_dup failed");
    }
    int n = comm_size(c), me = comm_rank(c);
    std::vector<std::string> bad;
    // Anything but REVOKED fails the test, and the rank revokes `c` itself: if the revoker
    // died before revoking (an unplanned death), the others must not wait on `c` for ever.
    auto expect_revoked = [&](const char *what, int rc) {
        if (rc == STILL_PENDING) bad.push_back(std::string(what) + ": still pending after 10 s");
        else if (error_class(rc) != MPIX_ERR_REVOKED) bad.push_back(std::string(what) + " returned " + class_name(error_class(rc)));
        else return;
        MPIX_Comm_revoke(c);
    };
    if (me == n - 1) MPIX_Comm_revoke(c);
    else expect_revoked("Barrier interrupted by the revoke", MPI_Barrier(c));

    int x = me, y = 0;
    expect_revoked("Barrier", MPI_Barrier(c));
    expect_revoked("Bcast", MPI_Bcast(&x, 1, MPI_INT, 0, c));
    expect_revoked("Allreduce", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
    // Point-to-point in a ring: if the revoke were ignored, these would still match.
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    expect_revoked("Send", MPI_Send(&x, 1, MPI_INT, next, 10, c));
    expect_revoked("Recv", MPI_Recv(&y, 1, MPI_INT, prev, 10, c, MPI_STATUS_IGNORE));
    // Non-blocking: the start or the completion fails. Nobody posts the matching call, so
    // only the revoke can complete them; bounded, so that a missed revoke fails, not hangs.
    // Issend, not Isend: a small Isend may complete locally (Open MPI does so even on a
    // revoked communicator), an Issend needs the receiver. Distinct tags: Open MPI lets an
    // Irecv posted after the revoke match an Issend sent after it.
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Issend(&x, 1, MPI_INT, next, 11, c, &r);
    expect_revoked("Issend (or its Wait)", rc == MPI_SUCCESS ? wait_bounded(r, 10) : rc);
    rc = MPI_Irecv(&y, 1, MPI_INT, prev, 12, c, &r);
    expect_revoked("Irecv (or its Wait)", rc == MPI_SUCCESS ? wait_bounded(r, 10) : rc);
    rc = MPI_Ibarrier(c, &r);
    expect_revoked("Ibarrier (or its Wait)", rc == MPI_SUCCESS ? wait_bounded(r, 10) : rc);
    MPI_Comm d = MPI_COMM_NULL;
    rc = MPI_Comm_dup(c, &d);
    expect_revoked("Comm_dup", rc);
    if (rc == MPI_SUCCESS) MPI_Comm_free(&d);

    int flag = 0;
    MPIX_Comm_is_revoked(c, &flag);
    if (flag != 1) bad.push_back("is_revoked says " + std::to_string(flag));
    flag = ~(1 << me);
    rc = MPIX_Comm_agree(c, &flag);
    int expect = ~0;
    for (int i = 0; i < n && i < 31; ++i) expect &= ~(1 << i);
    if (rc != MPI_SUCCESS) bad.push_back("agree on the revoked communicator returned " + class_name(error_class(rc)));
    else if (n <= 31 && flag != expect) bad.push_back("agree flag " + std::to_string(flag));

    MPI_Comm s = MPI_COMM_NULL;
    rc = MPIX_Comm_shrink(c, &s);
    if (rc != MPI_SUCCESS) {
        bad.push_back("shrink of the revoked communicator returned " + class_name(error_class(rc)));
    } else {
        returning(s);
        flag = 1;
        MPIX_Comm_is_revoked(s, &flag);
        if (flag != 0) bad.push_back("the shrunk communicator is revoked");
        if (comm_size(s) != n) bad.push_back("the shrunk communicator has " + std::to_string(comm_size(s)) + " ranks");
        x = comm_rank(s);
        rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, s);
        if (rc != MPI_SUCCESS || y != n * (n - 1) / 2) bad.push_back("Allreduce on the shrunk communicator");
        MPI_Comm_free(&s);
    }
    bury(c);
    for (const std::string &b : bad) note("test 10: " + b);
    return bad.empty() ? pass() : fail(bad[0] + (bad.size() > 1 ? " (+" + std::to_string(bad.size() - 1) + " more)" : ""));
}

// Test 11: live rank 1 starts an Ibarrier and an Ibcast on two communicators and dies
// without completing them. On the first, the survivors complete theirs at once (success or
// PROC_FAILED/REVOKED, no hang). The second they free with the requests still pending,
// then test 8 runs on the shrunk live communicator, and last the survivors complete the
// requests of the freed communicator.
Outcome test11()
{
    int me = comm_rank(live);
    const int victim = 1, count = 256;
    MPI_Comm c[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
    std::vector<int> buf[2];
    MPI_Request req[4];
    for (int i = 0; i < 2; ++i) {
        MPI_Comm_dup(live, &c[i]);
        returning(c[i]);
        buf[i].assign(count, -1);
        if (me == 0)
            for (int j = 0; j < count; ++j) buf[i][j] = 5 * j + i;
    }
    // Everybody has both before a revoke (see test6).
    if (!made_everywhere({c[0], c[1]})) {
        for (MPI_Comm &x : c)
            if (x != MPI_COMM_NULL) bury(x);
        return fail("Comm_dup failed");
    }
    bool dies = victims_ready(live, {victim});
    for (int i = 0; i < 2; ++i) {
        MPI_Ibarrier(c[i], &req[2 * i]);
        MPI_Ibcast(buf[i].data(), count, MPI_INT, 0, c[i], &req[2 * i + 1]);
    }
    if (dies) die();
    planned_deaths += 1;

    // A completed request must be right; an error must be PROC_FAILED or REVOKED. A rank
    // that sees an error revokes the communicator, if it still has it.
    auto complete = [&](int i, const std::string &where) {
        Ops o{c[i], true};
        o.check(MPI_Wait(&req[2 * i], MPI_STATUS_IGNORE));
        bool bcast_ok = o.check(MPI_Wait(&req[2 * i + 1], MPI_STATUS_IGNORE));
        if (bcast_ok)
            for (int j = 0; j < count; ++j)
                if (buf[i][j] != 5 * j + i) {
                    ++o.wrong;
                    break;
                }
        note("test 11: " + where + ": Ibarrier + Ibcast: " + o.summary());
        return o.outcome(where);
    };
    Outcome a = complete(0, "completed at once");
    bury(c[0]);

#if defined(MPIFT_ORACLE)
    // Open MPI 5.0 frees the communicator under a pending non-blocking collective and then
    // crashes in its progress engine (mca_pml_ob1_isend from NBC_Progress): with the oracle
    // the second communicator is freed only after its requests completed.
    Outcome b = pass();
#else
    int rc = MPI_Comm_free(&c[1]);
    Outcome b = rc == MPI_SUCCESS ? pass() : fail("Comm_free with pending requests returned " + class_name(error_class(rc)));
#endif
    Outcome s = shrink_live("test 11", 1);
    Outcome t = s.ok ? test8() : pass();
    note("test 11: test 8 on the shrunk communicator: " + (t.ok ? std::string("ok") : t.why));
    Outcome d = complete(1, "completed after shrink and test 8");
#if defined(MPIFT_ORACLE)
    bury(c[1]);
#endif
    return first_failure({a, b, s, t, d});
}

#endif // HAVE_FAILURES

// Wraps the failure tests: they need a kill and at least 4 ranks.
std::function<Outcome()> needs_failures(std::function<Outcome()> f)
{
#if HAVE_FAILURES
    return [f] {
        if (size < 4) return skip("needs at least 4 ranks");
        // Its victims and expectations assume only the tests' own deaths so far.
        if (unplanned_death) return skip("after a death the tests did not cause");
        return f();
    };
#elif defined(MPIFT_VERSION)
    (void)f;
    return [] { return skip("simulated failures (Sim_FT_kill_me) are not in this MPIFT version yet"); };
#else
    (void)f;
    return [] { return skip("needs MPIFT (make MPI_Test_ft) or a ULFM MPI (-DMPIFT_ORACLE)"); };
#endif
}

// After each test, at every survivor: live := shrink(live), which also takes out a rank
// that died unplanned (the failure tests shrink after their own deaths already), then one
// agreement (an Allreduce without failures) on three bits: 1 the test passed here, 2 no
// wrong data here, 4 no unplanned death seen during the test. Returns the agreed bits. A
// death after the shrink makes the agreement fail (at every survivor): again, until no
// member of `live` is dead, so that its rank 0 (`live_rank`, known without another MPI
// call) is alive to print.
enum { PASSED = 1, DATA_RIGHT = 2, NO_UNPLANNED = 4 };
int live_rank = 0;
int settle(const Outcome &o)
{
    int mine = (o.ok ? PASSED : 0) | (o.wrong_data ? 0 : DATA_RIGHT), bits = mine;
#if HAVE_FAILURES
    bool unplanned_now = early_victim_death;
    early_victim_death = false;
    for (;;) {
        bits = mine;
        MPI_Comm s = MPI_COMM_NULL;
        if (MPIX_Comm_shrink(live, &s) == MPI_SUCCESS) {
            MPI_Comm old = live;
            live = returning(s);
            MPI_Comm_free(&old);
        } else {
            bits &= ~PASSED;
        }
        live_rank = comm_rank(live);
        int unplanned = size - comm_size(live) - planned_deaths; // the same at every survivor
        unplanned_now = unplanned_now || unplanned != unplanned_seen;
        unplanned_seen = unplanned;
        if (!unplanned_now) bits |= NO_UNPLANNED;
        if (MPIX_Comm_agree(live, &bits) == MPI_SUCCESS) break;
        // (PROC_FAILED still agrees on the bits; this repeats only for `live_rank`.)
    }
    if (!(bits & NO_UNPLANNED)) unplanned_death = true;
#else
    int all = 0;
    bits |= NO_UNPLANNED;
    if (MPI_Allreduce(&bits, &all, 1, MPI_INT, MPI_BAND, live) != MPI_SUCCESS) all = 0;
    bits = all;
    live_rank = comm_rank(live);
#endif
    return bits;
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--verbose")) verbose = true;
        else if (i + 1 >= argc) break;
        else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--max-exp")) max_exp = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--loops")) loops = std::atoi(argv[++i]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &live);
    MPI_Comm_dup(MPI_COMM_WORLD, &all);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
    for (MPI_Comm c : {live, all, rev}) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
#if HAVE_FAILURES
    // A death during these creations (injected from outside) may fail them at some
    // ranks only: then the tests run on the survivors (the shrunk world), without `all`
    // and `rev`, and the failure tests skip.
    if (!made_everywhere({live, all, rev}, MPI_COMM_WORLD)) {
        for (MPI_Comm *c : {&live, &all, &rev})
            if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
        MPIX_Comm_shrink(MPI_COMM_WORLD, &live);
        returning(live);
        unplanned_death = true;
        unplanned_seen = size - comm_size(live);
    }
#endif
    live_rank = comm_rank(live);

    auto on_live = [](void (*f)(Ops &), const char *what) {
        return [f, what] {
            Ops o{live, false};
            f(o);
            return o.outcome(what);
        };
    };
    struct Test {
        int k;
        const char *name;
        std::function<Outcome()> run;
    };
    std::vector<Test> tests = {
        {1, "Allreduce", on_live(allreduce_test, "Allreduce")},
        {2, "Send/Recv pairs", on_live([](Ops &o) { sendrecv_test(o, false); }, "Send/Recv")},
        {3, "Isend/Irecv pairs + Wait", on_live([](Ops &o) { sendrecv_test(o, true); }, "Isend/Irecv")},
        {4, "Bcast", on_live(bcast_test, "Bcast")},
        {5, "Allreduce and Send/Recv alternately", on_live(alternate_test, "alternating")},
#if HAVE_FAILURES
        {6, "tests 1-5 with dead processes (root alive, root dead)", needs_failures(test6)},
        {7, "Allreduce with the root and others dead", needs_failures(test7)},
        {8, "Comm_split + Comm_free loop", on_live(split_free_test, "split/free")},
        {9, "shrink with dead processes, then Bcast", needs_failures(test9)},
        {10, "revoke, then operations return MPI_ERR_REVOKED", needs_failures(test10)},
        {11, "test 8 with a rank dead in pending Ibarrier/Ibcast", needs_failures(test11)},
#else
        {6, "tests 1-5 with dead processes (root alive, root dead)", needs_failures(nullptr)},
        {7, "Allreduce with the root and others dead", needs_failures(nullptr)},
        {8, "Comm_split + Comm_free loop", on_live(split_free_test, "split/free")},
        {9, "shrink with dead processes, then Bcast", needs_failures(nullptr)},
        {10, "revoke, then operations return MPI_ERR_REVOKED", needs_failures(nullptr)},
        {11, "test 8 with a rank dead in pending Ibarrier/Ibcast", needs_failures(nullptr)},
#endif
    };
    int passed = 0, failed = 0, skipped = 0, nudged = 0;
    for (const Test &t : tests) {
        auto t0 = std::chrono::steady_clock::now();
        Outcome o = t.run();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        // Over the survivors only: MPI_COMM_WORLD holds the dead.
        int bits = settle(o);
        bool all_ok = bits & PASSED;
        // A test that a death it did not cause made fail is not a failure of the layer,
        // unless a call returned wrong data (a call that succeeds must be right, always).
        bool disturbed = !all_ok && (bits & DATA_RIGHT) && !(bits & NO_UNPLANNED);
        if (!o.ok) std::fprintf(stderr, "rank %d: test %d: %s\n", rank, t.k, o.why.c_str());
        bool skip = o.ok && o.why.rfind("SKIP", 0) == 0;
        if (skip) ++skipped;
        else if (all_ok) ++passed;
        else if (disturbed) ++nudged;
        else ++failed;
        if (live_rank == 0) {
            const char *why = o.ok ? "on another rank" : o.why.c_str();
            if (skip) std::printf("Test %d %s: %s\n", t.k, t.name, o.why.c_str());
            else if (all_ok) std::printf("Test %d %s: PASS (%.1f ms)\n", t.k, t.name, ms);
            else if (disturbed) std::printf("Test %d %s: DISTURBED by a death it did not cause: %s\n", t.k, t.name, why);
            else std::printf("Test %d %s: FAIL %s\n", t.k, t.name, why);
            std::fflush(stdout);
        }
    }
    // Free what the tests kept (see `graveyard`): on revoked communicators too, it must work.
    for (MPI_Comm c : {all, rev})
        if (c != MPI_COMM_NULL) graveyard.push_back(c);
    Outcome freed = pass();
    for (MPI_Comm &c : graveyard) {
        int rc = MPI_Comm_free(&c);
        if (rc != MPI_SUCCESS) {
            std::fprintf(stderr, "rank %d: Comm_free at the end returned %s\n", rank, class_name(error_class(rc)).c_str());
            freed = fail("Comm_free");
        }
    }
    int bits = settle(freed);
    bool bad_free = !(bits & PASSED) && (bits & NO_UNPLANNED);
    if (bad_free) ++failed;
    if (live_rank == 0) {
        if (bad_free) std::printf("FAIL: Comm_free of the communicators kept until the end\n");
        std::printf("%d passed, %d failed, %d skipped", passed, failed, skipped);
        if (nudged) std::printf(", %d disturbed by deaths the tests did not cause", nudged);
        std::printf("\n");
    }
    std::fflush(stdout);
    MPI_Comm_free(&live);
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
