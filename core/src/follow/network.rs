//! The upstream's network records: backfill, roll-forward and party hosting.
//!
//! Hosting records come a page at a time from both sides and are merged in key order;
//! what differs is applied here in batches of at most [`BATCH`] records as the merge
//! goes, so what is held in memory is bounded whatever the number of pages. A page
//! must move on: its keys ascend, each after the key it was asked from, and its
//! `topology_next` is at or after its last key (so a page with a `topology_next` is not
//! empty). A page that does not stops following with an error naming the request,
//! rather than asking again without end.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::vec::Vec;

use super::{FollowError, Follower, Link, Side, record_line};
use crate::api::export::{Hosting, HostingKey, State};

/// Most records one ingest batch of network records holds.
const BATCH: usize = 1000;

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// Copies the backfill, roll-forward and hosting records that differ from this
    /// node's, and removes the hostings the upstream no longer has.
    pub(super) async fn network_records(&mut self, upstream: State, local: State) -> Result<(), FollowError> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for record in &upstream.backfill {
            if !local.backfill.contains(record) {
                lines.push(record_line("backfill", record)?);
            }
        }
        if upstream.roll_forward_lsu != local.roll_forward_lsu {
            lines.push(record_line("roll_forward_lsu", &upstream.roll_forward_lsu)?);
        }
        let mut theirs = Hostings::new(Side::Upstream, upstream)?;
        let mut ours = Hostings::new(Side::Local, local)?;
        loop {
            // Everything before the merge's position is decided: apply it. What this
            // node's next page holds is after it, so applying it changes nothing there.
            if lines.len() >= BATCH {
                self.apply_records(&lines).await?;
                lines.clear();
            }
            let a = theirs.peek(self).await?.map(Hosting::key);
            let b = ours.peek(self).await?.map(Hosting::key);
            let (copy, remove) = match (a, b) {
                (None, None) => break,
                (Some(_), None) => (true, false),
                (None, Some(_)) => (false, true),
                (Some(a), Some(b)) => (a <= b, a >= b),
            };
            let hosting = if copy { theirs.buffer.pop_front() } else { None };
            let held = if remove { ours.buffer.pop_front() } else { None };
            match (hosting, held) {
                // Held with the same participants: nothing to do.
                (Some(hosting), Some(held)) if hosting == held => {}
                (Some(hosting), _) => lines.push(record_line("topology", &hosting)?),
                (None, Some(held)) => lines
                    .push(record_line("topology", &Hosting { participant_ids: Vec::new(), learned_at: None, ..held })?),
                (None, None) => {}
            }
        }
        self.apply_records(&lines).await
    }

    /// Applies network record `lines` here, one ingest batch (none when there are none).
    async fn apply_records(&mut self, lines: &[Vec<u8>]) -> Result<(), FollowError> {
        if lines.is_empty() {
            return Ok(());
        }
        let applied = self.ingest(lines.join(&b'\n'), "the upstream's network records").await?;
        self.report.summary.add(&applied);
        Ok(())
    }
}

/// The hosting records of one side, fetched a page at a time.
struct Hostings {
    side: Side,
    buffer: VecDeque<Hosting>,
    next: Option<HostingKey>,
}

impl Hostings {
    fn new(side: Side, first: State) -> Result<Self, FollowError> {
        moves_on(side, None, &first)?;
        Ok(Hostings { side, buffer: first.topology.into(), next: first.topology_next })
    }

    /// The next record, fetching the next page when this one is used up.
    async fn peek<U: Link, L: Link>(&mut self, follower: &Follower<'_, U, L>) -> Result<Option<&Hosting>, FollowError> {
        if self.buffer.is_empty()
            && let Some(after) = self.next.take()
        {
            let page = follower.state(self.side, Some(&after)).await?;
            moves_on(self.side, Some(&after), &page)?;
            self.buffer = page.topology.into();
            self.next = page.topology_next;
        }
        Ok(self.buffer.front())
    }
}

/// Whether `page`, `side`'s state page of hosting records after `after`, moves on: its
/// keys ascend, after `after`, and its `topology_next` is at or after its last key.
fn moves_on(side: Side, after: Option<&HostingKey>, page: &State) -> Result<(), FollowError> {
    let refused = |problem: &str| {
        let asked = match after {
            Some(after) => format!("after ({}, {})", after.synchronizer_id, after.party_id),
            None => "from the start".into(),
        };
        Err(FollowError(format!(
            "{side} answered POST /v0/admin/export/state for hosting records {asked} with a page that does not move on: \
             {problem}"
        )))
    };
    let mut last = after.cloned();
    for hosting in &page.topology {
        let key = hosting.key();
        if last.as_ref().is_some_and(|last| key <= *last) {
            return refused(&format!(
                "({}, {}) is not after ({}, {})",
                key.synchronizer_id,
                key.party_id,
                last.as_ref().map_or("", |k| k.synchronizer_id.as_str()),
                last.as_ref().map_or("", |k| k.party_id.as_str()),
            ));
        }
        last = Some(key);
    }
    match (&page.topology_next, &last) {
        (Some(next), _) if page.topology.is_empty() => {
            refused(&format!("no records, and topology_next ({}, {})", next.synchronizer_id, next.party_id))
        }
        (Some(next), Some(last)) if next < last => refused(&format!(
            "topology_next ({}, {}) is before its last record ({}, {})",
            next.synchronizer_id, next.party_id, last.synchronizer_id, last.party_id
        )),
        _ => Ok(()),
    }
}
