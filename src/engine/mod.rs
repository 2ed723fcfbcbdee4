//! The process runtime: what MPIFT keeps and does for the whole process, below
//! the semantics of any one call.
//!
//! - The base ([`base`]), which imports nothing else of the engine: handles
//!   ([`base::handles`]), the error and outcome types of every layer
//!   ([`base::errors`]), the one word of flags every call's entry and exit read
//!   ([`base::edges`]), the process's state in the job ([`base::process`]), the
//!   callbacks to fault injection ([`base::observer`]).
//! - Registries: communicators ([`comm`], [`comm_state`]), requests
//!   ([`request`], [`req_state`]), the checked lookups of a communicator
//!   argument ([`args`]), idups not yet usable ([`pending`]).
//! - Knowledge: failure and revoke news over the RMA window ([`news`]), the wake
//!   receive that interrupts blocked calls ([`wake`]), revoke jobs and catch-ups
//!   ([`revoke`]), the collective logs ([`describe`], [`describe_topo`] for
//!   the topology calls, [`logs`]).
//! - Dead ranks and fill-ins: the joins they make ([`join`], [`join_colls`],
//!   [`ctor_join`], [`topo`]), the dead rank's service ([`zombie`]; the
//!   what it keeps, [`dead_comm`]; the messages it drains, [`dead_drain`]; when
//!   it may leave, [`dead_exit`]; the
//!   counts it leaves for the live ranks, [`dead_counts`]) and its
//!   parts in MPIFT's own collectives, all running at once ([`standin`]), its
//!   turns for blocking joins among dead ranks ([`turns`]), live ranks'
//!   joins of collectives that can only fail ([`fillin`]).
//! - MPIFT's own collectives ([`barrier`], [`allreduce`] over [`channel`]; the
//!   program's entry points into them, [`own_calls`]);
//!   agreement and shrink ([`ft`], [`ft_calls`], [`ft_slots`], [`inter`]).
//! - Completion with failure verdicts ([`complete`], [`batch`] for the
//!   multiple-completion calls and [`batch_fast`] for their calm path, [`orphans`]
//!   for requests given up on), what runs
//!   around every call ([`hooks`]) and the progress every call runs first once
//!   something went wrong ([`service`]); the calm lane, where a call nothing
//!   known touches goes straight to the host ([`lane`]).
//!
//! The engine tells fault injection what happened through the callbacks of
//! [`base::observer`], registered at `MPI_Init`; it never imports it.
//!
//! May import: engine::base, protocol, transport.

pub mod allreduce;
pub mod args;
pub mod barrier;
pub mod base;
pub mod batch;
pub mod batch_fast;
pub mod channel;
pub mod comm;
pub mod comm_state;
pub mod complete;
pub mod ctor_join;
pub mod dead_comm;
pub mod dead_counts;
pub mod dead_drain;
pub mod dead_exit;
pub mod describe;
pub mod describe_topo;
pub mod fillin;
pub mod ft;
pub mod ft_calls;
pub mod ft_slots;
pub mod hooks;
pub mod lane;
pub mod inter;
pub mod join;
pub mod join_colls;
pub mod join_types;
pub mod logs;
pub mod news;
pub mod orphans;
pub mod owed;
pub mod own_calls;
pub mod pending;
pub mod req_state;
pub mod request;
pub mod revoke;
pub mod service;
pub mod standin;
pub mod topo;
pub mod turns;
pub mod wake;
pub mod zombie;

/// A real MPI handle kept in MPIFT's tables. Open MPI's handles are pointers, so
/// they are not `Send`; the tables are only touched under their mutex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real<T>(pub T);
// SAFETY: `Real` only ever wraps handles (the host's, and MPIFT's own handle
// pointers, which are never dereferenced): opaque tokens that the host or
// MPIFT's registries resolve, not memory Rust reads through, so moving one to
// another thread shares no data; the tables holding them sit behind a mutex.
unsafe impl<T> Send for Real<T> {}
