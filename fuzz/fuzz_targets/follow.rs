//! The follower's readers of its upstream's answers (`follow::sync`): the export state,
//! stream pages (`follow/pages.rs`), import and backfill pages and migration info
//! (`follow/backfill.rs`), blobs, and the network records (`follow/network.rs`).
//!
//! The upstream answers every request with the next body of the input (bodies separated
//! by a `0xff` byte; `ledger_node_fuzz::split_answers`), a 200 each, and stops answering
//! when they run out; this node is a real one on an empty memory store. The follower is
//! pipelined when the input's length is odd.
//!
//! Arbitrary answers never panic the follower or hang it; and a page of updates that the
//! follower read and took is never refused as malformed (400) by this node's ingest,
//! which reads its items with the same readers (so what the follower writes, with the
//! blobs it fills in, reads back).

#![no_main]

use std::cell::Cell;

use ledger_node_core::follow::{self, Limits, Link};
use ledger_node_core::storage::exec::block_on;
use ledger_node_core::storage::store::MemoryStore;
use ledger_node_core::{Request, Response};
use ledger_node_fuzz::{ADMIN_TOKEN, FOLLOW_MAX_PAGES, FOLLOW_PAGE_SIZE, serve, split_answers};
use libfuzzer_sys::fuzz_target;

/// The upstream: the input's answers, in order.
struct Upstream<'a> {
    answers: Vec<&'a [u8]>,
    next: Cell<usize>,
}

impl Link for Upstream<'_> {
    async fn send(&self, _: Request) -> Result<Response, String> {
        let index = self.next.get();
        self.next.set(index + 1);
        let body = self.answers.get(index).ok_or("the upstream has no more answers")?;
        Ok(Response::json(200, body.to_vec()))
    }
}

/// This node: its own handler over a memory store, with its admin token.
struct Local(MemoryStore);

impl Link for Local {
    async fn send(&self, mut request: Request) -> Result<Response, String> {
        request.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
        Ok(serve(&request, &self.0))
    }
}

fuzz_target!(|input: &[u8]| {
    let upstream = Upstream { answers: split_answers(input), next: Cell::new(0) };
    let local = Local(MemoryStore::new());
    let limits = Limits {
        page_size: FOLLOW_PAGE_SIZE,
        max_pages: FOLLOW_MAX_PAGES,
        pipelined: input.len() % 2 == 1,
        ..Limits::default()
    };
    if let Err(e) = block_on(follow::sync(&upstream, &local, &limits)) {
        let message = e.to_string();
        for what in ["POST /v2/updates", "POST /v0/backfilling/import-updates", "POST /v0/backfilling/updates-before"] {
            assert!(
                !message.contains(&format!("refused a page of the upstream's {what} (400)")),
                "this node refused a page the follower took: {message}"
            );
        }
    }
});
