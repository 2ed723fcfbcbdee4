//! `MPIFT_TRACE=DIR`: each process's MPI calls and a live status line, for
//! outside tools (the kill-point campaign runner, `tools/campaign`; docs/CAMPAIGN.md).
//!
//! Per process (world rank R), in DIR:
//! - `calls.R`: the calls it made, run-length encoded, one line per run of
//!   consecutive calls of one function, `<first call> <count> <function>`;
//!   written at `MPI_Finalize` (before the host MPI's) and, for a rank that dies,
//!   at its death, then ending with `dead <call> <function>`;
//! - `status.R`: one line in a fixed-size shared mapping, rewritten at each call's
//!   entry and exit, so a reader sees where a hung process is:
//!   `pid <pid> call <n> <function> in|out|dead-serving|finalized|dead-finalized`;
//!   a dead rank's `dead-serving` is followed by what it waits for or blocks in
//!   (engine::base::observer::DeadStatus).
//!
//! Cost: nothing when `MPIFT_TRACE` is unset (the call path's one relaxed load of
//! `engine::base::edges::ARMED` stays clear). When set, every call takes the slow path: a mutex, a
//! run-length step (a push when the function changes) and a formatted line.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Size of a status file: one line, padded with spaces, ending with a newline.
pub const STATUS_BYTES: usize = 256;

/// Tracing is on in this process (read at `MPI_Init`).
static ON: AtomicBool = AtomicBool::new(false);
static TRACE: Mutex<Option<Trace>> = Mutex::new(None);

/// The calls of one process as runs `(first call, count, function)`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rle {
    pub runs: Vec<(u64, u64, &'static str)>,
}

impl Rle {
    /// Adds call number `call` of `name`: extends the last run when it is the
    /// same function and the next number, else starts a run.
    pub fn push(&mut self, call: u64, name: &'static str) {
        if let Some(last) = self.runs.last_mut() {
            if last.2 == name && last.0 + last.1 == call {
                last.1 += 1;
                return;
            }
        }
        self.runs.push((call, 1, name));
    }

    /// The `calls.R` text: one line per run; `dead` adds the death line, `end`
    /// (a live rank at `MPI_Finalize`) the seconds since `MPI_Init` returned.
    pub fn encode(&self, dead: Option<(u64, &str)>, end: Option<f64>) -> String {
        let mut out = String::with_capacity(self.runs.len() * 24);
        for (first, count, name) in &self.runs {
            let _ = writeln!(out, "{first} {count} {name}");
        }
        if let Some((call, name)) = dead {
            let _ = writeln!(out, "dead {call} {}", if name.is_empty() { "-" } else { name });
        }
        if let Some(s) = end {
            let _ = writeln!(out, "end {s:.6} -");
        }
        out
    }
}

/// The status line, padded to [`STATUS_BYTES`] (longer text is cut).
pub fn status_line(pid: u32, call: u64, name: &str, state: &str) -> [u8; STATUS_BYTES] {
    let mut buf = [b' '; STATUS_BYTES];
    let text = format!("pid {pid} call {call} {} {state}", if name.is_empty() { "-" } else { name });
    let n = text.len().min(STATUS_BYTES - 1);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    buf[STATUS_BYTES - 1] = b'\n';
    buf
}

/// A status file mapped shared into memory.
struct Status {
    map: *mut u8,
}

impl Status {
    fn open(path: &PathBuf) -> std::io::Result<Status> {
        let f = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        f.set_len(STATUS_BYTES as u64)?;
        // SAFETY: a fresh shared mapping of the first STATUS_BYTES bytes of a file
        // just sized to that length; the mapping outlives the descriptor (closed
        // when `f` drops), as mmap allows.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STATUS_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Status { map: p as *mut u8 })
    }

    fn write(&self, line: &[u8; STATUS_BYTES]) {
        // SAFETY: `map` is a live writable mapping of STATUS_BYTES bytes (never
        // unmapped), written only under TRACE's mutex.
        unsafe { std::ptr::copy_nonoverlapping(line.as_ptr(), self.map, STATUS_BYTES) };
    }
}

