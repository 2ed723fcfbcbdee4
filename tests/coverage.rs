//! MPI coverage, measured: every function of the real `mpi.h` that takes, returns
//! or stores an `MPI_Comm` or an `MPI_Request` (directly, in an array, or through
//! a callback type whose arguments are one) must be redirected by
//! `include/MPI-FT_redefine.h`, under its `MPI_` and its `PMPI_` name, unless
//! `tests/coverage-exclusions.txt` lists it with a reason, or it is an MPI-4.0
//! function of `src/ffi/mpi4_not_covered.tbl`, which the redirect header turns into
//! a compile error (checked here too).
//!
//! The MPI is the one `$MPICC` names (default `mpicc`): its preprocessor expands
//! `mpi.h` (`-E`, prototypes) and lists its macros (`-dM`, for the functions an MPI
//! defines as macros, like MPICH's `MPI_Comm_c2f`). Prints the coverage figure:
//!
//!     MPICC=mpicc.mpich cargo test --release --test coverage -- --nocapture

#[path = "../build/codegen.rs"]
#[allow(dead_code)]
mod codegen;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn mpicc() -> String {
    std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into())
}

/// `mpicc <flags> x.c` over a file that includes `mpi.h` (C, not C++).
fn preprocess(flags: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("mpift-coverage-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let src = dir.join("x.c");
    fs::write(&src, "#include <mpi.h>\n").unwrap();
    let out = Command::new(mpicc())
        .args(flags)
        .args(["-DOMPI_SKIP_MPICXX", "-DMPICH_SKIP_MPICXX"])
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", mpicc()));
    let _ = fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{} -E failed: {}", mpicc(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn idents(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty() && !w.as_bytes()[0].is_ascii_digit())
}

/// Removes string literals and `__attribute__((...))` / `__asm__(...)` groups.
fn strip_noise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            while let Some(d) = chars.next() {
                if d == '\\' {
                    chars.next();
                } else if d == '"' {
                    break;
                }
            }
            out.push_str("\"\"");
        } else {
            out.push(c);
        }
    }
    for kw in ["__attribute__", "__asm__", "__declspec"] {
        while let Some(at) = out.find(kw) {
            let bytes = out.as_bytes();
            let mut i = at + kw.len();
            while i < bytes.len() && bytes[i] != b'(' {
                i += 1;
            }
            let mut depth = 0;
            let mut end = i;
            while end < bytes.len() {
                match bytes[end] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            out.replace_range(at..end.min(out.len()), " ");
        }
    }
    out
}

/// Top-level declarations (`;`-terminated; function bodies dropped).
fn declarations(text: &str) -> Vec<String> {
    let text = strip_noise(text);
    let mut decls = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut body = false;
    for c in text.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    body = cur.trim_end().ends_with(')');
                }
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth -= 1;
                cur.push(c);
                if depth == 0 && body {
                    cur.clear();
                    body = false;
                }
            }
            ';' if depth == 0 => {
                decls.push(cur.split_whitespace().collect::<Vec<_>>().join(" "));
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    decls
}

/// The name a typedef declares.
fn typedef_name(d: &str) -> Option<String> {
    let d = d.strip_prefix("typedef")?;
    if let Some(close) = d.rfind('}') {
        return idents(&d[close..]).last().map(str::to_string);
    }
    if let Some(open) = d.find('(') {
        let after = d[open + 1..].trim_start().trim_start_matches('*').trim_start();
        let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
        if !name.is_empty() && after[name.len()..].trim_start().starts_with(')') {
            return Some(name);
        }
        return idents(&d[..open]).last().map(str::to_string);
    }
    idents(d).last().map(str::to_string)
}

/// Name of a declared `MPI_`/`MPIX_` function (or `PMPI_` twin), if `d` is one.
fn function_name(d: &str) -> Option<String> {
    if d.starts_with("typedef") {
        return None;
    }
    let open = d.find('(')?;
    let name = idents(&d[..open]).last()?;
    let bare = name.strip_prefix('P').unwrap_or(name);
    (bare.starts_with("MPI_") || bare.starts_with("MPIX_")).then(|| name.to_string())
}

/// What one MPI's header says.
struct Header {
    /// Functions that mention a handle type, by name (PMPI_ twins included).
    functions: BTreeSet<String>,
    version: String,
}

