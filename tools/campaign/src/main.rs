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
//! - [`junit`]: the JUnit XML report (`--junit`);
//! - [`campaign`]: all of it together;
//! - [`minimize`]: the `minimize` subcommand (a smallest set of deaths that still fails);
//! - [`diagnose`]: one run of the user's command, and why it hangs.

mod campaign;
mod cli;
mod diagnose;
mod font;
mod forensics;
mod junit;
mod matrix;
mod minimize;
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
    // A subcommand is the first word; anything else is a campaign's options, as
    // before subcommands existed. Usage errors: clap prints them and exits with 2.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let ran = match argv.get(1).and_then(|a| a.to_str()) {
        Some("diagnose") => {
            let args = diagnose::Args::parse_from(&argv[1..]);
            run::catch_interrupts();
            diagnose::run(args)
        }
        Some("minimize") => {
            let args = minimize::Args::parse_from(&argv[1..]);
            run::catch_interrupts();
            minimize::run(args)
        }
        _ => {
            let args = cli::Args::parse_from(&argv);
            if let Some(m) = &args.semantics {
                // Every run inherits it (and results::replay names it).
                std::env::set_var("MPIFT_SEMANTICS", m);
            }
            if let Some(l) = &args.latency {
                std::env::set_var("MPIFT_LATENCY", l);
            }
            run::catch_interrupts();
            campaign::run(args)
        }
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
