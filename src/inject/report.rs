//! What happened, for `MPIFT_REPORT` and the summary rank 0 prints.
//!
//! Every process counts, locally and without messages: the errors its MPI calls
//! returned (by function and error code; `ffi::boundary` reports each), its
//! recovery calls (revoke, shrink, agree, ack) with their durations, and its own
//! death. At `MPI_Finalize` every process, live or dead, sends its numbers to
//! rank 0 with one gather on the layer's `shadow` communicator: live ranks from
//! `calls::lifecycle::finalize`, dead ones from `engine::dead::zombie` once they stop
//! serving, both after every live rank has set its finalizing flag and before the
//! window is freed, so the gather is the same collective everywhere. Rank 0
//! writes one JSON document (by hand: a few objects do not need a serde
//! dependency) and, at `MPIFT_VERBOSE` 1 or more, a few lines on stderr.

use crate::engine::base::errors::CLASSES;
use crate::engine::adversary::Made;
use crate::inject::death::Death;
use crate::inject::plan::{Cause, Plan};
use crate::transport::{self, env, err, generated, MPI_Comm};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;
use std::time::Instant;

/// One recovery call.
#[derive(Clone, Debug)]
pub struct Recovery {
    pub function: &'static str,
    pub t_s: f64,
    pub duration_s: f64,
    pub code: c_int,
}

/// Recovery calls kept per rank (the rest are counted).
const RECOVERY_KEPT: usize = 1000;

struct Stats {
    errors: BTreeMap<(&'static str, c_int), u64>,
    recovery: Vec<Recovery>,
    recovery_dropped: u64,
}

static STATS: Mutex<Stats> = Mutex::new(Stats { errors: BTreeMap::new(), recovery: Vec::new(), recovery_dropped: 0 });

/// An MPI call returned `code` (not success) to the program.
pub fn error(function: &'static str, code: c_int) {
    *STATS.lock().unwrap().errors.entry((function, code)).or_insert(0) += 1;
}

/// The calls timed as recovery: the ULFM calls that change state (not the queries).
/// (Always inlined: every call's name is a literal at the boundary, so the test
/// folds away at compile time.)
#[inline(always)]
pub fn is_recovery(function: &str) -> bool {
    function.as_bytes().get(..10) == Some(b"MPIX_Comm_")
        && matches!(
            &function[10..],
            "revoke" | "shrink" | "ishrink" | "agree" | "iagree" | "failure_ack" | "ack_failed"
        )
}

pub fn recovery(function: &'static str, started: Instant, code: c_int) {
    let t_s = started.duration_since(crate::inject::me::t0()).as_secs_f64();
    let duration_s = started.elapsed().as_secs_f64();
    if crate::inject::me::verbose() >= 3 {
        crate::say!(
            "MPIFT: rank {}: {function} took {:.3} ms: {}",
            crate::inject::me::world_rank(),
            duration_s * 1e3,
            code_name(code)
        );
    }
    let mut s = STATS.lock().unwrap();
    if s.recovery.len() < RECOVERY_KEPT {
        s.recovery.push(Recovery { function, t_s, duration_s, code });
    } else {
        s.recovery_dropped += 1;
    }
}

// --- names -------------------------------------------------------------------

/// The error class of a code (MPIFT's classes are their own).
fn class_of(code: c_int) -> c_int {
    if CLASSES.iter().any(|(c, _)| *c == code) {
        return code;
    }
    let mut class = code;
    env::error_class(code, &mut class);
    class
}

/// `MPI_ERR_PROC_FAILED`, `MPI_ERR_COMM`, ... or `class N`.
pub fn class_name(class: c_int) -> String {
    if let Some((_, text)) = CLASSES.iter().find(|(c, _)| *c == class) {
        return text.split(':').next().unwrap_or("").to_string();
    }
    let known: [(c_int, &str); 8] = [
        (err::success(), "MPI_SUCCESS"),
        (err::arg(), "MPI_ERR_ARG"),
        (err::comm(), "MPI_ERR_COMM"),
        (err::request(), "MPI_ERR_REQUEST"),
        (err::other(), "MPI_ERR_OTHER"),
        (err::intern(), "MPI_ERR_INTERN"),
        (err::in_status(), "MPI_ERR_IN_STATUS"),
        (err::pending(), "MPI_ERR_PENDING"),
    ];
    known
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("class {class}"))
}

fn code_name(code: c_int) -> String {
    class_name(class_of(code))
}

// --- the per-rank part -----------------------------------------------------------

