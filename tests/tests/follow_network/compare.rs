//! Two nodes' answers to a plan of reads, compared byte for byte but for the fields the
//! public API withholds (`proof`), with a report that counts the differences by
//! endpoint and shows the first of each.

use std::collections::BTreeMap;

use super::client::{Answer, Client};
use super::proof::without_withheld_fields;
use super::reads::{self, Plan, Read};

/// Reads at once when walking a plan.
const WALKERS: usize = 4;

/// Every difference between `expected`'s and `node`'s answers to `plan`: the read and
/// how the answers differ.
fn differences(expected: &Client, node: &Client, plan: &Plan) -> Vec<(Read, String)> {
    let compare = |read: &Read, answer: &Answer| difference(read, answer, &node.send(read)).map(|d| (read.clone(), d));
    let chunk = plan.reads.len().div_ceil(WALKERS).max(1);
    std::thread::scope(|scope| {
        let reads: Vec<_> = plan
            .reads
            .chunks(chunk)
            .map(|reads| {
                scope.spawn(move || {
                    reads.iter().filter_map(|read| compare(read, &expected.send(read))).collect::<Vec<_>>()
                })
            })
            .collect();
        let pages: Vec<_> = plan
            .paged
            .iter()
            .map(|paged| {
                scope.spawn(move || {
                    reads::pages(expected, paged)
                        .iter()
                        .filter_map(|(read, answer)| compare(read, answer))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        reads.into_iter().chain(pages).flat_map(|walker| walker.join().expect("a walker")).collect()
    })
}

/// Asserts that `node` answers `plan` as `expected` does; the message counts the
/// differences by endpoint and shows the first of each.
pub fn assert_same(expected: &Client, node: &Client, plan: &Plan) {
    let found = differences(expected, node, plan);
    let mut by_endpoint: BTreeMap<String, (usize, &str)> = BTreeMap::new();
    for (read, shown) in &found {
        let entry = by_endpoint.entry(format!("{} {}", read.method, endpoint(&read.target))).or_insert((0, shown));
        entry.0 += 1;
    }
    let report: Vec<String> = by_endpoint
        .iter()
        .map(|(endpoint, (n, first))| format!("{endpoint}: {n} differ; the first:\n{first}"))
        .collect();
    assert!(
        found.is_empty(),
        "{} reads (of {} and the pages) answered differently, in {} endpoints:\n\n{}",
        found.len(),
        plan.reads.len(),
        by_endpoint.len(),
        report.join("\n\n")
    );
}

/// The endpoint of a target: its path, with ids (party ids, long hex strings) as `{}`.
fn endpoint(target: &str) -> String {
    let path = target.split('?').next().unwrap_or(target);
    let id = |s: &str| s.contains("::") || (s.len() > 20 && s.bytes().all(|b| b.is_ascii_hexdigit()));
    path.split('/').map(|s| if id(s) { "{}" } else { s }).collect::<Vec<_>>().join("/")
}

/// How `read` was answered differently by two nodes, with the fields the public API
/// withholds taken out of both answers (`proof`); `None` when they agree.
fn difference(read: &Read, expected: &Answer, got: &Answer) -> Option<String> {
    if expected == got {
        return None;
    }
    let (left, right) = (without_withheld_fields(&expected.body), without_withheld_fields(&got.body));
    if expected.status == got.status && left == right {
        return None;
    }
    let at = left.iter().zip(&right).position(|(a, b)| a != b).unwrap_or(left.len().min(right.len()));
    let around =
        |text: &[u8]| String::from_utf8_lossy(&text[at.saturating_sub(150)..(at + 250).min(text.len())]).into_owned();
    Some(format!(
        "{} {}{}: expected {}, got {}; first difference at byte {at}:\n  expected …{}…\n  got      …{}…",
        read.method,
        read.target,
        read.body.as_deref().map(|b| format!(" {b}")).unwrap_or_default(),
        expected.status,
        got.status,
        around(&left),
        around(&right)
    ))
}
