//! The upstream's network records: backfill, roll-forward and party hosting.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::{FollowError, Follower, Link, Side, record_line};
use crate::export::{Hosting, HostingKey, State};

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
        let mut theirs = Hostings::new(Side::Upstream, upstream);
        let mut ours = Hostings::new(Side::Local, local);
        loop {
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
                (None, Some(held)) => {
                    lines.push(record_line("topology", &Hosting { participant_ids: Vec::new(), ..held })?)
                }
                (None, None) => {}
            }
        }
        for chunk in lines.chunks(1000) {
            let applied = self.ingest(chunk.join(&b'\n'), "the upstream's network records").await?;
            self.report.summary.add(&applied);
        }
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
    fn new(side: Side, first: State) -> Self {
        Hostings { side, buffer: first.topology.into(), next: first.topology_next }
    }

    /// The next record, fetching the next page when this one is used up.
    async fn peek<U: Link, L: Link>(&mut self, follower: &Follower<'_, U, L>) -> Result<Option<&Hosting>, FollowError> {
        if self.buffer.is_empty()
            && let Some(after) = self.next.take()
        {
            let page = follower.state(self.side, Some(&after)).await?;
            self.buffer = page.topology.into();
            self.next = page.topology_next;
        }
        Ok(self.buffer.front())
    }
}