fn read_header() -> Header {
    let text = preprocess(&["-E", "-P"]);
    let decls = declarations(&text);
    // Types that carry a communicator or request: the handles, then every typedef
    // (callback types above all) that mentions one, to a fixed point.
    let mut tracked: BTreeSet<String> = ["MPI_Comm", "MPI_Request"].iter().map(|s| s.to_string()).collect();
    let typedefs: Vec<(String, &String)> = decls.iter().filter_map(|d| typedef_name(d).map(|n| (n, d))).collect();
    loop {
        let before = tracked.len();
        for (name, d) in &typedefs {
            if !tracked.contains(name) && idents(d).any(|w| w != name && tracked.contains(w)) {
                tracked.insert(name.clone());
            }
        }
        if tracked.len() == before {
            break;
        }
    }
    let mentions = |s: &str| idents(s).any(|w| tracked.contains(w));
    let mut functions = BTreeSet::new();
    for d in &decls {
        if let Some(name) = function_name(d) {
            if idents(d).any(|w| w != name && tracked.contains(w)) {
                functions.insert(name);
            }
        }
    }
    // Function-like macros (MPICH: MPI_Comm_c2f(comm) and friends).
    let macros = preprocess(&["-E", "-dM"]);
    let mut ver: BTreeMap<String, String> = BTreeMap::new();
    for line in macros.lines() {
        let Some(def) = line.strip_prefix("#define ") else { continue };
        let name: String = def.chars().take_while(|c| is_ident(*c)).collect();
        let rest = &def[name.len()..];
        if ["MPICH_VERSION", "OMPI_MAJOR_VERSION", "OMPI_MINOR_VERSION", "OMPI_RELEASE_VERSION"].contains(&name.as_str()) {
            ver.insert(name.clone(), rest.trim().trim_matches('"').to_string());
        }
        let bare = name.strip_prefix('P').unwrap_or(&name);
        // MPICH's `MPI_Comm_c2f(comm)` expands to `(MPI_Fint)(comm)`: the name says
        // what it takes.
        let named = bare.starts_with("MPI_Comm_") || bare.starts_with("MPI_Request_");
        if rest.starts_with('(') && (bare.starts_with("MPI_") || bare.starts_with("MPIX_")) && (named || mentions(rest)) {
            functions.insert(name);
        }
    }
    let v = |k: &str| ver.get(k).cloned().unwrap_or_default();
    let version = match ver.get("MPICH_VERSION") {
        Some(m) => format!("MPICH {m}"),
        None if ver.contains_key("OMPI_MAJOR_VERSION") => {
            format!("Open MPI {}.{}.{}", v("OMPI_MAJOR_VERSION"), v("OMPI_MINOR_VERSION"), v("OMPI_RELEASE_VERSION"))
        }
        None => "an MPI".to_string(),
    };
    Header { functions, version }
}

/// `#define NAME Sim_FT_...` lines of the redirect header.
fn redirected() -> BTreeSet<String> {
    let h = fs::read_to_string(format!("{ROOT}/include/MPI-FT_redefine.h")).unwrap();
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, to)| to.starts_with("Sim_FT_"))
        .map(|(n, _)| n.to_string())
        .collect()
}

/// One line of the exclusion file: a name (`*` matches any run of characters)
/// and why it is not redirected.
struct Exclusion {
    pattern: String,
    reason: String,
}

fn exclusions() -> Vec<Exclusion> {
    let text = fs::read_to_string(format!("{ROOT}/tests/coverage-exclusions.txt")).unwrap();
    let mut ex: Vec<Exclusion> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (p, r) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            Exclusion { pattern: p.to_string(), reason: r.trim().to_string() }
        })
        .collect();
    for (reason, names) in mpi4() {
        for n in names {
            ex.push(Exclusion { pattern: n, reason: format!("{reason} (a compile error with MPIFT's headers)") });
        }
    }
    ex
}

/// The MPI-4.0 names the redirect header blocks, by reason.
fn mpi4() -> Vec<(String, Vec<String>)> {
    let text = fs::read_to_string(format!("{ROOT}/src/ffi/mpi4_not_covered.tbl")).unwrap();
    codegen::parse_not_covered(&text).unwrap()
}

/// `#define NAME(...)` lines of the redirect header that make a call a compile error.
fn blocked() -> BTreeSet<String> {
    let h = fs::read_to_string(format!("{ROOT}/include/MPI-FT_redefine.h")).unwrap();
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter(|l| l.contains("_not_covered_by_MPIFT))"))
        .filter_map(|l| l.split_once("(...)"))
        .map(|(n, _)| n.to_string())
        .collect()
}

