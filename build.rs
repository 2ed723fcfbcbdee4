//! Build script: compiles the C shim with the MPI compiler wrapper, generates the
//! wrappers and the redirect header from `src/ffi/mpi_functions.tbl`, runs
//! cbindgen for `include/MPI-FT.h`, and records the MPI it built against in
//! `mpift_config.h`.
//!
//! The MPI is chosen with `$MPICC` (default `mpicc`), the same variable mpi-sys
//! reads. mpi-sys does not rebuild when it changes, so use one target directory
//! per MPI (the Makefile does).

#[path = "build/codegen.rs"]
mod codegen;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for p in [
        "build/codegen.rs",
        "src/ffi/mpi_functions.tbl",
        "src/ffi/mpi4_not_covered.tbl",
        "src/ffi",
        "src/engine/base/handles.rs",
        "src/engine/base/errors.rs",
        "src/calls/lifecycle.rs",
        "cbindgen.toml",
        "cpp",
    ] {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rerun-if-env-changed=MPICC");

    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());

    // 1. The C shim: MPI macro constants as link-time symbols, built by the MPI's own wrapper.
    cc::Build::new()
        .compiler(&mpicc)
        .file(root.join("cpp/mpift_shim.c"))
        .warnings(true)
        .extra_warnings(true)
        .flag("-Werror")
        .compile("mpift_shim");

    // 2. Wrappers and redirect header from the one table.
    let table = fs::read_to_string(root.join("src/ffi/mpi_functions.tbl")).unwrap();
    let funcs = codegen::parse_table(&table).unwrap_or_else(|e| panic!("{e}"));
    let wrappers = out.join("wrappers.rs");
    fs::write(&wrappers, codegen::rust_wrappers(&funcs)).unwrap();
    fs::write(out.join("transport_calls.rs"), codegen::transport_calls(&funcs)).unwrap();
    let mpi4 = fs::read_to_string(root.join("src/ffi/mpi4_not_covered.tbl")).unwrap();
    let not_covered = codegen::parse_not_covered(&mpi4).unwrap_or_else(|e| panic!("{e}"));
    write_if_changed(&root.join("include/MPI-FT_redefine.h"), &codegen::redefine_header(&funcs, &not_covered));

    // 3. MPI-FT.h from the exported Rust items (hand-written ones and the wrappers).
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).unwrap();
    let mut builder = cbindgen::Builder::new().with_config(config);
    for src in ["src/engine/base/handles.rs", "src/engine/base/errors.rs", "src/ffi/api.rs", "src/calls/lifecycle.rs"] {
        builder = builder.with_src(root.join(src));
    }
    let mut header = Vec::new();
    builder
        .with_src(&wrappers)
        .generate()
        .expect("cbindgen failed")
        .write(&mut header);
    write_if_changed(&root.join("include/MPI-FT.h"), &String::from_utf8(header).unwrap());

    // 4. mpift_config.h: which MPI this library is for (not checked in: per build).
    let probe = probe_mpi(&mpicc, &root.join("cpp/mpift_probe.c"));
    let cfg = config_header(&probe, &mpicc);
    fs::write(out.join("mpift_config.h"), &cfg).unwrap();
    // <target>/<profile>/include/mpift_config.h, next to libmpift.a, for the Makefile.
    let profile_dir = out.ancestors().nth(3).unwrap().to_path_buf();
    fs::create_dir_all(profile_dir.join("include")).unwrap();
    write_if_changed(&profile_dir.join("include/mpift_config.h"), &cfg);
    println!("cargo:rustc-env=MPIFT_BUILT_FOR={}", probe.display);
}

fn write_if_changed(path: &Path, content: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(content) {
        fs::write(path, content).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

struct Probe {
    flavour: &'static str,
    major: String,
    display: String,
    /// The host's `MPI_ERR_LASTCODE`, as its header spells it.
    lastcode: String,
}

/// Runs the preprocessor of `mpicc` over `cpp/mpift_probe.c` and reads the
/// `MPIFT_PROBE` line it leaves behind.
fn probe_mpi(mpicc: &str, probe: &Path) -> Probe {
    let output = Command::new(mpicc)
        .arg("-E")
        .arg(probe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run MPI compiler `{mpicc}`: {e}"));
    assert!(output.status.success(), "`{mpicc} -E` failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("MPIFT_PROBE"))
        .expect("MPIFT_PROBE line missing from preprocessor output");
    let words: Vec<String> = line.split_whitespace().map(|w| w.trim_matches('"').to_string()).collect();
    let lastcode = text
        .lines()
        .find_map(|l| l.strip_prefix("MPIFT_LASTCODE"))
        .map(|v| v.trim().to_string())
        .expect("MPIFT_LASTCODE line missing from preprocessor output");
    probe_words(&words, lastcode)
}

fn probe_words(words: &[String], lastcode: String) -> Probe {
    match words.get(1).map(String::as_str) {
        Some("openmpi") => Probe {
            flavour: "openmpi",
            major: words[2].clone(),
            display: format!("Open MPI {}.{}.{}", words[2], words[3], words[4]),
            lastcode,
        },
        Some("mpich") => Probe {
            flavour: "mpich",
            major: words[2].split('.').next().unwrap().to_string(),
            display: format!("MPICH {}", words[2]),
            lastcode,
        },
        _ => Probe {
            flavour: "other",
            major: words.get(2).cloned().unwrap_or_default(),
            display: format!("MPI {}", words[2..].join(".")),
            lastcode,
        },
    }
}

fn config_header(p: &Probe, mpicc: &str) -> String {
    let check = match p.flavour {
        "openmpi" => format!(
            "#if !defined(OMPI_MAJOR_VERSION) || OMPI_MAJOR_VERSION != {}\n",
            p.major
        ),
        "mpich" => "#if !defined(MPICH_VERSION) || defined(OMPI_MAJOR_VERSION)\n".to_string(),
        _ => "#if defined(MPICH_VERSION) || defined(OMPI_MAJOR_VERSION)\n".to_string(),
    };
    format!(
        "/* mpift_config.h: written by MPIFT's build for the MPI libmpift.a was compiled against.\n\
         \x20* Not checked in: every build (one per MPI) writes its own. */\n\
         #ifndef MPIFT_CONFIG_H\n#define MPIFT_CONFIG_H\n\n\
         #define MPIFT_BUILT_FOR_MPI \"{display}\"\n\
         #define MPIFT_BUILT_FOR_FLAVOUR \"{flavour}\"\n\
         #define MPIFT_BUILT_WITH_MPICC \"{mpicc}\"\n\
         /* The host's MPI_ERR_LASTCODE: MPIFT's ULFM classes go above it when it is\n\
         \x20* small (MPI-FT.h, docs/ULFM-DIFFERENCES.md \"Error classes\"). */\n\
         #define MPIFT_HOST_ERR_LASTCODE ({lastcode})\n\n\
         /* Handles differ between MPIs (int in MPICH, pointer in Open MPI; Open MPI 4 and 5\n\
         \x20* differ in layout): a program must use the MPI the library was built for. */\n\
         {check}\
         #error \"MPIFT: libmpift.a was built for {display} (compiler {mpicc}), but this file is compiled against a different mpi.h. Compile with {mpicc}, or rebuild MPIFT for your MPI (make MPI=mpich | make MPI=openmpi | make MPICC=/path/to/mpicc).\"\n\
         #endif\n\n#endif /* MPIFT_CONFIG_H */\n",
        display = p.display,
        flavour = p.flavour,
        lastcode = p.lastcode,
    )
}
