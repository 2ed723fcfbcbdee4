//! Pure protocol state machines. Nothing here calls MPI: each protocol takes
//! events (a message arrived, a failure became known, the application asked for
//! something) and returns the messages to send. The MPI transport carries those
//! messages on the shadow communicator; [`sim`] carries them in memory, in a
//! seeded random order, with failures at chosen steps, so the same code is tested
//! at thousands of ranks.
//!
//! - [`topology`]: who forwards to whom (Binomial Graph, k-ary tree), computed over
//!   the ranks a node believes alive, so it heals as failures become known.
//! - [`failures`]: known vs acknowledged failures of a communicator (ULFM ack rules).
//! - [`dissem`]: MPIFT's own barrier (dissemination, stamped messages), which a
//!   revoke can interrupt at any member.
//! - [`recdbl`]: MPIFT's own small-message allreduce (recursive doubling, order
//!   kept for non-commutative operations), interruptible like the barrier.
//! - [`rbcast`]: the reliable broadcast that revoke and failure propagation are thin
//!   clients of (as in Open MPI's ULFM, `ompi/communicator/ft`).

pub mod agree;
pub mod colljoin;
pub mod dissem;
pub mod failures;
pub mod ftagree;
pub mod rbcast;
pub mod recdbl;
pub mod sim;
pub mod topology;

/// A rank in the communicator a protocol instance runs on.
pub type Rank = u32;

/// Names a communicator identically at every member (see docs/ARCHITECTURE.md).
pub type CommId = u64;

/// Incremented each time a communicator is repaired; messages of an older epoch
/// are stale and dropped (Plan B, section 3).
pub type Epoch = u32;
