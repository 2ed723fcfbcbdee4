//! Communicators and groups: constructors, free, rank and size, intercommunicators, attributes and keyvals, error handlers, process topologies, dynamic processes.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;

/// `MPI_Comm_get_parent`.
pub fn get_parent(parent: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_get_parent(parent) }
}

/// `MPI_Comm_split`.
pub fn split(comm: crate::transport::MPI_Comm, color: c_int, key: c_int, newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a communicator handle, two values and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_split(comm, color, key, newcomm) }
}

/// `MPI_Comm_dup`.
pub fn dup(comm: crate::transport::MPI_Comm, newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a communicator handle and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_dup(comm, newcomm) }
}

/// `MPI_Comm_set_errhandler`.
pub fn set_errhandler(comm: crate::transport::MPI_Comm, errhandler: crate::transport::MPI_Errhandler) -> c_int {
    // SAFETY: two handles, passed by value.
    unsafe { mpi::MPI_Comm_set_errhandler(comm, errhandler) }
}

/// `MPI_Comm_spawn`.
///
/// # Safety
/// `command` is a NUL-terminated string, `argv` `MPI_ARGV_NULL` or a
/// NULL-terminated array of NUL-terminated strings, and `errcodes`
/// `MPI_ERRCODES_IGNORE` or room for `maxprocs` ints (MPI-3.1 §10.3.2), all
/// valid for the call (significant at the root only).
pub unsafe fn spawn(
    command: *const std::os::raw::c_char,
    argv: *mut *mut std::os::raw::c_char,
    maxprocs: c_int,
    info: crate::transport::MPI_Info,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    intercomm: &mut crate::transport::MPI_Comm,
    errcodes: *mut c_int,
) -> c_int {
    mpi::MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes)
}

/// `MPI_Comm_spawn_multiple`.
///
/// # Safety
/// `commands`, `argvs`, `maxprocs` and `infos` are arrays of `count` entries as
/// MPI-3.1 §10.3.3 describes them (each command NUL-terminated, each argv
/// `MPI_ARGV_NULL` or NULL-terminated; `argvs` may be `MPI_ARGVS_NULL`), and
/// `errcodes` `MPI_ERRCODES_IGNORE` or room for the sum of `maxprocs` ints, all
/// valid for the call (significant at the root only).
pub unsafe fn spawn_multiple(
    count: c_int,
    commands: *mut *mut std::os::raw::c_char,
    argvs: *mut *mut *mut std::os::raw::c_char,
    maxprocs: *const c_int,
    infos: *const crate::transport::MPI_Info,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    intercomm: &mut crate::transport::MPI_Comm,
    errcodes: *mut c_int,
) -> c_int {
    mpi::MPI_Comm_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes)
}

/// `MPI_Intercomm_create`.
pub fn intercomm_create(
    local: crate::transport::MPI_Comm,
    local_leader: c_int,
    peer: crate::transport::MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    // SAFETY: communicator handles, values and an out-handle the caller owns.
    unsafe { mpi::MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm) }
}

/// `MPI_Comm_free`.
pub fn free(comm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: an in-out handle the caller owns.
    unsafe { mpi::MPI_Comm_free(comm) }
}

/// `MPI_Comm_group`.
pub fn group(comm: crate::transport::MPI_Comm, group: &mut crate::transport::MPI_Group) -> c_int {
    // SAFETY: a communicator handle and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_group(comm, group) }
}

/// `MPI_Group_incl`: the group of the ranks in `ranks` (its length is `n`).
pub fn group_incl(group: crate::transport::MPI_Group, ranks: &[c_int], newgroup: &mut crate::transport::MPI_Group) -> c_int {
    // SAFETY: `ranks` is a live slice of `ranks.len()` ints, only read; an out-handle the caller owns.
    unsafe { mpi::MPI_Group_incl(group, ranks.len() as c_int, ranks.as_ptr(), newgroup) }
}

/// `MPI_Group_range_incl`: the group of the rank triplets in `ranges` (its length is `n`).
pub fn group_range_incl(group: crate::transport::MPI_Group, ranges: &mut [[c_int; 3]], newgroup: &mut crate::transport::MPI_Group) -> c_int {
    // SAFETY: `ranges` is a live slice of `ranges.len()` triplets; an out-handle the caller owns.
    unsafe { mpi::MPI_Group_range_incl(group, ranges.len() as c_int, ranges.as_mut_ptr(), newgroup) }
}

/// `MPI_Comm_create_group`.
pub fn create_group(comm: crate::transport::MPI_Comm, group: crate::transport::MPI_Group, tag: c_int, newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: handles, a value and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_create_group(comm, group, tag, newcomm) }
}

