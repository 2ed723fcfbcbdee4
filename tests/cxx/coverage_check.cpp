// coverage_check.cpp: the C coverage check (tests/c/coverage_check.c and
// coverage_more.c) compiled as C++, so every redirected function is called from C++
// too, plus what C++ programs do with MPIFT's handles: captureless lambdas as
// attribute and generalized-request callbacks, handles in standard containers and
// as map keys, an owning communicator class. Starts with MPI_Init (the C program
// with MPI_Init_thread). Built like tests/cxx/api_check.cpp, -Wall -Wextra -Werror.
#define COVERAGE_CHECK_CXX 1
#include "../c/coverage_check.c"
#include "../c/coverage_more.c"

#include <map>
#include <set>
#include <vector>

namespace {

// An owning communicator, as C++ codes wrap them; made non-blocking.
class OwnedComm {
public:
    explicit OwnedComm(MPI_Comm parent)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Comm_idup(parent, &c_, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    ~OwnedComm()
    {
        if (c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);
    }
    OwnedComm(const OwnedComm &) = delete;
    OwnedComm &operator=(const OwnedComm &) = delete;
    MPI_Comm get() const { return c_; }

private:
    MPI_Comm c_ = MPI_COMM_NULL;
};

void cxx_checks(MPI_Comm comm)
{
    OwnedComm a(comm), b(comm);
    std::map<MPI_Comm, int> ids{{a.get(), 1}, {b.get(), 2}, {MPI_COMM_WORLD, 3}};
    CHECK(ids.size() == 3 && ids[a.get()] == 1, "communicators as std::map keys");

    // Attribute callbacks as lambdas; the copy callback records the handle it sees.
    MPI_Comm seen = MPI_COMM_NULL;
    int key = MPI_KEYVAL_INVALID, value = 9, flag = 0;
    int *p = nullptr;
    MPI_Comm_create_keyval(
        [](MPI_Comm old, int, void *extra, void *in, void *out, int *f) -> int {
            *static_cast<MPI_Comm *>(extra) = old;
            *static_cast<void **>(out) = in;
            *f = 1;
            return MPI_SUCCESS;
        },
        [](MPI_Comm, int, void *, void *) -> int { return MPI_SUCCESS; }, &key, &seen);
    MPI_Comm_set_attr(a.get(), key, &value);
    {
        OwnedComm c(a.get());
        MPI_Comm_get_attr(c.get(), key, &p, &flag);
        CHECK(seen == a.get() && flag && p == &value, "lambda copy callback sees the program's handle");
    }
    MPI_Comm_free_keyval(&key);

    // Persistent requests in a std::vector, started and completed together.
    int left = left_of(rank), right = right_of(rank), out = rank, in = -1;
    std::vector<MPI_Request> reqs(2, MPI_REQUEST_NULL);
    MPI_Recv_init(&in, 1, MPI_INT, left, 5, b.get(), &reqs[0]);
    MPI_Send_init(&out, 1, MPI_INT, right, 5, b.get(), &reqs[1]);
    std::set<MPI_Request> distinct(reqs.begin(), reqs.end());
    CHECK(distinct.size() == 2 && !distinct.count(MPI_REQUEST_NULL), "requests in a std::set");
    MPI_Startall(static_cast<int>(reqs.size()), reqs.data());
    std::vector<MPI_Status> st(reqs.size());
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
    CHECK(in == left && st[0].MPI_SOURCE == left, "std::vector<MPI_Request> with Startall/Waitall");
    for (MPI_Request &r : reqs) MPI_Request_free(&r);

    // A generalized request with lambda callbacks, completed at once.
    int state = 0;
    MPI_Request g = MPI_REQUEST_NULL;
    MPI_Grequest_start(
        [](void *s, MPI_Status *status) -> int {
            *static_cast<int *>(s) |= 1;
            MPI_Status_set_elements(status, MPI_BYTE, 0);
            MPI_Status_set_cancelled(status, 0);
            return MPI_SUCCESS;
        },
        [](void *s) -> int {
            *static_cast<int *>(s) |= 2;
            return MPI_SUCCESS;
        },
        [](void *, int) -> int { return MPI_SUCCESS; }, &state, &g);
    MPI_Grequest_complete(g);
    MPI_Wait(&g, MPI_STATUS_IGNORE);
    CHECK(g == MPI_REQUEST_NULL && state == 3, "generalized request with lambda callbacks");
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return spawned_child();
    return run_all(argv[0], cxx_checks);
}
