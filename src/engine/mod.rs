//! The process runtime: what MPIFT keeps and does for the whole process, below
//! the semantics of any one call. Its rooms, each a folder whose mod.rs says its
//! job, bottom to top; a room imports only rooms below it (its `May import:`
//! line), and no circle of files exists inside one (tests/arch/check.py):
//!
//! - [`base`]: handles, errors, the runtime context, settings, the edges word,
//!   the backoff, the progress hook, the observer; no other room.
//! - [`registry`]: communicators and requests, argument lookups, pending idups,
//!   orphans, what a revoke leaves to do, dead ranks' counts.
//! - [`colls`]: collective descriptors.
//! - [`news`]: failure and revoke news, the wake receive, the collective logs.
//! - [`adversary`]: the adversarial semantics mode's choices of what the
//!   program is told.
//! - [`own`]: MPIFT's own barrier and allreduce over the channel.
//! - [`agree`]: agreement and shrink.
//! - [`join`]: the joins dead ranks and catching-up ranks make.
//! - [`revoke`]: revoke jobs and catch-ups.
//! - [`dead`]: the dead rank's service, its turns, live ranks' fill-ins.
//! - [`progress`]: the service every call runs once something went wrong.
//! - [`complete`]: completion with failure verdicts.
//! - [`entry`]: what runs around every call, the calm lane, the own collectives'
//!   entry points.
//!
//! The engine tells fault injection what happened through the callbacks of
//! [`base::observer`], registered at `MPI_Init`; it never imports it.
//!
//! May import: engine::base, protocol, transport.

pub mod base;
pub mod registry;
pub mod colls;
pub mod news;
pub mod adversary;
pub mod own;
pub mod agree;
pub mod join;
pub mod revoke;
pub mod dead;
pub mod progress;
pub mod complete;
pub mod entry;
