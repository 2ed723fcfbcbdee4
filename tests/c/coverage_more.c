/* coverage_more.c: the second half of the coverage check (tests/c/coverage_check.c):
 * communicators, attributes, error handlers, windows, files, dynamic processes and
 * the ULFM names. */
#include "coverage_check.h"

/* ---- communicators: constructors, queries, names, info ---- */
void communicators(MPI_Comm comm)
{
    int n = size, v, flag, len, i, even;
    MPI_Comm dup, idup, split, shared, created, grp, local, inter, merged, disc;
    MPI_Group g, eg, rg;
    MPI_Info info, used;
    MPI_Request r;
    MPI_Fint f;
    char name[MPI_MAX_OBJECT_NAME];
    int *evens = ints(n);

    MPI_Comm_dup_with_info(comm, MPI_INFO_NULL, &dup);
    MPI_Comm_compare(dup, comm, &v);
    CHECK(v == MPI_CONGRUENT, "Comm_dup_with_info/Comm_compare");
    MPI_Comm_idup(comm, &idup, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_size(idup, &v);
    MPI_Comm_rank(idup, &i);
    CHECK(v == n && i == rank, "Comm_idup");
    MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, idup);
    CHECK(v == n * (n - 1) / 2, "collective on an idup'ed communicator");
    MPI_Comm_free(&idup);
    MPI_Comm_split(comm, rank % 2, rank, &split);
    MPI_Comm_size(split, &v);
    CHECK(v == (n + 1 - rank % 2) / 2, "Comm_split");
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Comm_size(shared, &v);
    CHECK(v >= 1 && v <= n, "Comm_split_type");
    MPI_Comm_free(&shared);
    MPI_Comm_group(comm, &g);
    for (i = 0, even = 0; i < n; i += 2) evens[even++] = i;
    MPI_Group_incl(g, even, evens, &eg);
    MPI_Comm_create(comm, eg, &created);
    CHECK((rank % 2 == 0) == (created != MPI_COMM_NULL), "Comm_create");
    if (rank % 2 == 0) {
        MPI_Comm_create_group(comm, eg, 5, &grp);
        MPI_Comm_size(grp, &v);
        CHECK(v == even, "Comm_create_group");
        MPI_Barrier(grp);
        MPI_Comm_free(&grp);
        MPI_Comm_free(&created);
    }
    /* The groups after, so collectives on comm keep matching at every rank. */
    MPI_Barrier(comm);

    /* Intercommunicator between the even and the odd ranks (leaders: world 0 and 1). */
    MPI_Comm_split(comm, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, comm, rank % 2 == 0 ? 1 : 0, 77, &inter);
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_remote_size(inter, &v);
    CHECK(flag == 1 && v == (rank % 2 == 0 ? n / 2 : (n + 1) / 2), "Intercomm_create/test_inter/remote_size");
    MPI_Comm_remote_group(inter, &rg);
    MPI_Group_size(rg, &i);
    CHECK(i == v, "Comm_remote_group");
    MPI_Group_free(&rg);
    v = rank;
    MPI_Bcast(&v, 1, MPI_INT, 0, local); /* intracomm collective beside the intercomm */
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    MPI_Comm_size(merged, &v);
    MPI_Comm_rank(merged, &i);
    CHECK(v == n && i == (rank % 2) * ((n + 1) / 2) + rank / 2, "Intercomm_merge");
    MPI_Comm_test_inter(merged, &flag);
    CHECK(flag == 0, "merged communicator is an intracommunicator");
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);

    MPI_Comm_set_name(dup, "coverage-dup");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "coverage-dup") == 0 && len == 12, "Comm_set_name/get_name");
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
    MPI_Comm_set_info(dup, info);
    MPI_Comm_get_info(dup, &used);
    CHECK(used != MPI_INFO_NULL, "Comm_set_info/get_info");
    MPI_Info_free(&used);
    MPI_Info_free(&info);

    /* Fortran handles: the same MPIFT handle comes back; predefined and null too. */
    f = MPI_Comm_c2f(dup);
    CHECK(MPI_Comm_f2c(f) == dup, "Comm_c2f/f2c round trip");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "Comm_f2c(c2f(world))");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF, "Comm_f2c(c2f(self))");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "Comm_f2c(c2f(null))");

    /* A program may call the profiling names directly; they take the same handles. */
    PMPI_Comm_size(dup, &v);
    CHECK(v == n, "PMPI_Comm_size");

    /* Disconnect on an intracommunicator: collective, then the handle is null. */
    MPI_Comm_dup(comm, &disc);
    MPI_Comm_disconnect(&disc);
    CHECK(disc == MPI_COMM_NULL, "Comm_disconnect");
    MPI_Comm_get_parent(&disc);
    CHECK(disc == MPI_COMM_NULL, "Comm_get_parent in a process that was not spawned");

    MPI_Group_free(&eg);
    MPI_Group_free(&g);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    free(evens);
}

