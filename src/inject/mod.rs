//! Fault injection: who dies when, which bits flip (docs/INJECTION.md; thesis
//! 5.3.6, 5.4, 5.5.2). The pure parts:
//! - [`policy`]: the `MPIFT_KILL` / `MPIFT_BITFLIP` languages;
//! - [`rng`]: seeded generators, one stream per rank and purpose;
//! - [`plan`]: a rank's deadlines, drawn once at `MPI_Init`;
//! - [`model`]: the thesis's process-failure model p_p(p_c, p_f, k).

pub mod model;
pub mod plan;
pub mod policy;
pub mod rng;