/// This process's entry of the report (a JSON object) and its death.
pub fn rank_entry(rank: u32, calls: u64, kill: &str, plan: &Plan, death: Option<Death>) -> String {
    let s = STATS.lock().unwrap();
    let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_function: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0;
    for ((f, code), n) in &s.errors {
        *by_class.entry(code_name(*code)).or_insert(0) += n;
        *by_function.entry(f).or_insert(0) += n;
        total += n;
    }
    let mut o = String::new();
    let _ = write!(o, "{{\"rank\": {rank}, \"calls\": {calls}, \"alive\": {}, ", death.is_none());
    let _ = write!(o, "\"kill\": {}, ", json_str(kill));
    let _ = write!(
        o,
        "\"plan\": {{\"call\": {}, \"time_s\": {}, \"cause\": {}}}, ",
        plan.call.map_or("null".into(), |c| c.0.to_string()),
        plan.time.map_or("null".into(), |t| json_f64(t.0)),
        plan.call.map(|c| c.1).or(plan.time.map(|t| t.1)).map_or("null".into(), |c| json_str(c.name()))
    );
    let _ = write!(o, "\"errors\": {{\"total\": {total}, \"by_class\": {}, \"by_function\": {}}}, ", json_map(&by_class), json_map(&by_function));
    let mut rec = String::from("[");
    for (i, r) in s.recovery.iter().enumerate() {
        let _ = write!(
            rec,
            "{}{{\"function\": {}, \"t_s\": {}, \"duration_s\": {}, \"result\": {}}}",
            if i > 0 { ", " } else { "" },
            json_str(r.function),
            json_f64(r.t_s),
            json_f64(r.duration_s),
            json_str(&code_name(r.code))
        );
    }
    rec.push(']');
    let _ = write!(o, "\"recovery\": {{\"calls\": {rec}, \"not_listed\": {}}}, ", s.recovery_dropped);
    let (made, more) = crate::engine::adversary::made();
    let mut adv = String::from("[");
    for (i, m) in made.iter().enumerate() {
        let sep = if i > 0 { ", " } else { "" };
        let _ = write!(adv, "{sep}{{\"choice\": {}, ", json_str(m.choice()));
        let _ = match m {
            Made::Collective { comm, seq, success } | Made::Constructor { comm, seq, success } => {
                let told = if *success { "MPI_SUCCESS" } else { "MPI_ERR_PROC_FAILED" };
                write!(adv, "\"comm\": \"{comm:x}\", \"seq\": {seq}, \"told\": \"{told}\"}}")
            }
            Made::Latency { observer, delay_us } => write!(adv, "\"observer\": {observer}, \"delay_us\": {delay_us}}}"),
            Made::Revoke { comm, member, delay_us } => write!(adv, "\"comm\": \"{comm:x}\", \"member\": {member}, \"delay_us\": {delay_us}}}"),
            Made::Send { comm, peer, nth, success } => {
                let told = if *success { "MPI_SUCCESS" } else { "MPI_ERR_PROC_FAILED" };
                write!(adv, "\"comm\": \"{comm:x}\", \"peer\": {peer}, \"nth\": {nth}, \"told\": \"{told}\"}}")
            }
            Made::Wildcard { comm, failures, received, held } => {
                write!(adv, "\"comm\": \"{comm:x}\", \"failures\": {failures}, \"received\": {received}, \"held\": {held}}}")
            }
        };
    }
    adv.push(']');
    let _ = write!(o, "\"adversary\": {{\"choices\": {adv}, \"not_listed\": {more}}}, ");
    let b = crate::inject::bitflip::counts();
    let _ = write!(
        o,
        "\"bitflips\": {{\"messages\": {}, \"message_bits\": {}, \"api_calls\": {}, \"api_bits\": {}}}}}",
        b.messages, b.message_bits, b.api_calls, b.api_bits
    );
    o
}

/// Fixed-size numbers every rank sends besides its JSON text.
const WORDS: usize = 8;

fn words(death: Option<Death>, calls: u64) -> [u64; WORDS] {
    let b = crate::inject::bitflip::counts();
    let (n_err, n_rec) = {
        let s = STATS.lock().unwrap();
        (s.errors.values().sum::<u64>(), s.recovery.len() as u64 + s.recovery_dropped)
    };
    match death {
        Some(d) => [1, d.cause.code(), d.call, d.time_s.to_bits(), calls, n_err, n_rec, b.message_bits + b.api_bits],
        None => [0, 0, 0, 0, calls, n_err, n_rec, b.message_bits + b.api_bits],
    }
}

