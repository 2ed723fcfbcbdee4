//! `mpift-campaign`: runs an MPI program built with MPIFT once per kill point
//! and sorts the runs into PASS, HANG, CRASH and WRONG (docs/CAMPAIGN.md).
//!
//! - [`cli`]: the command line;
//! - [`trace`]: reading `MPIFT_TRACE`'s calls and status files;
//! - [`points`]: which kill points to run (pure, seeded);
//! - [`run`]: one job under a deadline, hang diagnosis, killing its process group;
//! - [`verdict`]: PASS, HANG, CRASH, WRONG;
//! - [`results`]: runs.jsonl, summary.json, the human summary, replay commands;
//! - [`matrix`] draws `matrix.png`;
//! - [`junit`]: the JUnit XML report (`--junit`);
//! - [`campaign`]: all of it together.

mod campaign;
mod cli;
mod junit;
mod matrix;
mod points;
mod results;
mod run;
mod trace;
mod verdict;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Usage errors: clap prints them and exits with status 2.
    let args = cli::Args::parse();
    run::catch_interrupts();
    match campaign::run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(campaign::Error::Usage(m)) => {
            eprintln!("mpift-campaign: error: {m}");
            ExitCode::from(2)
        }
        Err(campaign::Error::Run(m)) => {
            eprintln!("mpift-campaign: error: {m}");
            ExitCode::from(1)
        }
    }
}
