//! The adversarial semantics mode (`MPIFT_SEMANTICS=adversarial`, issue 56):
//! where real ULFM allows more than one outcome, what the program is told is
//! the one that breaks fragile recovery code, drawn from the job's seed per
//! event. The mode changes only the verdicts handed to the program, never what
//! MPIFT itself knows or does (the news, the logs, the dead ranks' joins).
//! Each choice is one bit of the settings (engine::base::settings::choice), read
//! only where a failure is already known; the choices made are kept for the run
//! report ([`made`]).
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, protocol, transport.

pub mod collectives;
pub mod late;
pub mod sends;
pub mod wildcard;

use std::sync::Mutex;

/// One choice the adversary made, for the run report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Made {
    /// `collectives`: collective `seq` of communicator `comm` ended here with
    /// success told, or the default verdict.
    Collective { comm: u64, seq: u64, success: bool },
    /// `constructors`: `MPI_Comm_dup` number `seq` of communicator `comm` ended
    /// here with success told (a new communicator), or the default verdict.
    Constructor { comm: u64, seq: u64, success: bool },
    /// `latency`: this dead rank's news reached world rank `observer` after
    /// `delay_us` (beyond `SIM_FT_TIMEOUT`).
    Latency { observer: u32, delay_us: u64 },
    /// `revoke`: this process's revoke of communicator `comm` reached world
    /// rank `member` after `delay_us`.
    Revoke { comm: u64, member: u32, delay_us: u64 },
    /// `sends`: send number `nth` of this process towards world rank `peer` on
    /// communicator `comm`, which died without receiving it, ended with success
    /// told, or the default verdict.
    Send { comm: u64, peer: u32, nth: u32, success: bool },
    /// `wildcard`: wildcard receives on communicator `comm` while `failures`
    /// failures were known there, unacknowledged, and `received` messages had
    /// been received there, are held (told PENDING before a match) or not.
    Wildcard { comm: u64, failures: u32, received: u64, held: bool },
}

impl Made {
    /// The choice's name in `MPIFT_SEMANTICS`.
    pub fn choice(&self) -> &'static str {
        match self {
            Made::Collective { .. } => "collectives",
            Made::Constructor { .. } => "constructors",
            Made::Latency { .. } => "latency",
            Made::Revoke { .. } => "revoke",
            Made::Send { .. } => "sends",
            Made::Wildcard { .. } => "wildcard",
        }
    }
}

/// The most choices listed per process; the others are counted.
const LISTED: usize = 64;

static MADE: Mutex<(Vec<Made>, u64)> = Mutex::new((Vec::new(), 0));

fn note(m: Made) {
    let mut g = MADE.lock().unwrap();
    if g.0.len() < LISTED {
        g.0.push(m);
    } else {
        g.1 += 1;
    }
}

/// The choices made so far by this process (at most 64) and how many more.
pub fn made() -> (Vec<Made>, u64) {
    let g = MADE.lock().unwrap();
    (g.0.clone(), g.1)
}