#[test]
fn mpi4_functions_do_not_compile_with_mpift_handles() {
    let blocked = blocked();
    for (_, names) in mpi4() {
        for n in names {
            assert!(blocked.contains(&n) && blocked.contains(&format!("P{n}")), "{n} is not blocked in MPI-FT_redefine.h");
        }
    }
    let h = fs::read_to_string(format!("{ROOT}/include/MPI-FT_redefine.h")).unwrap();
    assert!(h.contains("#define MPI_VERSION 3\n") && h.contains("#define MPI_SUBVERSION 1\n"));
}

fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name[first.len()..].ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

fn excluded<'a>(ex: &'a [Exclusion], name: &str) -> Option<&'a Exclusion> {
    let bare = name.strip_prefix('P').filter(|b| b.starts_with("MPI")).unwrap_or(name);
    ex.iter().find(|e| glob(&e.pattern, bare))
}

#[test]
fn every_exclusion_has_a_reason() {
    for e in exclusions() {
        assert!(e.reason.len() > 10, "tests/coverage-exclusions.txt: `{}` needs a reason", e.pattern);
    }
}

#[test]
fn parser_reads_the_shapes_mpi_h_uses() {
    let decls = declarations(
        "typedef int (MPI_Copy_function)(MPI_Comm, int, void *); \
         __attribute__((visibility(\"default\"))) int MPI_Keyval_create(MPI_Copy_function *f, int *k) \
           __attribute__((deprecated(\"use MPI_Comm_create_keyval; really\"))); \
         static inline int helper(int x) { return x; } \
         typedef struct { int a; } X; MPI_Comm MPI_Comm_f2c(int f);",
    );
    assert_eq!(typedef_name(&decls[0]).as_deref(), Some("MPI_Copy_function"));
    assert_eq!(function_name(&decls[1]).as_deref(), Some("MPI_Keyval_create"));
    assert!(!decls[1].contains("MPI_Comm_create_keyval"), "string literals are dropped");
    assert_eq!(typedef_name(&decls[2]).as_deref(), Some("X"), "inline function bodies are dropped");
    assert_eq!(function_name(&decls[3]).as_deref(), Some("MPI_Comm_f2c"));
    assert!(glob("MPI_*_c", "MPI_Send_c") && !glob("MPI_*_c", "MPI_Send_c2") && glob("MPI_Send", "MPI_Send"));
}

#[test]
fn every_function_with_a_communicator_or_request_is_redirected() {
    let header = read_header();
    let redirected = redirected();
    let ex = exclusions();
    let (profiling, plain): (Vec<&String>, Vec<&String>) =
        header.functions.iter().partition(|n| n.starts_with("PMPI"));
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut applicable, mut covered, mut missing) = (0, 0, Vec::new());
    for name in &plain {
        if let Some(e) = excluded(&ex, name) {
            *by_reason.entry(e.reason.as_str()).or_default() += 1;
            continue;
        }
        applicable += 1;
        if redirected.contains(*name) {
            covered += 1;
        } else {
            missing.push(name.to_string());
        }
    }
    let (mut p_applicable, mut p_covered) = (0, 0);
    for name in &profiling {
        if excluded(&ex, name).is_some() {
            continue;
        }
        p_applicable += 1;
        if redirected.contains(*name) {
            p_covered += 1;
        } else {
            missing.push(name.to_string());
        }
    }
    let percent = |k: usize, n: usize| if n == 0 { 100.0 } else { 100.0 * k as f64 / n as f64 };
    println!("MPI coverage of MPIFT for {} ({}):", header.version, mpicc());
    println!("  {} functions in mpi.h take, return or store MPI_Comm or MPI_Request", plain.len());
    let n_ex = plain.len() - applicable;
    println!("  {n_ex} excluded (tests/coverage-exclusions.txt, src/ffi/mpi4_not_covered.tbl){}", if n_ex > 0 { ":" } else { "" });
    for (reason, n) in &by_reason {
        println!("    {n:4}  {reason}");
    }
    println!("  redirected: {covered} of {applicable} applicable functions ({:.1} %)", percent(covered, applicable));
    println!("  profiling names: {p_covered} of {p_applicable} PMPI_ twins ({:.1} %)", percent(p_covered, p_applicable));
    // An exclusion that names one function which is redirected after all is stale.
    let stale: Vec<&str> = ex
        .iter()
        .filter(|e| !e.pattern.contains('*') && redirected.contains(&e.pattern))
        .map(|e| e.pattern.as_str())
        .collect();
    assert!(missing.is_empty(), "not redirected (add to mpi_functions.tbl, or exclude with a reason): {missing:?}");
    assert!(stale.is_empty(), "excluded but redirected: {stale:?}; drop them from tests/coverage-exclusions.txt");
    assert!(plain.len() > 100, "suspiciously few functions found in mpi.h: is {} an MPI compiler?", mpicc());
}
