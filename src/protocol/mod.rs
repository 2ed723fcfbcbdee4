//! Pure protocol state machines. Nothing here calls MPI or keeps process state:
//! each protocol takes events (a message arrived, a failure became known, the
//! application asked for something) and returns what to send, so the same code is
//! tested in memory at thousands of ranks (`tests/protocol_*.rs`).
//!
//! May import: nothing.
//!
//! Production runs:
//! - [`ftagree`]: the tree agreement over published slots (`engine::agree::ft`), with
//!   [`agree`], the bitmap encoding of agree and shrink.
//! - [`failures`]: known vs acknowledged failures of a communicator (ULFM ack rules).
//! - [`dissem`]: MPIFT's own barrier (dissemination, stamped messages), which a
//!   revoke can interrupt at any member.
//! - [`recdbl`]: MPIFT's own small-message allreduce (recursive doubling, order
//!   kept for non-commutative operations), interruptible like the barrier.
//! - [`part`]: one member's part in either of those as a non-blocking state
//!   machine: dead ranks run one for every owed collective at once.
//! - [`turns`]: which communicator's blocking host collectives dead ranks may be
//!   inside at a time, so that two of them never hold each other.
//! - [`exit`]: when a dead rank may leave: the logs it must have read, the
//!   joins it must have made.
//! - [`keep`]: which collective log entries a process keeps after its ring
//!   overwrote them (those whose list only it had, until nobody can need them).
//! - [`outcome`]: which survivors of a collective a failure touched may be told
//!   success (the adversarial semantics mode), and the adversary's seeded draw.
//!
//! [`models`] holds protocols tested here that production does not run.

pub mod agree;
pub mod dissem;
pub mod exit;
pub mod failures;
pub mod keep;
pub mod ftagree;
pub mod models;
pub mod outcome;
pub mod part;
pub mod recdbl;
pub mod turns;

/// A rank in the communicator a protocol instance runs on.
pub type Rank = u32;

/// Names a communicator identically at every member (see docs/ARCHITECTURE.md).
pub type CommId = u64;

/// Incremented each time a communicator is repaired; messages of an older epoch
/// are stale and dropped (Plan B, section 3).
pub type Epoch = u32;