struct Trace {
    dir: PathBuf,
    rank: usize,
    pid: u32,
    calls: Rle,
    status: Status,
    /// The last call entered: number and function (for the exit line).
    last: (u64, &'static str),
}
// SAFETY: the mapping is process memory that lives as long as the process,
// only touched under TRACE's mutex.
unsafe impl Send for Trace {}

impl Trace {
    fn show(&self, call: u64, name: &str, state: &str) {
        self.status.write(&status_line(self.pid, call, name, state));
    }
    fn write_calls(&self, dead: Option<(u64, &str)>) {
        let path = self.dir.join(format!("calls.{}", self.rank));
        let end = dead.is_none().then(|| crate::inject::me::t0().elapsed().as_secs_f64());
        if let Err(e) = std::fs::write(&path, self.calls.encode(dead, end)) {
            crate::say!("MPIFT: rank {}: MPIFT_TRACE: cannot write {}: {e}", self.rank, path.display());
        }
    }
}

/// Tracing is on: `inject::rearm` keeps the slow path armed.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// `MPI_Init`: starts tracing when `MPIFT_TRACE` names a directory (created if
/// missing). `init_call` is the number of the `MPI_Init` call, `init` its name.
/// A directory that cannot be used is reported once, and tracing stays off.
pub fn start(rank: usize, init_call: u64, init: &'static str) {
    let Some(dir) = std::env::var_os("MPIFT_TRACE").filter(|d| !d.is_empty()).map(PathBuf::from) else { return };
    let opened = std::fs::create_dir_all(&dir).and_then(|_| Status::open(&dir.join(format!("status.{rank}"))));
    let status = match opened {
        Ok(s) => s,
        Err(e) => {
            crate::say!("MPIFT: rank {rank}: MPIFT_TRACE: cannot use directory {}: {e}; not tracing", dir.display());
            return;
        }
    };
    let mut calls = Rle::default();
    if init_call > 1 {
        // Calls before MPI_Init (MPI_Initialized, say) are counted, not named.
        calls.runs.push((1, init_call - 1, "(before MPI_Init)"));
    }
    calls.push(init_call, init);
    if let Err(e) = super::dump::start(&dir, rank, std::process::id()) {
        crate::say!("MPIFT: rank {rank}: MPIFT_TRACE: no state dump in {}: {e}", dir.display());
    }
    let t = Trace { dir, rank, pid: std::process::id(), calls, status, last: (init_call, init) };
    t.show(init_call, init, "in");
    *TRACE.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
    ON.store(true, Ordering::Release);
}

/// Runs `f` on the trace, if tracing.
fn with(f: impl FnOnce(&mut Trace)) {
    if !on() {
        return;
    }
    if let Some(t) = TRACE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        f(t);
    }
}

/// The entry of call `call` (`inject::decide_slow`).
pub fn enter(call: u64, name: &'static str) {
    with(|t| {
        t.calls.push(call, name);
        t.last = (call, name);
        t.show(call, name, "in");
    });
    super::dump::enter(call, name);
}

/// The exit of the current call (`ffi::boundary`, behind `inject::armed()`).
pub fn exit() {
    with(|t| t.show(t.last.0, t.last.1, "out"));
    super::dump::exit();
}

/// This process dies at `call` (in `name`; empty: between calls): writes its
/// calls with the death line; the status says it serves the survivors.
pub fn died(call: u64, name: &str) {
    with(|t| {
        t.write_calls(Some((call, name)));
        t.show(call, name, "dead-serving");
    });
    super::dump::set_state("dead-serving", None);
}

/// A live rank entered `MPI_Finalize`: writes its calls.
pub fn finish() {
    with(|t| {
        t.write_calls(None);
        t.show(t.last.0, t.last.1, "finalized");
    });
    super::dump::set_state("finalized", None);
}

/// What a dead rank waits for, or is about to block in (engine::base::observer's
/// `DeadStatus`, the words after `dead-serving`; on its way out, after
/// `dead-finalized`).
pub fn dead_status(s: &crate::engine::base::observer::DeadStatus) {
    if !on() {
        return;
    }
    use crate::engine::base::observer::DeadStatus;
    let state = if matches!(s, DeadStatus::Leaving(_)) { "dead-finalized" } else { "dead-serving" };
    with(|t| t.show(t.last.0, t.last.1, &format!("{state} {s}")));
    super::dump::set_state(state, Some(s.to_string()));
}

/// A dead rank stopped serving (every live rank is finalizing).
pub fn dead_done() {
    with(|t| t.show(t.last.0, t.last.1, "dead-finalized"));
    super::dump::set_state("dead-finalized", None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_collapse_consecutive_calls_of_one_function() {
        let mut r = Rle::default();
        r.push(1, "MPI_Init");
        for c in 2..=4 {
            r.push(c, "MPI_Send");
        }
        r.push(5, "MPI_Recv");
        r.push(6, "MPI_Send");
        r.push(7, "MPI_Send");
        r.push(9, "MPI_Send"); // a gap (an untraced call): a new run
        assert_eq!(r.runs, vec![(1, 1, "MPI_Init"), (2, 3, "MPI_Send"), (5, 1, "MPI_Recv"), (6, 2, "MPI_Send"), (9, 1, "MPI_Send")]);
        assert_eq!(r.encode(None, None), "1 1 MPI_Init\n2 3 MPI_Send\n5 1 MPI_Recv\n6 2 MPI_Send\n9 1 MPI_Send\n");
    }

    #[test]
    fn a_death_ends_the_file() {
        let mut r = Rle::default();
        r.push(1, "MPI_Init");
        r.push(2, "MPI_Barrier");
        assert_eq!(r.encode(Some((2, "MPI_Barrier")), None), "1 1 MPI_Init\n2 1 MPI_Barrier\ndead 2 MPI_Barrier\n");
        assert_eq!(r.encode(Some((2, "")), None).lines().last(), Some("dead 2 -"));
        assert_eq!(r.encode(None, Some(1.5)).lines().last(), Some("end 1.500000 -"));
    }

    #[test]
    fn status_is_one_padded_line() {
        let l = status_line(42, 17, "MPI_Allreduce", "in");
        assert_eq!(l.len(), STATUS_BYTES);
        let s = std::str::from_utf8(&l).unwrap();
        assert_eq!(s.trim_end(), "pid 42 call 17 MPI_Allreduce in");
        assert!(s.ends_with('\n') && s.matches('\n').count() == 1);
        let long = "x".repeat(400);
        let l = status_line(1, 1, &long, "out");
        assert_eq!(l[STATUS_BYTES - 1], b'\n');
        assert!(l[..STATUS_BYTES - 1].iter().all(|b| *b != b'\n'));
    }
}