/* ---- attributes and keyvals: callbacks see the program's handles ---- */
static int copy_calls = 0, delete_calls = 0, extra_marker = 0;
static MPI_Comm copy_seen, delete_seen;
static int my_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    copy_calls++;
    copy_seen = oldcomm;
    CHECK(extra == &extra_marker, "copy callback gets extra_state");
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
/* A copy callback that fails: MPI_Comm_dup must fail too. */
static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}
static int my_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval;
    (void)val;
    delete_calls++;
    delete_seen = comm;
    CHECK(extra == &extra_marker, "delete callback gets extra_state");
    return MPI_SUCCESS;
}
/* Set on MPI_COMM_SELF: MPI_Finalize deletes it first, while MPI is usable. */
int self_deleted = 0;
static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int r = -1;
    (void)keyval;
    (void)extra;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    self_deleted = (comm == MPI_COMM_SELF && val == &self_deleted && r == rank) ? 1 : -1;
    return MPI_SUCCESS;
}

void attributes(MPI_Comm comm)
{
    int key, dupkey, nullkey, oldkey, selfkey, x = 5, flag, *p;
    MPI_Comm a, b, c;
    void *got;

    MPI_Comm_dup(comm, &a);
    MPI_Comm_create_keyval(my_copy, my_delete, &key, &extra_marker);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nullkey, NULL);
    MPI_Comm_set_attr(a, key, &x);
    MPI_Comm_set_attr(a, dupkey, &x);
    MPI_Comm_set_attr(a, nullkey, &x);
    MPI_Comm_get_attr(a, key, &p, &flag);
    CHECK(flag && p == &x, "Comm_get_attr");
    MPI_Comm_dup(a, &b);
    CHECK(copy_calls == 1 && copy_seen == a, "copy callback sees the program's handle");
    MPI_Comm_get_attr(b, key, &p, &flag);
    CHECK(flag && p == &x, "attribute copied by the program's copy function");
    MPI_Comm_get_attr(b, dupkey, &p, &flag);
    CHECK(flag && p == &x, "MPI_COMM_DUP_FN copies");
    MPI_Comm_get_attr(b, nullkey, &p, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    c = b;
    MPI_Comm_free(&b);
    CHECK(delete_calls == 1 && delete_seen == c, "delete callback on Comm_free sees the program's handle");
    MPI_Comm_delete_attr(a, key);
    CHECK(delete_calls == 2 && delete_seen == a, "delete callback on Comm_delete_attr");
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "Comm_free_keyval");
    MPI_Comm_free_keyval(&dupkey);
    MPI_Comm_free_keyval(&nullkey);

    /* The MPI-1 names (deprecated, still MPI-3.1). */
    MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &oldkey, NULL);
    MPI_Attr_put(a, oldkey, &x);
    MPI_Attr_get(a, oldkey, &p, &flag);
    CHECK(flag && p == &x, "Keyval_create/Attr_put/Attr_get");
    MPI_Attr_delete(a, oldkey);
    MPI_Attr_get(a, oldkey, &got, &flag);
    CHECK(!flag, "Attr_delete");
    MPI_Keyval_free(&oldkey);
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &oldkey, NULL);
    MPI_Keyval_free(&oldkey);

    /* A failing copy callback fails the dup; MPIFT then returns MPI_COMM_NULL
     * (as MPICH does; found with MPICH's test/mpi/attr/attrerr). */
    {
        int failkey, rc;
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &failkey, NULL);
        MPI_Comm_set_attr(a, failkey, &x);
        b = MPI_COMM_WORLD;
        rc = MPI_Comm_dup(a, &b);
        CHECK(rc != MPI_SUCCESS, "Comm_dup fails when a copy callback fails");