/// What rank 0 writes at the top of the document.
pub struct Header {
    pub world_size: u32,
    pub seed: u64,
    pub seed_from: &'static str,
    pub kill: String,
    pub bitflip: Option<String>,
    pub mpi: &'static str,
}

/// Collective over `shadow` (every process, live or dead, in `MPI_Finalize`):
/// sends this rank's part to rank 0, which writes the report and the summary.
/// `header`: rank 0's (None elsewhere); `n`: the world size.
///
/// Blocking: never blocks for ever: every process calls it once on its way out,
/// after the exit protocol let it leave (protocol::exit), and nothing MPIFT
/// runs then waits for a process that is here.
pub fn collect(shadow: MPI_Comm, n: usize, entry: &str, death: Option<Death>, calls: u64, header: Option<&Header>) {
    let w = words(death, calls);
    let len = [entry.len() as u64];
    let mut all_w = vec![0u64; n * WORDS];
    let mut all_len = vec![0u64; n];
    let u64t = transport::dt_uint64();
    // SAFETY: `w` holds WORDS u64s and `len` one; `all_w` has room for WORDS and
    // `all_len` for one per process of `shadow` (`n`, the world size, which is
    // the shadow's size); all are live locals for the blocking calls.
    unsafe {
        generated::MPI_Gather(w.as_ptr() as *const c_void, WORDS as c_int, u64t, all_w.as_mut_ptr() as *mut c_void, WORDS as c_int, u64t, 0, shadow);
        generated::MPI_Gather(len.as_ptr() as *const c_void, 1, u64t, all_len.as_mut_ptr() as *mut c_void, 1, u64t, 0, shadow);
    }
    let counts: Vec<c_int> = all_len.iter().map(|l| *l as c_int).collect();
    let mut displs = vec![0 as c_int; n];
    for i in 1..n {
        displs[i] = displs[i - 1] + counts[i - 1];
    }
    let total = counts.iter().map(|c| *c as usize).sum::<usize>();
    let mut text = vec![0u8; total.max(1)];
    // SAFETY: `entry` is a live str of `entry.len()` bytes; `counts` and
    // `displs` have `n` entries, and `text` holds their sum (at least 1 byte):
    // every block fits. All outlive the blocking call.
    unsafe {
        generated::MPI_Gatherv(
            entry.as_ptr() as *const c_void,
            entry.len() as c_int,
            transport::dt_byte(),
            text.as_mut_ptr() as *mut c_void,
            counts.as_ptr(),
            displs.as_ptr(),
            transport::dt_byte(),
            0,
            shadow,
        );
    }
    let Some(h) = header else { return };
    let mut deaths = Vec::new();
    let mut entries = Vec::new();
    let (mut errors, mut recoveries, mut flips) = (0, 0, 0);
    for r in 0..n {
        let x = &all_w[r * WORDS..(r + 1) * WORDS];
        if x[0] == 1 {
            if let Some(cause) = Cause::from_code(x[1]) {
                deaths.push(Death { rank: r as u32, call: x[2], time_s: f64::from_bits(x[3]), cause });
            }
        }
        errors += x[5];
        recoveries += x[6];
        flips += x[7];
        let a = displs[r] as usize;
        entries.push(String::from_utf8_lossy(&text[a..a + counts[r] as usize]).into_owned());
    }
    let doc = document(h, &deaths, &entries, Totals { errors, recoveries, flips });
    let path = std::env::var("MPIFT_REPORT").ok().filter(|p| !p.is_empty());
    let mut wrote = None;
    if let Some(p) = &path {
        match std::fs::write(p, &doc) {
            Ok(()) => wrote = Some(p.clone()),
            Err(e) => crate::say!("MPIFT: cannot write the report to {p}: {e}"),
        }
    }
    let active = !h.kill.is_empty() || h.bitflip.is_some();
    if crate::inject::me::verbose() >= 1 && (active || !deaths.is_empty() || flips > 0 || wrote.is_some()) {
        crate::say_raw(&summary(h, &deaths, Totals { errors, recoveries, flips }, wrote.as_deref()));
    }
}

#[derive(Clone, Copy)]
pub struct Totals {
    pub errors: u64,
    pub recoveries: u64,
    pub flips: u64,
}

fn sorted(deaths: &[Death]) -> Vec<Death> {
    let mut d = deaths.to_vec();
    d.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.rank.cmp(&b.rank)));
    d
}