/// `MPI_Group_free`.
pub fn group_free(group: &mut crate::transport::MPI_Group) -> c_int {
    // SAFETY: an in-out handle the caller owns.
    unsafe { mpi::MPI_Group_free(group) }
}

/// `MPI_Comm_create_keyval`, with the host's callback signatures (they get the
/// host's communicator).
///
/// # Safety
/// `copy` and `delete` must be sound to call by the host, for as long as the
/// keyval has attributes, with the `extra_state` given here (which the host
/// passes back to them unread).
pub unsafe fn create_keyval(
    copy: unsafe extern "C" fn(crate::transport::MPI_Comm, c_int, *mut std::os::raw::c_void, *mut std::os::raw::c_void, *mut std::os::raw::c_void, *mut c_int) -> c_int,
    delete: unsafe extern "C" fn(crate::transport::MPI_Comm, c_int, *mut std::os::raw::c_void, *mut std::os::raw::c_void) -> c_int,
    keyval: &mut c_int,
    extra_state: *mut std::os::raw::c_void,
) -> c_int {
    mpi::MPI_Comm_create_keyval(Some(copy), Some(delete), keyval, extra_state)
}

/// `MPI_Comm_free_keyval`.
pub fn free_keyval(keyval: &mut c_int) -> c_int {
    // SAFETY: an in-out int the caller owns.
    unsafe { mpi::MPI_Comm_free_keyval(keyval) }
}

/// `MPI_Comm_set_attr`. The host stores `val` as an opaque value and never
/// dereferences it (the keyval's callbacks may).
pub fn set_attr(comm: crate::transport::MPI_Comm, keyval: c_int, val: *mut std::os::raw::c_void) -> c_int {
    // SAFETY: a handle and two values; the host keeps `val` without reading through it.
    unsafe { mpi::MPI_Comm_set_attr(comm, keyval, val) }
}

/// `MPI_Comm_get_attr`.
///
/// # Safety
/// `val` has room for a pointer (the attribute's value) and `flag` for an int,
/// both valid for writes for the call.
pub unsafe fn get_attr(comm: crate::transport::MPI_Comm, keyval: c_int, val: *mut std::os::raw::c_void, flag: *mut c_int) -> c_int {
    mpi::MPI_Comm_get_attr(comm, keyval, val, flag)
}

/// `MPI_Comm_delete_attr` (runs the keyval's delete callback).
pub fn delete_attr(comm: crate::transport::MPI_Comm, keyval: c_int) -> c_int {
    // SAFETY: a handle and a value.
    unsafe { mpi::MPI_Comm_delete_attr(comm, keyval) }
}

/// `MPI_Comm_join`.
pub fn join(fd: c_int, intercomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a value and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_join(fd, intercomm) }
}

/// `MPI_Comm_test_inter`.
pub fn test_inter(comm: crate::transport::MPI_Comm, flag: &mut c_int) -> c_int {
    // SAFETY: a handle and an out-int the caller owns.
    unsafe { mpi::MPI_Comm_test_inter(comm, flag) }
}

/// `MPI_Comm_disconnect`.
pub fn disconnect(comm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: an in-out handle the caller owns.
    unsafe { mpi::MPI_Comm_disconnect(comm) }
}

/// `MPI_Comm_idup`.
///
/// # Safety
/// MPI-3.1 §6.4.2 lets the host set `*newcomm` at any time until the request
/// completes: the caller keeps `newcomm` valid until then, or relies on its host
/// setting it before returning (MPICH and Open MPI both do).
pub unsafe fn idup(comm: crate::transport::MPI_Comm, newcomm: &mut crate::transport::MPI_Comm, req: &mut crate::transport::MPI_Request) -> c_int {
    mpi::MPI_Comm_idup(comm, newcomm, req)
}

/// `MPI_Group_size`.
pub fn group_size(group: crate::transport::MPI_Group, size: &mut c_int) -> c_int {
    // SAFETY: a group handle and an int out the caller owns.
    unsafe { mpi::MPI_Group_size(group, size) }
}

/// `MPI_Group_translate_ranks`: `ranks1.len()` ranks of `group1` into `ranks2`
/// (which must be at least as long; panics otherwise).
pub fn group_translate_ranks(group1: crate::transport::MPI_Group, ranks1: &[c_int], group2: crate::transport::MPI_Group, ranks2: &mut [c_int]) -> c_int {
    assert!(ranks2.len() >= ranks1.len(), "group_translate_ranks: output shorter than input");
    // SAFETY: `ranks1` is a live slice, only read; `ranks2` has room for `ranks1.len()` ints (asserted).
    unsafe { mpi::MPI_Group_translate_ranks(group1, ranks1.len() as c_int, ranks1.as_ptr(), group2, ranks2.as_mut_ptr()) }
}

