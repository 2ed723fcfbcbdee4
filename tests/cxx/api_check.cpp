// api_check.cpp: MPIFT's handles in idiomatic C++ (containers, RAII, templates),
// built like tests/c/api_check.c: plain MPI, explicit headers, and include/compat.
#ifdef MPIFT_EXPLICIT_HEADERS
#include "MPI-FT.h"
#include "MPI-FT_redefine.h"
#else
#include <mpi.h>
#endif
#include <cstdio>
#include <map>
#include <numeric>
#include <vector>

namespace {

int rank = -1, failures = 0, checks = 0;

void check(bool ok, const char *what)
{
    ++checks;
    if (!ok) {
        ++failures;
        std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what);
    }
}

// An owning communicator, as C++ codes wrap them.
class Comm {
public:
    explicit Comm(MPI_Comm parent) { MPI_Comm_dup(parent, &c_); }
    ~Comm()
    {
        if (c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);
    }
    Comm(const Comm &) = delete;
    Comm &operator=(const Comm &) = delete;
    MPI_Comm get() const { return c_; }

private:
    MPI_Comm c_ = MPI_COMM_NULL;
};

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

template <typename T> T sum_all(T v, MPI_Comm comm)
{
    T out{};
    MPI_Allreduce(&v, &out, 1, mpi_type<T>(), MPI_SUM, comm);
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    {
        Comm a(MPI_COMM_WORLD), b(MPI_COMM_WORLD);
        std::map<MPI_Comm, const char *> names{{a.get(), "a"}, {b.get(), "b"}};
        check(names.size() == 2 && names[a.get()][0] == 'a', "handles as map keys");
        check(sum_all(1, a.get()) == size, "template Allreduce<int>");
        check(sum_all(0.5, b.get()) == 0.5 * size, "template Allreduce<double>");

        std::vector<MPI_Request> reqs(2 * size, MPI_REQUEST_NULL);
        std::vector<int> in(size, -1), out(size, rank);
        for (int p = 0; p < size; ++p) {
            MPI_Irecv(&in[p], 1, MPI_INT, p, 3, a.get(), &reqs[2 * p]);
            MPI_Isend(&out[p], 1, MPI_INT, p, 3, a.get(), &reqs[2 * p + 1]);
        }
        std::vector<MPI_Status> st(reqs.size());
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
        std::vector<int> expect(size);
        std::iota(expect.begin(), expect.end(), 0);
        check(in == expect, "all-to-all with std::vector<MPI_Request>");
        bool all_null = true;
        for (MPI_Request r : reqs) all_null = all_null && r == MPI_REQUEST_NULL;
        check(all_null, "requests are MPI_REQUEST_NULL after Waitall");
    }
#ifdef MPIFT_VERSION
    {
        Comm c(MPI_COMM_WORLD);
        int flag = 1;
        check(MPIX_Comm_agree(c.get(), &flag) == MPI_SUCCESS && flag == 1, "MPIX_Comm_agree from C++");
    }
#endif
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("api_check (C++): %d checks per rank, %d failures on %d ranks\n", checks, total, size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
