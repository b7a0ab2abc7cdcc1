//! Update bodies in an R2 bucket (binding `BODIES`): where the worker keeps them, out
//! of D1.
//!
//! A body (a key of table `U`, [`ledger_node_core::storage::keys`]) is one object named
//! `bodies/<generation>/<key>`, the key escaped ([`escape_key`], as the KV tier's keys
//! are too) and the generation the body cache's ([`CachedStore`](crate::CachedStore)):
//! a reset replaces the generation, and with it every name, so the old objects are
//! unreachable at once and can be removed at leisure (a lifecycle rule on their prefix,
//! or `wrangler r2 object delete`).
//!
//! The bucket is not the authority on whether an update is held: D1 is. The objects
//! are written before the D1 transaction that makes their updates visible, and a body
//! is served only while D1 holds its update's hash (`H`, present exactly when the
//! update is held). So an ingest batch that fails after its bodies were put leaves
//! objects that nothing serves, and running it again writes the same names with the
//! same bytes. [`CachedStore`](crate::CachedStore) does that bookkeeping; this module
//! only names, reads and writes objects.

use futures_util::future::join_all;
use ledger_node_core::model::error::StoreError;
use worker::Bucket;

/// The R2 bucket binding of the update bodies (`wrangler.toml`).
pub const R2_BINDING: &str = "BODIES";

/// R2 refuses longer object names.
const MAX_OBJECT_NAME_BYTES: usize = 1024;

/// The most R2 operations one call keeps in flight.
const IN_FLIGHT: usize = 64;

/// Appends `key` to `name`, its bytes outside printable ASCII (and `%`) written `%XX`:
/// the key part of R2 object names and of the KV tier's keys.
pub fn escape_key(name: &mut String, key: &[u8]) {
    for &byte in key {
        if byte.is_ascii_graphic() && byte != b'%' {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// The name of the object that holds the body under `key` in `generation`.
pub fn object_name(generation: &str, key: &[u8]) -> Result<String, StoreError> {
    let mut name = format!("bodies/{generation}/");
    escape_key(&mut name, key);
    if name.len() > MAX_OBJECT_NAME_BYTES {
        return Err(StoreError::new(format!(
            "an update body's R2 object name would be {} bytes, over R2's limit",
            name.len()
        )));
    }
    Ok(name)
}

/// The bucket of update bodies.
#[derive(Debug, Clone)]
pub struct BodyBucket {
    bucket: Bucket,
}

impl BodyBucket {
    /// The bodies in `bucket`.
    pub fn new(bucket: Bucket) -> Self {
        BodyBucket { bucket }
    }

    /// The objects under `keys` in `generation`, `None` for those absent.
    pub async fn get_many(&self, generation: &str, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(IN_FLIGHT) {
            let reads = chunk.iter().map(|key| async move {
                let name = object_name(generation, key)?;
                let object = self
                    .bucket
                    .get(name.as_str())
                    .execute()
                    .await
                    .map_err(|e| StoreError::new(format!("R2: reading {name}: {e}")))?;
                let Some(body) = object.as_ref().and_then(|object| object.body()) else { return Ok(None) };
                body.bytes().await.map(Some).map_err(|e| StoreError::new(format!("R2: reading {name}: {e}")))
            });
            for read in join_all(reads).await {
                found.push(read?);
            }
        }
        Ok(found)
    }

    /// Writes every body of `bodies` (key, body) in `generation`, replacing any object
    /// of the same name.
    pub async fn put_many(&self, generation: &str, bodies: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        for chunk in bodies.chunks(IN_FLIGHT) {
            let puts = chunk.iter().map(|(key, body)| async move {
                let name = object_name(generation, key)?;
                self.bucket
                    .put(name.as_str(), body.to_vec())
                    .execute()
                    .await
                    .map(drop)
                    .map_err(|e| StoreError::new(format!("R2: writing {name}: {e}")))
            });
            join_all(puts).await.into_iter().collect::<Result<(), _>>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_node_core::storage::keys;

    #[test]
    fn object_names_carry_the_generation_and_the_escaped_key() {
        let key = keys::Key::new(keys::UPDATE).str("tx-1").byte(1).into_bytes();
        assert_eq!(object_name("0a1b", &key), Ok("bodies/0a1b/Utx-1%00%01%01".to_owned()));
        assert!(object_name("g", &[b'U'; 1100]).is_err());
    }
}
