//! Running one job under a deadline: in its own process group, output to a file;
//! on a timeout, the hang diagnosis (status lines, gdb backtraces) before the
//! whole group and the ranks named by the status files are killed.

use crate::trace::{self, Status};
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// SIGINT, SIGTERM or SIGHUP arrived: the jobs (in process groups of their own,
/// which a terminal's Ctrl-C does not reach) are killed and the campaign stops.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catches SIGINT, SIGTERM and SIGHUP (see [`interrupted`]).
pub fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Still running at the deadline (then killed).
    TimedOut,
}

impl Exit {
    fn from_status(s: ExitStatus) -> Exit {
        match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal(sig),
            _ => Exit::Code(-1),
        }
    }
    /// The record's `exit_code` and `signal` (both None: timed out).
    pub fn code_and_signal(&self) -> (Option<i32>, Option<i32>) {
        match self {
            Exit::Code(c) => (Some(*c), None),
            Exit::Signal(s) => (None, Some(*s)),
            Exit::TimedOut => (None, None),
        }
    }
    pub fn describe(&self) -> String {
        match self {
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut => "timed out".into(),
        }
    }
}

/// What a hung job showed before it was killed.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Hang {
    /// Each rank's status line (`MPIFT_TRACE`), in rank order.
    pub status: Vec<Status>,
    /// Backtrace files (`gdb.<rank>.txt`), when gdb is on PATH.
    pub gdb: Vec<String>,
    /// Why it hangs (the waits-for forensics of the ranks' state dumps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<crate::forensics::Finding>,
}

/// Spawns `cmd` in a new process group (its pid is the group id), stdin closed.
pub fn spawn_group(cmd: &mut Command) -> std::io::Result<Child> {
    cmd.stdin(Stdio::null()).process_group(0).spawn()
}

/// Waits for `child` until `deadline` (or an interrupt); None if it is still
/// running then.
pub fn wait_until(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        let now = Instant::now();
        if now >= deadline || interrupted() {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn signal(pid: i32, group: bool, sig: i32) {
    if pid <= 1 {
        return;
    }
    // SAFETY: kill/killpg only send a signal; a pid that is gone gives ESRCH.
    unsafe {
        if group {
            libc::killpg(pid, sig);
        } else {
            libc::kill(pid, sig);
        }
    }
}

/// Ends a job: SIGTERM to its group and to `pids`, then SIGKILL after 2 s if
/// the leader is still there, and reaps the leader.
pub fn kill_job(child: &mut Child, pids: &[i32]) {
    let pg = child.id() as i32;
    signal(pg, true, libc::SIGTERM);
    pids.iter().for_each(|p| signal(*p, false, libc::SIGTERM));
    let gone = matches!(wait_until(child, Instant::now() + Duration::from_secs(2)), Ok(Some(_)));
    signal(pg, true, libc::SIGKILL);
    pids.iter().for_each(|p| signal(*p, false, libc::SIGKILL));
    if !gone {
        let _ = child.wait();
    }
}

/// Runs `cmd` with output to `out` (stdout and stderr together), for at most
/// `timeout`. A timeout calls `on_hang(true)` first (the processes still run),
/// then kills the group and the pids `on_hang` returned. An interrupt kills the group
/// (after `on_hang(false)`: the pids, no diagnosis) and is an error of kind
/// `Interrupted`.
pub fn run_job(
    cmd: &mut Command,
    out: &Path,
    timeout: Duration,
    on_hang: impl FnOnce(bool) -> (Hang, Vec<i32>),
) -> std::io::Result<(Exit, f64, Option<Hang>)> {
    let f = File::create(out)?;
    cmd.stdout(f.try_clone()?).stderr(f);
    let start = Instant::now();
    let mut child = spawn_group(cmd)?;
    let (exit, hang) = match wait_until(&mut child, start + timeout)? {
        Some(s) => (Exit::from_status(s), None),
        None if interrupted() => {
            // No diagnosis: only the ranks' pids (MPICH's proxies start them in
            // process groups of their own).
            let (_, pids) = on_hang(false);
            kill_job(&mut child, &pids);
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
        }
        None => {
            let (hang, pids) = on_hang(true);
            kill_job(&mut child, &pids);
            (Exit::TimedOut, Some(hang))
        }
    };
    let secs = start.elapsed().as_secs_f64();
    // Leftovers of a job whose launcher is gone (rare): nothing may keep running.
    signal(child.id() as i32, true, libc::SIGKILL);
    Ok((exit, secs, hang))
}

/// `name` is an executable on PATH.
pub fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| std::fs::metadata(d.join(name)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
    })
}