/// The JSON document (pure: tested below).
pub fn document(h: &Header, deaths: &[Death], entries: &[String], t: Totals) -> String {
    let mut o = String::from("{\n");
    let _ = writeln!(o, "  \"mpift\": {},", json_str(env!("CARGO_PKG_VERSION")));
    let _ = writeln!(o, "  \"mpi\": {},", json_str(h.mpi));
    let _ = writeln!(o, "  \"world_size\": {},", h.world_size);
    let _ = writeln!(o, "  \"seed\": {},", h.seed);
    let _ = writeln!(o, "  \"seed_from\": {},", json_str(h.seed_from));
    let _ = writeln!(o, "  \"kill\": {},", json_str(&h.kill));
    let _ = writeln!(o, "  \"bitflip\": {},", h.bitflip.as_deref().map_or("null".into(), json_str));
    o.push_str("  \"deaths\": [");
    for (i, d) in sorted(deaths).iter().enumerate() {
        let _ = write!(
            o,
            "{}\n    {{\"rank\": {}, \"call\": {}, \"time_s\": {}, \"cause\": \"{}\"}}",
            if i > 0 { "," } else { "" },
            d.rank,
            d.call,
            json_f64(d.time_s),
            d.cause.name()
        );
    }
    o.push_str(if deaths.is_empty() { "],\n" } else { "\n  ],\n" });
    let _ = writeln!(
        o,
        "  \"totals\": {{\"deaths\": {}, \"errors\": {}, \"recovery_calls\": {}, \"bits_flipped\": {}}},",
        deaths.len(),
        t.errors,
        t.recoveries,
        t.flips
    );
    o.push_str("  \"ranks\": [");
    for (i, e) in entries.iter().enumerate() {
        let _ = write!(o, "{}\n    {}", if i > 0 { "," } else { "" }, e);
    }
    o.push_str("\n  ]\n}\n");
    o
}

/// The few lines rank 0 prints (pure: tested below).
pub fn summary(h: &Header, deaths: &[Death], t: Totals, report: Option<&str>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "MPIFT: seed {} ({}){}",
        h.seed,
        if h.seed_from == "MPIFT_SEED" { "from MPIFT_SEED".to_string() } else { format!("chosen; MPIFT_SEED={} repeats this run", h.seed) },
        policies(&h.kill, h.bitflip.as_deref())
    );
    let list: Vec<String> =
        sorted(deaths).iter().take(8).map(|d| format!("rank {} at call {} ({}, {:.3} s)", d.rank, d.call, d.cause.name(), d.time_s)).collect();
    let _ = writeln!(
        o,
        "MPIFT: {} death{}{}{}{}",
        deaths.len(),
        if deaths.len() == 1 { "" } else { "s" },
        if list.is_empty() { "" } else { ": " },
        list.join(", "),
        if deaths.len() > 8 { ", ..." } else { "" }
    );
    let _ = writeln!(
        o,
        "MPIFT: {} error{} returned, {} recovery call{}, {} bit{} flipped{}",
        t.errors,
        if t.errors == 1 { "" } else { "s" },
        t.recoveries,
        if t.recoveries == 1 { "" } else { "s" },
        t.flips,
        if t.flips == 1 { "" } else { "s" },
        report.map_or(String::new(), |p| format!("; report: {p}"))
    );
    o
}

/// `, MPIFT_KILL="..."` and `, MPIFT_BITFLIP="..."` for the ones that are set.
pub fn policies(kill: &str, bitflip: Option<&str>) -> String {
    let mut o = String::new();
    if !kill.is_empty() {
        let _ = write!(o, ", MPIFT_KILL=\"{kill}\"");
    }
    if let Some(b) = bitflip {
        let _ = write!(o, ", MPIFT_BITFLIP=\"{b}\"");
    }
    o
}

// --- JSON helpers ------------------------------------------------------------------

pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "null".into()
    }
}