#ifdef MPIFT_MPI_FT_H
        CHECK(b == MPI_COMM_NULL, "a failed Comm_dup gives MPI_COMM_NULL");
#endif
        if (rc == MPI_SUCCESS && b != MPI_COMM_NULL)
            MPI_Comm_free(&b);
        MPI_Comm_delete_attr(a, failkey);
        MPI_Comm_free_keyval(&failkey);
    }

    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &selfkey, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, selfkey, &self_deleted);
    MPI_Comm_free(&a);
}

/* ---- error handlers ---- */
static int eh_calls = 0, eh_code = 0;
static MPI_Comm eh_comm;
static void my_errhandler(MPI_Comm *comm, int *code, ...)
{
    eh_calls++;
    eh_comm = *comm;
    eh_code = *code;
}

void errors(MPI_Comm comm)
{
    MPI_Comm d;
    MPI_Errhandler eh, got;
    int cls, len;
    char msg[MPI_MAX_ERROR_STRING];

    MPI_Comm_dup(comm, &d);
    MPI_Comm_create_errhandler(my_errhandler, &eh);
    MPI_Comm_set_errhandler(d, eh);
    MPI_Comm_get_errhandler(d, &got);
    CHECK(got == eh, "Comm_get_errhandler");
    MPI_Errhandler_free(&got);
    MPI_Comm_call_errhandler(d, MPI_ERR_OTHER);
    CHECK(eh_calls == 1 && eh_comm == d && eh_code == MPI_ERR_OTHER, "Comm_call_errhandler sees the handle");
    MPI_Error_class(MPI_ERR_OTHER, &cls);
    MPI_Error_string(MPI_ERR_OTHER, msg, &len);
    CHECK(cls == MPI_ERR_OTHER && len > 0, "Error_class/Error_string");
#ifdef MPIFT_VERSION
    /* Removed in MPI-3.0 (Open MPI 4.1 no longer declares them); MPIFT keeps them. */
    MPI_Errhandler_free(&eh);
    MPI_Errhandler_create(my_errhandler, &eh);
    MPI_Errhandler_set(d, eh);
    MPI_Errhandler_get(d, &got);
    CHECK(got == eh, "Errhandler_create/set/get");
    MPI_Errhandler_free(&got);
#endif
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&d);
}

