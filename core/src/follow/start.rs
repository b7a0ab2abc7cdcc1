//! Where a follower that holds no update yet starts: [`Start::Genesis`] or
//! [`Start::Current`].
//!
//! - **Genesis** (the default) follows every migration from the first: the stream from
//!   its beginning, each migration's import updates before its first page.
//! - **Current** follows the network's way of bringing up a new Scan node: the current
//!   migration's import updates first, then its stream from the upstreams' newest
//!   updates on; the history before (the earlier migrations, and the part of the
//!   current one before the first update taken) is backfilled afterwards, newest
//!   first, with `POST /v0/backfilling/updates-before` (the follower's
//!   `earlier_history`), and `GET /v0/backfilling/status` says `complete: false` until
//!   it is whole: the backfill records that say otherwise are copied from the
//!   upstreams only once the history before the position is in.
//!
//! The backfill follows the network's own: `HistoryBackfilling.scala`
//! (`apps/common/src/main/scala/org/lfdecentralizedtrust/splice/store/`), run by
//! `ScanHistoryBackfillingTrigger.scala`
//! (`apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/automation/`) in
//! `hyperledger-labs/splice`: per migration and synchronizer, from the earliest record
//! time held, the source's newest updates before it, a batch at a time, so the
//! destination's history never has a hole; a synchronizer the destination holds nothing
//! of in an earlier migration is backfilled from the source's newest update there, one
//! of the migration being followed only up to the stream's position (the network waits
//! for its first ingested update instead); then the migration before, as the source's
//! migration info names it, until the source has none.
//!
//! **Only a follower that holds nothing of the stream starts.** The start is decided
//! while this node holds no update of the stream (its position, which is its data, is
//! empty); once it holds one it goes on from its position whatever the start says, so a
//! follower restarted with the other start keeps going where it was. The upstreams'
//! current migration is the last one their `GET /v0/migrations/last` names; the first
//! stream page is asked from just before their newest group of updates in it (the
//! latest record time of its `POST /v0/backfilling/migration-info`), so it starts with
//! that group.

use alloc::format;
use alloc::string::{String, ToString};

use super::{FollowError, Follower, Link, Side};
use crate::api::export::Position;
use crate::model::time::Timestamp;

/// Where a follower that holds no update yet starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Start {
    /// Every migration from the first.
    #[default]
    Genesis,
    /// The current migration's import updates and its newest updates; the history
    /// before them backfilled afterwards.
    Current,
}

impl Start {
    /// `genesis` or `current`; anything else is `None`.
    pub fn parse(text: &str) -> Option<Start> {
        match text {
            "genesis" => Some(Start::Genesis),
            "current" => Some(Start::Current),
            _ => None,
        }
    }

    /// The start's name, as [`Start::parse`] takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Start::Genesis => "genesis",
            Start::Current => "current",
        }
    }
}

impl core::str::FromStr for Start {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Start::parse(text).ok_or_else(|| format!("the start is `current` or `genesis`, not {text:?}"))
    }
}

impl core::fmt::Display for Start {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// The upstreams' current migration, and the position to ask its first stream page
    /// from: just before their newest group of updates in it. `None` when they hold no
    /// update yet (then there is nothing to start from, and the follower starts as from
    /// genesis).
    pub(super) async fn current_start(&self) -> Result<Option<(i64, Position)>, FollowError> {
        let Some(&migration_id) = self.public_migrations().await?.last() else { return Ok(None) };
        let Some(info) = self.migration_info(Side::Upstream, migration_id).await? else { return Ok(None) };
        let mut newest: Option<Timestamp> = None;
        for range in &info.record_time_range {
            let max = Timestamp::parse(&range.max).map_err(|e| {
                FollowError(format!(
                    "the upstream's migration info of migration {migration_id} holds a record time {:?} that is not one: {e}",
                    range.max
                ))
            })?;
            newest = newest.max(Some(max));
        }
        let position = match newest {
            Some(newest) => {
                Position { after_migration_id: migration_id, after_record_time: newest.to_string() }.at_group()
            }
            None => Position { after_migration_id: migration_id, after_record_time: Timestamp::MIN.to_string() },
        };
        Ok(Some((migration_id, position)))
    }
}
