//! The function table, the generated headers and the list of functions the
//! product promises stay consistent with each other.

#[path = "../build/codegen.rs"]
#[allow(dead_code)]
mod codegen;

use std::collections::HashSet;
use std::fs;

fn table() -> Vec<codegen::Function> {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/ffi/mpi_functions.tbl")).unwrap();
    codegen::parse_table(&text).unwrap()
}

fn not_covered() -> Vec<(String, Vec<String>)> {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/ffi/mpi4_not_covered.tbl")).unwrap();
    codegen::parse_not_covered(&text).unwrap()
}

fn header(name: &str) -> String {
    fs::read_to_string(format!("{}/include/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn names_are_unique() {
    let mut seen = HashSet::new();
    for f in table() {
        for n in std::iter::once(f.name.clone()).chain(f.aliases.clone()) {
            assert!(seen.insert(n.clone()), "{n} appears twice");
        }
    }
}

#[test]
fn checked_in_redefine_header_is_what_the_table_generates() {
    assert_eq!(header("MPI-FT_redefine.h"), codegen::redefine_header(&table(), &not_covered()), "run `make` and commit include/");
}

#[test]
fn mpi4_names_are_not_also_redirected() {
    let redirected: HashSet<String> = table().into_iter().flat_map(|f| std::iter::once(f.name).chain(f.aliases)).collect();
    let groups = not_covered();
    assert!(groups.len() >= 5 && groups.iter().all(|(r, n)| r.starts_with("MPI-4.0") && !n.is_empty()));
    for (_, names) in groups {
        for n in names {
            assert!(!redirected.contains(&n), "{n} is both redirected and listed as not covered");
        }
    }
}

#[test]
fn every_wrapper_is_declared_in_mpi_ft_h() {
    let h = header("MPI-FT.h");
    for f in table() {
        // Handle conversions return a handle; MPIFT's handles replace the real ones.
        let ret = match f.ret.as_str() {
            "MPI_Comm" | "MPI_Request" => format!("Sim_FT_{}", f.ret),
            other => other.to_string(),
        };
        assert!(h.contains(&format!("{ret} Sim_FT_{}(", f.name)), "Sim_FT_{} missing from MPI-FT.h", f.name);
    }
}

/// The functions the foundation promises (issue: product foundation, item 5).
#[test]
fn promised_functions_are_redirected() {
    let promised = "Init Init_thread Initialized Finalize Finalized Abort Comm_rank Comm_size Comm_dup \
        Comm_split Comm_create Comm_create_group Comm_free Comm_group Comm_compare Comm_set_errhandler \
        Comm_get_errhandler Comm_create_errhandler Comm_set_name Comm_get_name Comm_get_attr Comm_set_attr \
        Intercomm_create Send Ssend Recv Isend Issend Irecv Sendrecv Probe Iprobe Test Wait Testall \
        Waitall Testany Waitany Testsome Waitsome Request_free Cancel Barrier Bcast Reduce Allreduce Gather \
        Gatherv Scatter Scatterv Allgather Alltoall Ibarrier Ibcast Ireduce Iallreduce Cart_create \
        Cart_coords Cart_rank Error_string Error_class";
    let ulfm = "revoke is_revoked shrink ishrink agree iagree failure_ack failure_get_acked get_failed ack_failed";
    let redefine = header("MPI-FT_redefine.h");
    let mut names: Vec<String> = promised.split_whitespace().map(|n| format!("MPI_{n}")).collect();
    for u in ulfm.split_whitespace() {
        names.push(format!("MPIX_Comm_{u}"));
        names.push(format!("MPI_Comm_{u}"));
    }
    for n in names {
        assert!(redefine.contains(&format!("#define {n} Sim_FT_")), "{n} is not redirected");
    }
}

#[test]
fn generic_wrappers_convert_handles_and_run_hooks() {
    let f = table().into_iter().find(|f| f.name == "MPI_Comm_split").unwrap();
    let src = codegen::rust_wrappers(&[f]);
    assert!(src.contains("args::comm_arg(comm)?"));
    // A constructor is a collective: described, logged, checked for failures after.
    assert!(src.contains("crate::engine::colls::describe::MPI_Comm_split(&comm_r, color, key)"));
    assert!(src.contains("hooks::coll_enter(&comm_r, &desc)?"));
    assert!(src.contains(
        "if let Err(failure) = hooks::comm_new_leave(&comm_r, rc, &mut [&mut newcomm_r]) { if !newcomm.is_null() { *newcomm = std::ptr::null_mut(); } return Err(failure); }"
    ));
    assert!(src.contains("*newcomm = comm::adopt(newcomm_r, &comm_r, child_id)"));
}

#[test]
fn profiling_names_reach_the_same_wrappers() {
    let redefine = header("MPI-FT_redefine.h");
    for f in table() {
        for n in std::iter::once(&f.name).chain(f.aliases.iter()) {
            assert!(redefine.contains(&format!("#define P{n} Sim_FT_{}\n", f.name)), "P{n} is not redirected");
        }
    }
}

#[test]
fn callback_types_and_predefined_callbacks_are_mpifts() {
    let redefine = header("MPI-FT_redefine.h");
    for (name, to) in [
        ("MPI_Comm_copy_attr_function", "Sim_FT_MPI_Comm_copy_attr_function"),
        ("MPI_Comm_delete_attr_function", "Sim_FT_MPI_Comm_delete_attr_function"),
        ("MPI_Copy_function", "Sim_FT_MPI_Comm_copy_attr_function"),
        ("MPI_COMM_DUP_FN", "Sim_FT_MPI_COMM_DUP_FN"),
        ("MPI_NULL_DELETE_FN", "Sim_FT_MPI_COMM_NULL_DELETE_FN"),
    ] {
        assert!(redefine.contains(&format!("#define {name} {to}\n")), "{name}");
    }
    let h = header("MPI-FT.h");
    assert!(h.contains("typedef int Sim_FT_MPI_Comm_copy_attr_function(Sim_FT_MPI_Comm,"));
    assert!(h.contains("int Sim_FT_MPI_COMM_DUP_FN(Sim_FT_MPI_Comm oldcomm,"));
}

#[test]
fn noft_wrappers_pass_through_and_wrap_requests() {
    let t = table();
    let get = |n: &str| codegen::rust_wrappers(&[t.iter().find(|f| f.name == n).unwrap().clone()]);
    let win = get("MPI_Win_create");
    assert!(win.contains("hooks::unjoinable_enter(&comm_r)?") && win.contains("boundary::run(\"MPI_Win_create\""));
    let file = get("MPI_File_iread");
    assert!(file.contains("boundary::run_raw(") && file.contains("*request = request::adopt_plain(request_r)"));
    assert!(get("MPI_File_open").contains("boundary::run_raw("), "objerr: the file's handler already ran");
    // A describer that knows intercommunicators is called as is; the others are
    // opaque there.
    assert!(get("MPI_Intercomm_merge").contains("let desc = crate::engine::colls::describe::MPI_Intercomm_merge(&intercomm_r, high)"));
    assert!(get("MPI_Comm_dup").contains("describe::unless_inter(&comm_r"));
    // The topology describers are in engine::colls::describe_topo (codegen's
    // describer_path), the blocking neighborhood collective's twin included.
    let nb = get("MPI_Neighbor_allgather");
    assert!(nb.contains("|| crate::engine::colls::describe_topo::MPI_Neighbor_allgather("));
    assert!(nb.contains("|| crate::engine::colls::describe_topo::MPI_Ineighbor_allgather("));
    assert!(get("MPI_Dist_graph_create").contains("|| crate::engine::colls::describe_topo::MPI_Dist_graph_create("));
    assert!(!get("MPI_Allgather").contains("describe_topo"));
    let conv = get("MPI_Comm_f2c");
    assert!(conv.contains("-> Sim_FT_MPI_Comm {") && conv.contains("boundary::value("));
}

#[test]
fn malformed_lines_are_rejected() {
    for bad in [
        "p2p int MPI_X(int a)",                             // generic kind without a communicator
        "custom int MPI_X(MPI_Comm c)",                     // custom without a Rust path
        "local int MPI_X(MPI_Comm c) => crate::x",          // path on a generic kind
        "weird int MPI_X(MPI_Comm c)",                      // unknown kind
        "local void MPI_X(MPI_Comm c)",                     // MPI functions return int
        "local MPI_Fint MPI_X(MPI_Comm c)",                 // only custom lines return a value
        "local int MPI_X(MPI_Comm c) objerr",               // objerr is for noft lines
        "local int MPI_X(MPI_Comm c) inter",                // inter is for coll / comm_new lines
        "local int MPI_X(MPI_Comm c) host",                 // host is for custom lines
    ] {
        assert!(codegen::parse_table(bad).is_err(), "accepted: {bad}");
    }
}

/// The compile-and-run coverage check calls every redirected name (its C++ twin
/// compiles the same sources).
#[test]
fn coverage_check_calls_every_redirected_function() {
    let src: String = ["coverage_check.c", "coverage_more.c"]
        .iter()
        .map(|f| fs::read_to_string(format!("{}/tests/c/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap())
        .collect();
    for f in table() {
        for n in std::iter::once(&f.name).chain(f.aliases.iter()) {
            assert!(src.contains(&format!("{n}(")), "tests/c/coverage_check.c never calls {n}");
        }
    }
}
