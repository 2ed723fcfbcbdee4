//! Models: protocols written and tested in memory that production does not run
//! (yet). Tests and design work use them; nothing outside `protocol` may.
//!
//! May import: protocol.
//!
//! - [`colljoin`]: dead-rank joins, revoke horizon and catch-up, the model behind
//!   `engine::dead::zombie` and `engine::revoke::revoke`.
//! - [`colljoin_machine`]: one rank's state machine in that model.
//! - [`exit`]: the end of a job with dead ranks, driven by protocol::exit, with
//!   [`exit_world`], its programs.
//! - [`rbcast`]: a reliable broadcast over a self-healing Binomial Graph.
//! - [`topology`]: Binomial Graph and k-ary tree over the ranks a node believes alive.
//! - [`sim`]: a seeded in-memory network for the tests.

pub mod colljoin;
pub mod colljoin_machine;
pub mod exit;
pub mod exit_world;
pub mod rbcast;
pub mod sim;
pub mod topology;
