//! The reliable broadcast (revoke / failure propagation) on the in-memory network:
//! thousands of ranks, random message order, failures injected at arbitrary steps,
//! both kinds of failed node: zombies (MPIFT's simulated-dead ranks, which keep
//! forwarding) and silent crashes (the harder case: their messages are lost).

use mpift::protocol::models::rbcast::{Msg, Rbcast, Received, Topic};
use mpift::protocol::models::sim::{Event, Net};
use mpift::protocol::models::topology::{BinomialGraph, KaryTree, Topology};
use mpift::protocol::Rank;
use rand::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Alive,
    Zombie,
    Crashed,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FailureMode {
    Zombie,
    Crash,
}

struct Run {
    /// Every live rank delivered.
    all_live_delivered: bool,
    /// Some live rank delivered.
    any_live_delivered: bool,
    initiator_survived: bool,
    max_hops: u32,
    messages: u64,
    steps: u64,
}

/// One broadcast of `Topic::Revoke` from a random rank; `kill_at` lists the
/// steps at which a random non-crashed rank fails (the initiator included).
fn run<T: Topology + Copy>(n: Rank, topo: T, seed: u64, kill_at: &[u64], mode: FailureMode) -> Run {
    let mut net: Net<Msg> = Net::new(seed);
    let mut nodes: Vec<Rbcast<T>> = (0..n).map(|r| Rbcast::new(r, n, 7, 1, topo)).collect();
    let mut state = vec![State::Alive; n as usize];
    let initiator = net.rng.gen_range(0..n);
    for o in nodes[initiator as usize].start(Topic::Revoke) {
        net.send(initiator, o.to, o.msg);
    }
    let mut kills = kill_at.to_vec();
    kills.sort_unstable();
    kills.reverse();
    loop {
        while kills.last().is_some_and(|&k| k <= net.steps) {
            kills.pop();
            let candidates: Vec<Rank> = (0..n).filter(|&r| state[r as usize] == State::Alive).collect();
            if candidates.len() <= 1 {
                continue;
            }
            let victim = candidates[net.rng.gen_range(0..candidates.len())];
            state[victim as usize] = if mode == FailureMode::Zombie { State::Zombie } else { State::Crashed };
            let listeners: Vec<Rank> = (0..n).filter(|&r| state[r as usize] != State::Crashed).collect();
            net.notify(victim, listeners);
        }
        let Some(ev) = net.next() else { break };
        let (at, outs) = match ev {
            Event::Message { from, to, msg } => {
                if state[to as usize] == State::Crashed {
                    continue;
                }
                let (_, outs) = nodes[to as usize].on_message(from, msg);
                (to, outs)
            }
            Event::Notice { to, failed } => {
                if state[to as usize] == State::Crashed {
                    continue;
                }
                (to, nodes[to as usize].on_failure(failed).1)
            }
        };
        for o in outs {
            net.send(at, o.to, o.msg);
        }
    }
    let live: Vec<usize> = (0..n as usize).filter(|&r| state[r] == State::Alive).collect();
    Run {
        all_live_delivered: live.iter().all(|&r| nodes[r].is_delivered(Topic::Revoke)),
        any_live_delivered: live.iter().any(|&r| nodes[r].is_delivered(Topic::Revoke)),
        initiator_survived: state[initiator as usize] == State::Alive,
        max_hops: live.iter().filter_map(|&r| nodes[r].hops(Topic::Revoke)).max().unwrap_or(0),
        messages: net.messages,
        steps: net.steps,
    }
}

fn assert_reliable(r: &Run, what: &str) {
    if r.initiator_survived || r.any_live_delivered {
        assert!(r.all_live_delivered, "{what}: a live rank delivered but not all did");
    }
}

#[test]
fn bmg_without_failures_reaches_everyone_in_log_n_hops() {
    for n in [2, 3, 17, 1000, 4096] {
        let r = run(n, BinomialGraph, 1, &[], FailureMode::Crash);
        assert!(r.all_live_delivered, "n={n}");
        let log2 = 32 - (n - 1).leading_zeros();
        // Random delivery order means a message can arrive by a longer path first.
        assert!(r.max_hops <= 2 * log2 + 2, "n={n}: {} hops", r.max_hops);
        assert!(r.messages <= n as u64 * 2 * log2 as u64, "n={n}: {} messages", r.messages);
    }
}

#[test]
fn bmg_thousands_of_ranks_with_crashes_at_random_steps() {
    for seed in 0..8 {
        let n = 2000;
        let kill_at: Vec<u64> = (0..40).map(|i| i * 997 % 30_000).collect();
        let r = run(n, BinomialGraph, seed, &kill_at, FailureMode::Crash);
        assert_reliable(&r, &format!("seed {seed}"));
    }
}

#[test]
fn zombies_keep_forwarding() {
    for seed in 0..8 {
        let kill_at: Vec<u64> = (0..200).map(|i| i * 13).collect();
        let r = run(1024, BinomialGraph, seed, &kill_at, FailureMode::Zombie);
        // Zombies forward, so nothing is ever lost, not even the initiator's message.
        assert!(r.all_live_delivered, "seed {seed}");
    }
}

#[test]
fn a_failure_at_every_single_step() {
    // Small communicator, exhaustive timing: one crash at step k, for every k of
    // the failure-free run (and a bit beyond), several seeds.
    for topo_is_tree in [false, true] {
        for seed in 0..6 {
            let n = 12;
            let base = if topo_is_tree {
                run(n, KaryTree { k: 2 }, seed, &[], FailureMode::Crash).steps
            } else {
                run(n, BinomialGraph, seed, &[], FailureMode::Crash).steps
            };
            for k in 0..base + 5 {
                for mode in [FailureMode::Crash, FailureMode::Zombie] {
                    let r = if topo_is_tree {
                        run(n, KaryTree { k: 2 }, seed, &[k, k + 3], mode)
                    } else {
                        run(n, BinomialGraph, seed, &[k, k + 3], mode)
                    };
                    assert_reliable(&r, &format!("tree={topo_is_tree} seed={seed} kill at {k}"));
                }
            }
        }
    }
}

#[test]
fn tree_heals_when_inner_nodes_crash() {
    // A tree has no redundancy: only the view update (re-parenting over the live
    // ranks) saves a broadcast whose inner node crashed.
    for seed in 0..10 {
        let kill_at: Vec<u64> = (0..30).map(|i| i * 7).collect();
        let r = run(500, KaryTree { k: 3 }, seed, &kill_at, FailureMode::Crash);
        assert_reliable(&r, &format!("seed {seed}"));
    }
}

#[test]
fn stale_messages_are_dropped_and_duplicates_ignored() {
    let mut a: Rbcast<BinomialGraph> = Rbcast::new(0, 8, 7, 2, BinomialGraph);
    let old = Msg { comm: 7, epoch: 1, topic: Topic::Revoke, hops: 0 };
    let other = Msg { comm: 8, epoch: 2, topic: Topic::Revoke, hops: 0 };
    assert_eq!(a.on_message(1, old).0, Received::Stale);
    assert_eq!(a.on_message(1, other).0, Received::Stale);
    assert!(!a.is_delivered(Topic::Revoke));
    let cur = Msg { epoch: 2, ..old };
    let (got, out) = a.on_message(1, cur);
    assert_eq!(got, Received::Delivered);
    assert!(out.iter().all(|o| o.to != 1), "never sent back to the sender");
    assert_eq!(a.on_message(2, cur).0, Received::Duplicate);
    assert!(a.on_message(3, cur).1.is_empty());
}