/// `MPI_Comm_get_errhandler`.
pub fn get_errhandler(comm: crate::transport::MPI_Comm, errhandler: &mut crate::transport::MPI_Errhandler) -> c_int {
    // SAFETY: a communicator handle and an out-handle that is a reference.
    unsafe { mpi::MPI_Comm_get_errhandler(comm, errhandler) }
}

/// `MPI_Errhandler_free`.
pub fn errhandler_free(errhandler: &mut crate::transport::MPI_Errhandler) -> c_int {
    // SAFETY: an in-out handle that is a reference.
    unsafe { mpi::MPI_Errhandler_free(errhandler) }
}

/// `MPI_Comm_rank`.
pub fn rank(comm: crate::transport::MPI_Comm, rank: &mut c_int) -> c_int {
    // SAFETY: a communicator handle and an int out the caller owns.
    unsafe { mpi::MPI_Comm_rank(comm, rank) }
}

/// `MPI_Comm_remote_group`.
pub fn remote_group(comm: crate::transport::MPI_Comm, group: &mut crate::transport::MPI_Group) -> c_int {
    // SAFETY: a communicator handle and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_remote_group(comm, group) }
}

// ---- dead-rank joins (engine::join::join, engine::join::topo) and engine::colls::describe ----

/// `MPI_Intercomm_merge`.
pub fn intercomm_merge(intercomm: crate::transport::MPI_Comm, high: c_int, newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a communicator handle, a value and an out-handle the caller owns.
    unsafe { mpi::MPI_Intercomm_merge(intercomm, high, newcomm) }
}

/// `MPI_Comm_split_type`.
pub fn split_type(
    comm: crate::transport::MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: crate::transport::MPI_Info,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    // SAFETY: handles, values and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_split_type(comm, split_type, key, info, newcomm) }
}

/// `MPI_Comm_create`.
pub fn create(comm: crate::transport::MPI_Comm, group: crate::transport::MPI_Group, newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a communicator and a group handle and an out-handle the caller owns.
    unsafe { mpi::MPI_Comm_create(comm, group, newcomm) }
}

/// `MPI_Cart_create`: the host reads `ndims` entries of `dims` and `periods`
/// (panics if either is shorter).
pub fn cart_create(
    comm: crate::transport::MPI_Comm,
    ndims: c_int,
    dims: &[c_int],
    periods: &[c_int],
    reorder: c_int,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    let n = ndims.max(0) as usize;
    assert!(dims.len() >= n && periods.len() >= n, "cart_create: fewer dims or periods than ndims");
    // SAFETY: `dims` and `periods` are live slices of at least `ndims` ints
    // (asserted), only read; an out-handle the caller owns.
    unsafe { mpi::MPI_Cart_create(comm, ndims, dims.as_ptr(), periods.as_ptr(), reorder, newcomm) }
}

/// `MPI_Cart_sub`.
///
/// # Safety
/// `remain` has at least one entry per dimension of `comm`'s Cartesian topology
/// (the host reads that many; the length is not passed).
pub unsafe fn cart_sub(comm: crate::transport::MPI_Comm, remain: &[c_int], newcomm: &mut crate::transport::MPI_Comm) -> c_int {
    mpi::MPI_Cart_sub(comm, remain.as_ptr(), newcomm)
}

/// `MPI_Topo_test`.
pub fn topo_test(comm: crate::transport::MPI_Comm, kind: &mut c_int) -> c_int {
    // SAFETY: a communicator handle and an int out the caller owns.
    unsafe { mpi::MPI_Topo_test(comm, kind) }
}

/// `MPI_Cartdim_get`.
pub fn cartdim_get(comm: crate::transport::MPI_Comm, ndims: &mut c_int) -> c_int {
    // SAFETY: a communicator handle and an int out the caller owns.
    unsafe { mpi::MPI_Cartdim_get(comm, ndims) }
}

/// `MPI_Cart_shift`.
pub fn cart_shift(comm: crate::transport::MPI_Comm, direction: c_int, disp: c_int, source: &mut c_int, dest: &mut c_int) -> c_int {
    // SAFETY: a communicator handle, values and two int outs the caller owns.
    unsafe { mpi::MPI_Cart_shift(comm, direction, disp, source, dest) }
}

/// `MPI_Graph_neighbors_count`.
pub fn graph_neighbors_count(comm: crate::transport::MPI_Comm, rank: c_int, nneighbors: &mut c_int) -> c_int {
    // SAFETY: a communicator handle, a value and an int out the caller owns.
    unsafe { mpi::MPI_Graph_neighbors_count(comm, rank, nneighbors) }
}