fn json_map<K: AsRef<str>>(m: &BTreeMap<K, u64>) -> String {
    let items: Vec<String> = m.iter().map(|(k, v)| format!("{}: {v}", json_str(k.as_ref()))).collect();
    format!("{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small JSON checker (values, objects, arrays, strings, numbers, literals):
    /// enough to know the hand-written document parses.
    fn value(s: &[u8], mut i: usize) -> Result<usize, String> {
        let ws = |s: &[u8], mut i: usize| {
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            i
        };
        i = ws(s, i);
        match s.get(i) {
            Some(b'{') | Some(b'[') => {
                let (close, obj) = if s[i] == b'{' { (b'}', true) } else { (b']', false) };
                i = ws(s, i + 1);
                if s.get(i) == Some(&close) {
                    return Ok(i + 1);
                }
                loop {
                    if obj {
                        i = ws(s, i);
                        if s.get(i) != Some(&b'"') {
                            return Err(format!("key expected at {i}"));
                        }
                        i = value(s, i)?;
                        i = ws(s, i);
                        if s.get(i) != Some(&b':') {
                            return Err(format!("':' expected at {i}"));
                        }
                        i += 1;
                    }
                    i = ws(s, value(s, i)?);
                    match s.get(i) {
                        Some(b',') => i += 1,
                        Some(c) if *c == close => return Ok(i + 1),
                        _ => return Err(format!("',' or close expected at {i}")),
                    }
                }
            }
            Some(b'"') => {
                i += 1;
                while i < s.len() && s[i] != b'"' {
                    if s[i] == b'\\' {
                        i += 1;
                    } else if s[i] < 0x20 {
                        return Err(format!("control character in string at {i}"));
                    }
                    i += 1;
                }
                if i >= s.len() {
                    return Err("unterminated string".into());
                }
                Ok(i + 1)
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                let start = i;
                while i < s.len() && (s[i].is_ascii_digit() || b"+-.eE".contains(&s[i])) {
                    i += 1;
                }
                std::str::from_utf8(&s[start..i]).unwrap().parse::<f64>().map_err(|e| format!("{e} at {start}"))?;
                Ok(i)
            }
            _ => {
                for lit in ["true", "false", "null"] {
                    if s[i..].starts_with(lit.as_bytes()) {
                        return Ok(i + lit.len());
                    }
                }
                Err(format!("unexpected input at {i}"))
            }
        }
    }
    fn valid_json(doc: &str) {
        let end = value(doc.as_bytes(), 0).unwrap_or_else(|e| panic!("{e}\n{doc}"));
        assert!(doc[end..].trim().is_empty(), "trailing text after the document");
    }

    fn header() -> Header {
        Header { world_size: 4, seed: 7, seed_from: "MPIFT_SEED", kill: "rank=2@call=50; \"quoted\"\n".into(), bitflip: None, mpi: "MPI x" }
    }

    #[test]
    fn document_is_valid_json_with_sorted_deaths() {
        let deaths = [
            Death { rank: 3, call: 60, time_s: 0.5, cause: Cause::Node },
            Death { rank: 2, call: 50, time_s: 0.25, cause: Cause::Rule },
        ];
        let entries: Vec<String> = (0..4).map(|r| rank_entry(r, 100, "x\ty", &Plan { call: Some((50, Cause::Rule)), time: None }, None)).collect();
        let doc = document(&header(), &deaths, &entries, Totals { errors: 3, recoveries: 1, flips: 0 });
        valid_json(&doc);
        let a = doc.find("\"rank\": 2, \"call\": 50, \"time_s\": 0.250000, \"cause\": \"rule\"").unwrap();
        let b = doc.find("\"rank\": 3, \"call\": 60, \"time_s\": 0.500000, \"cause\": \"node\"").unwrap();
        assert!(a < b, "deaths are listed in time order");
        let empty = document(&header(), &[], &entries, Totals { errors: 0, recoveries: 0, flips: 0 });
        valid_json(&empty);
        assert!(empty.contains("\"deaths\": [],"));
    }

    #[test]
    fn checker_rejects_broken_json() {
        for bad in ["{\"a\": }", "[1, 2", "{\"a\" 1}", "\"x", "{\"a\": nul}"] {
            assert!(value(bad.as_bytes(), 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    #[test]
    fn summary_names_seed_and_deaths() {
        let h = Header { seed_from: "chosen", kill: "rank=2@call=50".into(), ..header() };
        let s = summary(&h, &[Death { rank: 2, call: 50, time_s: 0.25, cause: Cause::Rule }], Totals { errors: 1, recoveries: 0, flips: 0 }, Some("r.json"));
        assert!(s.contains("MPIFT_SEED=7 repeats this run"), "{s}");
        assert!(s.contains("1 death: rank 2 at call 50 (rule"), "{s}");
        assert!(s.contains("1 error returned") && s.contains("report: r.json"), "{s}");
        assert_eq!(s.lines().count(), 3);
    }

    #[test]
    fn recovery_names() {
        assert!(is_recovery("MPIX_Comm_agree") && is_recovery("MPIX_Comm_failure_ack") && is_recovery("MPIX_Comm_shrink"));
        assert!(!is_recovery("MPIX_Comm_get_failed") && !is_recovery("MPI_Send") && !is_recovery("MPIX"));
    }
}
