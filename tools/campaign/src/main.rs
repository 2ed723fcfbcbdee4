//! `mpift-campaign`: runs an MPI program built with MPIFT once per kill point
//! and sorts the runs into PASS, HANG, CRASH and WRONG (docs/CAMPAIGN.md).
//!
//! - [`cli`]: the command line;
//! - [`trace`]: reading `MPIFT_TRACE`'s calls and status files;
//! - [`points`]: which kill points to run (pure, seeded);
//! - [`run`]: one job under a deadline, hang diagnosis, killing its process group;
//! - [`states`] reads the ranks' state dumps, [`forensics`] joins them into a
//!   waits-for graph and says why a run hangs;
//! - [`verdict`]: PASS, HANG, CRASH, WRONG;
//! - [`results`]: runs.jsonl, summary.json, the human summary, replay commands;
//! - [`matrix`] draws `matrix.png`, [`waitgraph`] a hung run's `waits.png`;
//! - [`campaign`]: all of it together; [`diagnose`]: one run of the user's
//!   command, and why it hangs.

mod campaign;
mod cli;
mod diagnose;
mod forensics;
mod matrix;
mod points;
mod results;
mod run;
mod states;
mod trace;
mod verdict;
mod waitgraph;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Usage errors: clap prints them and exits with status 2.
    let sub = std::env::args().nth(1);
    run::catch_interrupts();
    let ran = match sub.as_deref() {
        Some("diagnose") => diagnose::run(diagnose::Args::parse_from(std::env::args().skip(1))),
        _ => campaign::run(cli::Args::parse()),
    };
    match ran {
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