/// `MPI_Graph_neighbors`: at most `neighbors.len()` neighbors of `rank`.
pub fn graph_neighbors(comm: crate::transport::MPI_Comm, rank: c_int, neighbors: &mut [c_int]) -> c_int {
    // SAFETY: the host writes at most `maxneighbors` = `neighbors.len()` ints
    // into the live slice.
    unsafe { mpi::MPI_Graph_neighbors(comm, rank, neighbors.len() as c_int, neighbors.as_mut_ptr()) }
}

/// `MPI_Dist_graph_neighbors_count`.
pub fn dist_graph_neighbors_count(comm: crate::transport::MPI_Comm, indegree: &mut c_int, outdegree: &mut c_int, weighted: &mut c_int) -> c_int {
    // SAFETY: a communicator handle and three int outs the caller owns.
    unsafe { mpi::MPI_Dist_graph_neighbors_count(comm, indegree, outdegree, weighted) }
}

/// `MPI_Dist_graph_neighbors`: at most `sources.len()` in-neighbors and
/// `destinations.len()` out-neighbors (each weight slice at least as long as its
/// list; panics otherwise).
pub fn dist_graph_neighbors(
    comm: crate::transport::MPI_Comm,
    sources: &mut [c_int],
    sourceweights: &mut [c_int],
    destinations: &mut [c_int],
    destweights: &mut [c_int],
) -> c_int {
    assert!(
        sourceweights.len() >= sources.len() && destweights.len() >= destinations.len(),
        "dist_graph_neighbors: weight slices shorter than the neighbor slices"
    );
    let (maxin, maxout) = (sources.len() as c_int, destinations.len() as c_int);
    // SAFETY: the host writes at most `maxin` entries into `sources` and
    // `sourceweights` and `maxout` into `destinations` and `destweights`, all
    // live slices at least that long (asserted).
    unsafe {
        mpi::MPI_Dist_graph_neighbors(
            comm,
            maxin,
            sources.as_mut_ptr(),
            sourceweights.as_mut_ptr(),
            maxout,
            destinations.as_mut_ptr(),
            destweights.as_mut_ptr(),
        )
    }
}

/// `MPI_Graph_create`: the host reads `nnodes` entries of `index` and
/// `index[nnodes - 1]` of `edges` (panics if either is shorter).
pub fn graph_create(
    comm: crate::transport::MPI_Comm,
    nnodes: c_int,
    index: &[c_int],
    edges: &[c_int],
    reorder: c_int,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    let n = nnodes.max(0) as usize;
    assert!(index.len() >= n, "graph_create: index shorter than nnodes");
    let nedges = if n == 0 { 0 } else { index[n - 1].max(0) as usize };
    assert!(edges.len() >= nedges, "graph_create: edges shorter than index says");
    // SAFETY: `index` and `edges` are live slices at least as long as the host
    // reads (asserted), only read; an out-handle the caller owns.
    unsafe { mpi::MPI_Graph_create(comm, nnodes, index.as_ptr(), edges.as_ptr(), reorder, newcomm) }
}

/// `MPI_Dist_graph_create`.
///
/// # Safety
/// `sources` and `degrees` hold `n` ints, `destinations` the sum of `degrees`,
/// and `weights` is `MPI_UNWEIGHTED`, `MPI_WEIGHTS_EMPTY` or as long as
/// `destinations`; all stay valid for the call.
pub unsafe fn dist_graph_create(
    comm: crate::transport::MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights: *const c_int,
    info: crate::transport::MPI_Info,
    reorder: c_int,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm)
}

/// `MPI_Dist_graph_create_adjacent`: the in- and out-degrees are the lengths of
/// `sources` and `destinations`.
///
/// # Safety
/// Each weight pointer is `MPI_UNWEIGHTED`, `MPI_WEIGHTS_EMPTY` or holds as
/// many ints as its neighbor list, valid for the call.
pub unsafe fn dist_graph_create_adjacent(
    comm: crate::transport::MPI_Comm,
    sources: &[c_int],
    sourceweights: *const c_int,
    destinations: &[c_int],
    destweights: *const c_int,
    info: crate::transport::MPI_Info,
    reorder: c_int,
    newcomm: &mut crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Dist_graph_create_adjacent(
        comm,
        sources.len() as c_int,
        sources.as_ptr(),
        sourceweights,
        destinations.len() as c_int,
        destinations.as_ptr(),
        destweights,
        info,
        reorder,
        newcomm,
    )
}
