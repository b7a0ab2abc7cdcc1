//! Snapshots: `GET /v0/state/acs/snapshot-timestamp-after` ([`crate::api::state`]).
//!
//! Boundaries are the multiples of the snapshot period since the Unix epoch. Migration
//! m has a snapshot at boundary B when it has a non-import update recorded before B
//! and one at or after B, that is when `min < B <= max` for the record time range of
//! its non-import updates (`N migration`, kept by [`super::migrations`]). Snapshots
//! need no job: the range says which exist.
//!
//! The first snapshot after `(t, m)` is the earlier of
//! - the first snapshot of m strictly after t: the first boundary after both t and
//!   m's min, if it is not after m's max (computed from `N m`, one get); and
//! - the first snapshot of any larger migration, whatever its time: the first key of
//!   `O period m'` with m' > m (one scan, limit 1).
//!
//! `O period_hours migration` holds a migration's first snapshot (microseconds, `i64`
//! big-endian), present exactly when it has one. It is kept for every period the
//! configuration allows ([`PERIODS_HOURS`]), so changing the period needs no re-ingest,
//! and written only when a migration's first snapshot changes (its min moved back, or
//! its max passed its first boundary), which is rare.
//!
//! `after` is an RFC 3339 timestamp with 0 to 9 fractional digits, those beyond the
//! sixth zero ([`Timestamp::parse`]); a nonzero one is a 400 that names the parameter and
//! the text. A 404 names the time as normalised: `No snapshots found after
//! 2024-01-01T00:00:00.000000Z`.

use alloc::vec::Vec;
use core::ops::RangeInclusive;

use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store, prefix_end};

use super::migrations::{Range, migration_range_key};

/// Every snapshot period (hours) the configuration allows.
pub const PERIODS_HOURS: RangeInclusive<u8> = 1..=24;

const MICROS_PER_HOUR: i64 = 3_600_000_000;

/// The first boundary strictly after `micros` for a period of `hours`.
fn boundary_after(micros: i64, hours: u8) -> Option<i64> {
    let period = MICROS_PER_HOUR.checked_mul(i64::from(hours)).filter(|p| *p > 0)?;
    micros.div_euclid(period).checked_mul(period)?.checked_add(period)
}

/// The first snapshot of a migration with record time range `range` that is strictly
/// after `after`.
fn first_snapshot_after(range: Range, after: i64, hours: u8) -> Option<i64> {
    boundary_after(range.min.max(after), hours).filter(|b| *b <= range.max)
}

fn first_snapshot_key(hours: u8, migration_id: i64) -> Vec<u8> {
    Key::new(keys::FIRST_SNAPSHOT).byte(hours).i64(migration_id).into_bytes()
}

/// Keeps the first-snapshot index in line with a migration's range, which went from
/// `before` to `after`.
pub fn note_range<S: crate::storage::store::Store>(
    stage: &mut Stage<'_, S>,
    migration_id: i64,
    before: Option<Range>,
    after: Range,
) {
    for hours in PERIODS_HOURS {
        let old = before.and_then(|r| first_snapshot_after(r, i64::MIN, hours));
        let new = first_snapshot_after(after, i64::MIN, hours);
        if old == new {
            continue;
        }
        let key = first_snapshot_key(hours, migration_id);
        match new {
            Some(at) => stage.put(key, at.to_be_bytes().to_vec()),
            None => stage.delete(key),
        }
    }
}

/// The first snapshot after `after` of migration `migration_id` or of a later one, for a
/// snapshot period of `hours` (microseconds since the epoch): 2 reads.
pub async fn first_after<S: Store>(
    store: &S,
    hours: u8,
    after: Timestamp,
    migration_id: i64,
) -> Result<Option<i64>, Error> {
    let own = match store.get(&migration_range_key(migration_id)).await? {
        Some(bytes) => first_snapshot_after(Range::from_bytes(&bytes)?, after.micros(), hours),
        None => None,
    };
    let later = match migration_id.checked_add(1) {
        Some(next) => {
            let start = first_snapshot_key(hours, next);
            let end = prefix_end(&Key::new(keys::FIRST_SNAPSHOT).byte(hours).into_bytes());
            let first = store.scan(&Scan { start, end, limit: 1, reverse: false }).await?;
            match first.into_iter().next() {
                Some((_, value)) => Some(
                    value
                        .as_slice()
                        .try_into()
                        .map(i64::from_be_bytes)
                        .map_err(|_| Error::Internal("an unreadable first snapshot".into()))?,
                ),
                None => None,
            }
        }
        None => None,
    };
    let earliest = match (own, later) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    Ok(earliest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = MICROS_PER_HOUR;

    #[test]
    fn boundaries_are_multiples_of_the_period_strictly_after() {
        assert_eq!(boundary_after(0, 3), Some(3 * H));
        assert_eq!(boundary_after(3 * H - 1, 3), Some(3 * H));
        assert_eq!(boundary_after(3 * H, 3), Some(6 * H));
        assert_eq!(boundary_after(-1, 3), Some(0));
        assert_eq!(boundary_after(i64::MAX, 3), None);
    }

    #[test]
    fn a_migration_has_a_snapshot_at_b_when_its_history_passed_b() {
        // Updates at 1h and exactly 3h: one before the boundary, one at it.
        let range = Range { min: H, max: 3 * H };
        assert_eq!(first_snapshot_after(range, i64::MIN, 3), Some(3 * H));
        // Both within one period: no snapshot.
        assert_eq!(first_snapshot_after(Range { min: H, max: 3 * H - 1 }, i64::MIN, 3), None);
        // An update exactly at a boundary is not before it.
        assert_eq!(first_snapshot_after(Range { min: 3 * H, max: 5 * H }, i64::MIN, 3), None);
        // Strictly after t.
        let long = Range { min: H, max: 10 * H };
        assert_eq!(first_snapshot_after(long, 3 * H, 3), Some(6 * H));
        assert_eq!(first_snapshot_after(long, 9 * H, 3), None);
    }
}
