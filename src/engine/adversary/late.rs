//! The `latency` and `revoke` choices: news that reaches each process late.
//!
//! Real ULFM detects a failure per observer (each survivor learns of a death
//! when its own detector or a neighbour tells it) and propagates a revoke as a
//! reliable broadcast: both reach processes at different times. MPIFT's news
//! travels as window updates from the process that has it (a dying rank's
//! announcement, engine::dead::zombie; a revoker's job, engine::revoke::revoke).
//! With these choices on, each target's updates are held until a delay drawn
//! per event has passed ([`death_news`], [`revoke_news`]), from the latency
//! range (`MPIFT_LATENCY`). MPIFT's protocols already take news that lands at
//! any time (a target computing outside MPI receives it late), so what changes is
//! only when each process, and so its program, learns: a dead rank joins a
//! collective with dummy data only once every live member has its news, drains a
//! sender's messages only once that sender has it, and a revoke's horizon is
//! read only after "revoked" landed at every member.

use super::{note, Made};
use crate::engine::base::{runtime, settings};
use crate::protocol::outcome;
use std::time::Duration;

/// How long this dying rank holds its news for world rank `observer`, beyond
/// `SIM_FT_TIMEOUT` (None: the choice is off). Keyed by the dead rank and the
/// observer, so a seed replays the same delays.
pub fn death_news(observer: usize) -> Option<Duration> {
    if !settings::adversary(settings::choice::LATENCY) {
        return None;
    }
    let me = runtime::world_rank() as u64;
    let delay_us = draw(settings::choice::LATENCY, me, observer as u64);
    note(Made::Latency { observer: observer as u32, delay_us });
    Some(Duration::from_micros(delay_us))
}

/// How long this revoker holds its revoke of communicator `comm` for world
/// rank `member` (None: the choice is off). Keyed by the communicator's id and
/// the member.
pub fn revoke_news(comm: u64, member: u32) -> Option<Duration> {
    if !settings::adversary(settings::choice::REVOKE) {
        return None;
    }
    let delay_us = draw(settings::choice::REVOKE, comm, member as u64);
    note(Made::Revoke { comm, member, delay_us });
    Some(Duration::from_micros(delay_us))
}

/// The delay of the event keyed by `choice`, `a` and `b`, from the latency range.
fn draw(choice: u32, a: u64, b: u64) -> u64 {
    let (lo, hi) = settings::latency_us();
    outcome::delay_us(settings::seed(), &[choice as u64, a, b], lo, hi)
}