/// The hang diagnosis of a run: its ranks' status lines from `trace_dir`; with
/// `analyse`, the waits-for forensics of their states (and `waits.png` in
/// `diag_dir`) and, with `gdb` too, every rank's backtraces in `diag_dir/gdb.<rank>.txt` (at most 30 s,
/// all ranks at once). Returns the diagnosis and the ranks' pids.
pub fn diagnose(trace_dir: &Path, diag_dir: &Path, analyse: bool, gdb: bool) -> (Hang, Vec<i32>) {
    let status = trace::read_status(trace_dir);
    // The states first, while every rank still waits where it hung.
    let (mut states, names) = crate::states::read(trace_dir, trace::ranks_in(trace_dir));
    if analyse {
        // A second look a moment later: a rank that moved on spins rather than blocks.
        std::thread::sleep(Duration::from_millis(300));
        let (again, _) = crate::states::read(trace_dir, trace::ranks_in(trace_dir));
        crate::states::mark_spinning(&mut states, &again);
    }
    let finding = analyse.then(|| crate::forensics::analyze(&states, &names)).flatten();
    if let Some(f) = &finding {
        if let Err(e) = crate::waitgraph::draw(&diag_dir.join("waits.png"), &states, f) {
            eprintln!("mpift-campaign: warning: no waits.png: {e}");
        }
    }
    let pids: Vec<i32> = status.iter().filter_map(|s| s.pid).filter(|p| *p > 1).collect();
    let mut files = Vec::new();
    if gdb && analyse {
        let jobs: Vec<(usize, i32, PathBuf)> = status
            .iter()
            .filter_map(|s| s.pid.map(|p| (s.rank, p, diag_dir.join(format!("gdb.{}.txt", s.rank)))))
            .filter(|(_, p, _)| Path::new(&format!("/proc/{p}")).exists())
            .collect();
        std::thread::scope(|sc| {
            for (_, pid, path) in &jobs {
                sc.spawn(move || backtrace(*pid, path));
            }
        });
        files = jobs.iter().map(|(_, _, p)| p.display().to_string()).collect();
    }
    (Hang { status, gdb: files, finding }, pids)
}

/// `gdb -p PID -batch -ex 'thread apply all bt'` into `path`, at most 30 s.
fn backtrace(pid: i32, path: &Path) {
    let mut cmd = Command::new("gdb");
    cmd.args(["-p", &pid.to_string(), "-batch", "-nx", "-ex", "thread apply all bt"]);
    let Ok(f) = File::create(path) else { return };
    let Ok(f2) = f.try_clone() else { return };
    cmd.stdout(f).stderr(f2);
    if let Ok(mut child) = spawn_group(&mut cmd) {
        if !matches!(wait_until(&mut child, Instant::now() + Duration::from_secs(30)), Ok(Some(_))) {
            kill_job(&mut child, &[]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn exit_status_and_output() {
        let dir = std::env::temp_dir().join(format!("campaign-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out");
        let (e, _, h) = run_job(&mut sh("echo hello; echo oops >&2; exit 3"), &out, Duration::from_secs(10), |_| unreachable!()).unwrap();
        assert_eq!(e, Exit::Code(3));
        assert!(h.is_none());
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("hello") && text.contains("oops"));
        let (e, _, _) = run_job(&mut sh("kill -SEGV $$"), &out, Duration::from_secs(10), |_| unreachable!()).unwrap();
        assert_eq!(e, Exit::Signal(libc::SIGSEGV));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_hang_is_diagnosed_then_killed_with_its_group() {
        let dir = std::env::temp_dir().join(format!("campaign-hang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("pid");
        // A child in the same group that ignores nothing: it must die with the group.
        let script = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
        let t = Instant::now();
        let mut called = false;
        let (e, secs, h) = run_job(&mut sh(&script), &dir.join("out"), Duration::from_millis(300), |_| {
            called = true;
            (Hang::default(), vec![])
        })
        .unwrap();
        assert!(called);
        assert_eq!(e, Exit::TimedOut);
        assert!(h.is_some() && secs >= 0.3 && t.elapsed() < Duration::from_secs(5));
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Gone, or at most a zombie waiting for its (killed) parent's reaper.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z"), "sleep survived: {state}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
