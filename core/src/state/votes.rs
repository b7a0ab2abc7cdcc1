//! The latest coin price vote of each SV ([`crate::api::state::price_votes`]):
//! `GET /v0/{coin}-price/votes`, answering `{"{coin}_price_votes": [...]}` with the
//! configured currency word in lower case ([`crate::model::names::ApiNames`]).
//!
//! Key `V sv created_at contract_id` (the contract rendered for the list,
//! [`super::listed`]): every active `CoinPriceVote`, removed when archived. Within one
//! SV's keys the last is its latest vote: latest `created_at`, then highest contract id.
//!
//! Serving the list walks the index backwards one SV at a time: a reverse scan with
//! limit 1 finds the last key below the previous SV's prefix, which is the latest vote
//! of the next SV down. That is one read per SV with an active vote, plus the one that
//! finds none left, whatever the number of votes; at most [`MAX_SVS`] SVs are listed.
//!
//! A vote whose payload has no text `sv` is not listed.

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::state::ledger::Archived;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store};

use super::listed::ListedContract;

/// Most SVs the vote list shows (a network has a few dozen).
pub const MAX_SVS: usize = 1000;

fn vote_key(sv: &str, created_at_micros: i64, contract_id: &str) -> Vec<u8> {
    Key::new(keys::PRICE_VOTE).str(sv).i64(created_at_micros).str(contract_id).into_bytes()
}

/// Brings the vote index in line with the record of `contract_id`, a `CoinPriceVote`.
pub async fn sync_vote<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    archived: &Archived<'_>,
) -> Result<(), Error> {
    let Some(listed) = ListedContract::read(stage, contract_id, archived).await? else {
        return Ok(());
    };
    let Some(sv) = listed.payload_text(&["sv"]) else {
        return Ok(());
    };
    let key = vote_key(sv, listed.created_at.micros(), contract_id);
    if listed.active {
        stage.put(key, listed.json);
    } else {
        stage.delete(key);
    }
    Ok(())
}

/// The length of the `V sv` prefix of a vote key: the tag and the escaped `sv` with its
/// terminator (`0x00 0x01`; a `0x00` of the text is escaped as `0x00 0xff`).
fn sv_prefix_len(key: &[u8]) -> Option<usize> {
    let mut at = 1;
    loop {
        match (key.get(at)?, key.get(at + 1)) {
            (0, Some(1)) => return Some(at + 2),
            (0, _) => at += 2,
            _ => at += 1,
        }
    }
}

/// The latest vote of each SV, at most [`MAX_SVS`], rendered for the list
/// ([`super::listed`]), in key order: one reverse scan per SV, plus one.
pub async fn latest<S: Store>(store: &S) -> Result<Vec<Vec<u8>>, Error> {
    let mut scan = Scan::prefix(&[keys::PRICE_VOTE], 1).reversed();
    let mut votes = Vec::new();
    while votes.len() < MAX_SVS {
        let Some((key, json)) = store.scan(&scan).await?.into_iter().next() else {
            break;
        };
        let prefix = key
            .get(..sv_prefix_len(&key).ok_or_else(|| Error::Internal("an unreadable price vote key".into()))?)
            .ok_or_else(|| Error::Internal("an unreadable price vote key".into()))?;
        scan.end = Some(prefix.to_vec());
        votes.push(json);
    }
    votes.reverse();
    Ok(votes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sv_prefix_of_a_vote_key_is_found_through_escapes() {
        for sv in ["sv1::1220", "", "a\0b"] {
            let key = vote_key(sv, 5, "c");
            let prefix = Key::new(keys::PRICE_VOTE).str(sv).into_bytes();
            assert_eq!(sv_prefix_len(&key), Some(prefix.len()), "{sv:?}");
        }
        assert_eq!(sv_prefix_len(&[keys::PRICE_VOTE, b'a']), None);
    }

    #[test]
    fn within_an_sv_the_latest_vote_sorts_last() {
        assert!(vote_key("sv", 1, "zz") < vote_key("sv", 2, "aa"));
        assert!(vote_key("sv", 2, "aa") < vote_key("sv", 2, "ab"));
        assert!(vote_key("sv", i64::MAX, "z") < vote_key("sw", 0, "a"));
    }
}