/* ---- one-sided communication: windows on an MPIFT communicator, RMA requests ---- */
void one_sided(MPI_Comm comm)
{
    int left = left_of(rank), right = right_of(rank), *base = NULL, *shbase = NULL, local[4], v, res, gsize, ds;
    MPI_Win win, win2, shwin, dyn;
    MPI_Group g;
    MPI_Comm shared;
    MPI_Aint shsize;
    MPI_Request r;

    MPI_Win_allocate(4 * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, comm, &base, &win);
    base[0] = base[1] = base[2] = base[3] = -1;
    MPI_Win_get_group(win, &g);
    MPI_Group_size(g, &gsize);
    CHECK(gsize == size, "Win_allocate/Win_get_group");
    MPI_Group_free(&g);
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Barrier(comm);
    MPI_Rput(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    v = 1;
    MPI_Raccumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    v = 5;
    res = 0;
    MPI_Rget_accumulate(&v, 1, MPI_INT, &res, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_REPLACE, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(res == -1, "Rget_accumulate returns the old value");
    MPI_Win_flush_all(win);
    MPI_Barrier(comm);
    MPI_Win_sync(win);
    CHECK(base[0] == left && base[1] == 0 && base[2] == 5, "Rput/Raccumulate/Rget_accumulate at the target");
    v = -7;
    MPI_Rget(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v == rank, "Rget");
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);

    MPI_Win_create(local, 4 * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, comm, &win2);
    MPI_Win_free(&win2);
    MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &dyn);
    MPI_Win_free(&dyn);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Win_allocate_shared((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, shared, &shbase, &shwin);
    MPI_Win_shared_query(shwin, MPI_PROC_NULL, &shsize, &ds, &base);
    CHECK(shbase != NULL && ds == (int)sizeof(int), "Win_allocate_shared");
    MPI_Win_free(&shwin);
    MPI_Comm_free(&shared);
}

/* ---- I/O: a file opened on an MPIFT communicator, non-blocking requests ---- */
void io(MPI_Comm comm)
{
    char path[256];
    MPI_File fh, none;
    MPI_Request r;
    MPI_Status st;
    MPI_Group g;
    int v, got, n, gsize, rc, right = right_of(rank);
    MPI_Offset me = (MPI_Offset)rank * (MPI_Offset)sizeof(int), row = (MPI_Offset)size * (MPI_Offset)sizeof(int);

    if (rank == 0) snprintf(path, sizeof path, "/tmp/mpift-coverage-%ld.dat", (long)getpid());
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, comm);
    /* A file error goes to the file error handler (MPI_ERRORS_RETURN), not to the
     * communicator's: this must not abort although MPI_COMM_WORLD's is fatal. */
    rc = MPI_File_open(comm, "/nonexistent-dir/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &none);
    CHECK(rc != MPI_SUCCESS, "File_open error is returned");
    MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    MPI_File_get_group(fh, &g);
    MPI_Group_size(g, &gsize);
    CHECK(gsize == size, "File_open/File_get_group");
    MPI_Group_free(&g);
    v = rank;
    MPI_File_iwrite_at(fh, me, &v, 1, MPI_INT, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 1, "File_iwrite_at");
    v = rank + 100;
    MPI_File_iwrite_at_all(fh, row + me, &v, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_File_seek(fh, 2 * row + me, MPI_SEEK_SET);
    v = rank + 200;
    MPI_File_iwrite(fh, &v, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_File_seek(fh, 3 * row + me, MPI_SEEK_SET);
    v = rank + 300;
    MPI_File_iwrite_all(fh, &v, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_File_seek_shared(fh, 4 * row, MPI_SEEK_SET);
    MPI_File_iwrite_shared(fh, &v, 1, MPI_INT, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 1, "File_iwrite_shared");
    MPI_File_sync(fh);
    MPI_Barrier(comm);
    MPI_File_sync(fh);
    got = -1;
    MPI_File_iread_at(fh, (MPI_Offset)right * (MPI_Offset)sizeof(int), &got, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got == right, "File_iread_at");
    MPI_File_iread_at_all(fh, row + (MPI_Offset)right * (MPI_Offset)sizeof(int), &got, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got == right + 100, "File_iread_at_all");
    MPI_File_seek(fh, 2 * row + me, MPI_SEEK_SET);
    MPI_File_iread(fh, &got, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got == rank + 200, "File_iread");
    MPI_File_seek(fh, 3 * row + me, MPI_SEEK_SET);
    MPI_File_iread_all(fh, &got, 1, MPI_INT, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got == rank + 300, "File_iread_all");
    MPI_Barrier(comm);
    MPI_File_seek_shared(fh, 4 * row, MPI_SEEK_SET);
    MPI_File_iread_shared(fh, &got, 1, MPI_INT, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 1, "File_iread_shared");
    MPI_File_close(&fh);
}

/* ---- dynamic processes: run with MPIFT_TEST_DYNAMIC=1, else only compiled ---- */
static int wants(const char *what)
{
    const char *e = getenv("MPIFT_TEST_DYNAMIC");
    return e != NULL && (strcmp(e, "1") == 0 || strstr(e, what) != NULL);
}

void dynamic_processes(MPI_Comm comm, char *self_path, int run)
{
    MPI_Comm inter, half;
    char *child_argv[2], **argvs[2], *cmds[2], port[MPI_MAX_PORT_NAME];
    int errcodes[2], np[2], v, i, n;
    MPI_Info infos[2];

    if (!run) return;
    /* Spawn one child, then two with spawn_multiple; rank 0 talks to each. */
    if (!wants("spawn")) goto connect;
    child_argv[0] = (char *)"--child";
    child_argv[1] = NULL;
    MPI_Comm_spawn(self_path, child_argv, 1, MPI_INFO_NULL, 0, comm, &inter, errcodes);
    MPI_Comm_remote_size(inter, &n);
    CHECK(n == 1 && errcodes[0] == MPI_SUCCESS, "Comm_spawn");
    cmds[0] = cmds[1] = self_path;
    argvs[0] = argvs[1] = child_argv;
    np[0] = np[1] = 1;
    infos[0] = infos[1] = MPI_INFO_NULL;
    for (i = 0; i < 2; i++) {
        if (rank == 0)
            for (v = 0; v < n; v++) {
                int x = 40 + v, y = -1;
                MPI_Send(&x, 1, MPI_INT, v, 1, inter);
                MPI_Recv(&y, 1, MPI_INT, v, 2, inter, MPI_STATUS_IGNORE);
                CHECK(y == x + 1, "message round trip with a spawned process");
            }
        MPI_Comm_disconnect(&inter);
        CHECK(inter == MPI_COMM_NULL, "Comm_disconnect of a parent intercommunicator");
        if (i == 1) break;
        MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, comm, &inter, errcodes);
        MPI_Comm_remote_size(inter, &n);
        CHECK(n == 2, "Comm_spawn_multiple");
    }

    /* Connect the even to the odd ranks through a port. */
connect:
    if (!wants("connect")) goto join;
    MPI_Comm_split(comm, rank % 2, rank, &half);
    if (rank == 0) MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, comm);
    if (rank % 2 == 0)
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
    else
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
    MPI_Comm_remote_size(inter, &n);
    CHECK(n == (rank % 2 == 0 ? size / 2 : (size + 1) / 2), "Comm_accept/Comm_connect");
    MPI_Comm_disconnect(&inter);
    if (rank == 0) MPI_Close_port(port);
    MPI_Comm_free(&half);

    /* Join ranks 0 and 1 over a TCP socket on the loopback interface. */
join:
    if (wants("join") && rank < 2) {
        struct sockaddr_in addr;
        socklen_t len = sizeof addr;
        int fd = -1, lfd, p = 0;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (rank == 0) {
            lfd = socket(AF_INET, SOCK_STREAM, 0);
            bind(lfd, (struct sockaddr *)&addr, sizeof addr);
            listen(lfd, 1);
            getsockname(lfd, (struct sockaddr *)&addr, &len);
            p = ntohs(addr.sin_port);
            MPI_Send(&p, 1, MPI_INT, 1, 3, comm);
            fd = accept(lfd, NULL, NULL);
            close(lfd);
        } else {
            MPI_Recv(&p, 1, MPI_INT, 0, 3, comm, MPI_STATUS_IGNORE);
            addr.sin_port = htons((unsigned short)p);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            connect(fd, (struct sockaddr *)&addr, sizeof addr);
        }
        MPI_Comm_join(fd, &inter);
        CHECK(inter != MPI_COMM_NULL, "Comm_join");
        MPI_Comm_remote_size(inter, &n);
        CHECK(n == 1, "Comm_join remote size");
        MPI_Comm_disconnect(&inter);
        close(fd);
    }
}

/* The spawned side: answer the parent, disconnect. */
int spawned_child(void)
{
    MPI_Comm parent, again;
    int r, x = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_get_parent(&again);
    if (parent == MPI_COMM_NULL || again != parent) {
        fprintf(stderr, "spawned child %d: no parent or a different handle each time\n", r);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Recv(&x, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
    x++;
    MPI_Send(&x, 1, MPI_INT, 0, 2, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

#ifdef MPIFT_VERSION
/* ---- the ULFM names, failure-free (every generation's spelling) ---- */
void ulfm_names(MPI_Comm comm)
{
    MPI_Comm d, s1, s2, s3;
    MPI_Group g;
    MPI_Request r;
    int flag = 1, n;

    MPI_Comm_dup(comm, &d);
    MPIX_Comm_agree(d, &flag);
    MPI_Comm_agree(d, &flag);
    MPIX_Comm_iagree(d, &flag, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_iagree(d, &flag, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(flag == 1, "agree/iagree");
    MPIX_Comm_failure_ack(d);
    MPI_Comm_failure_ack(d);
    MPIX_Comm_failure_get_acked(d, &g);
    MPI_Group_free(&g);
    MPI_Comm_failure_get_acked(d, &g);
    MPI_Group_free(&g);
    MPIX_Comm_get_failed(d, &g);
    MPI_Group_free(&g);
    MPI_Comm_get_failed(d, &g);
    MPI_Group_size(g, &n);
    MPI_Group_free(&g);
    CHECK(n == 0, "get_failed");
    MPIX_Comm_ack_failed(d, 0, &n);
    MPI_Comm_ack_failed(d, 0, &n);
    MPIX_Comm_shrink(d, &s1);
    MPI_Comm_shrink(d, &s2);
    MPIX_Comm_ishrink(d, &s3, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_free(&s3);
    MPI_Comm_ishrink(d, &s3, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_size(s3, &n);
    CHECK(n == size, "shrink/ishrink without failures");
    MPI_Comm_free(&s3);
    MPI_Comm_free(&s2);
    MPI_Comm_free(&s1);
    MPIX_Comm_is_revoked(d, &flag);
    CHECK(flag == 0, "is_revoked");
    /* Everyone has looked before anyone revokes. On `comm`, not `d`: a barrier on d
     * may still be returning at a slow rank when a fast one revokes d, and MPIFT then
     * reports REVOKED there (ULFM allows it). */
    MPI_Barrier(comm);
    MPI_Comm_revoke(d);
    MPI_Comm_is_revoked(d, &flag);
    CHECK(flag == 1, "revoke");
    MPI_Comm_free(&d);
    /* Newly covered calls on a revoked communicator: REVOKED, local ones work. */
    MPI_Comm_dup(comm, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Barrier(d);
    MPIX_Comm_revoke(d);
    {
        int x = rank, got, rc;
        MPI_Message m;
        MPI_Win w;
        MPI_Group wg;
        MPI_Comm nc;
        MPI_Request rq;
        char pk[16];
        rc = MPI_Sendrecv_replace(&x, 1, MPI_INT, right_of(rank), 1, left_of(rank), 1, d, MPI_STATUS_IGNORE);
        CHECK(rc == MPIX_ERR_REVOKED, "Sendrecv_replace on a revoked communicator");
        rc = MPI_Improbe(MPI_ANY_SOURCE, 1, d, &flag, &m, MPI_STATUS_IGNORE);
        CHECK(rc == MPIX_ERR_REVOKED, "Improbe on a revoked communicator");
        rc = MPI_Issend(&x, 1, MPI_INT, right_of(rank), 1, d, &rq);
        CHECK(rc == MPIX_ERR_REVOKED, "Issend on a revoked communicator");
        rc = MPI_Comm_idup(d, &nc, &rq);
        CHECK(rc == MPIX_ERR_REVOKED, "Comm_idup on a revoked communicator");
        MPI_Comm_group(d, &wg);
        rc = MPI_Comm_create_group(d, wg, 3, &nc);
        CHECK(rc == MPIX_ERR_REVOKED, "Comm_create_group on a revoked communicator");
        MPI_Group_free(&wg);
        rc = MPI_Win_create(&x, (MPI_Aint)sizeof x, 1, MPI_INFO_NULL, d, &w);
        CHECK(rc == MPIX_ERR_REVOKED, "Win_create on a revoked communicator");
        got = 0;
        rc = MPI_Pack(&x, 1, MPI_INT, pk, (int)sizeof pk, &got, d);
        CHECK(rc == MPI_SUCCESS && got > 0, "Pack (local) works on a revoked communicator");
        rc = MPI_Comm_disconnect(&d);
        CHECK(rc == MPI_SUCCESS && d == MPI_COMM_NULL, "Comm_disconnect of a revoked communicator");
    }
}
#endif

