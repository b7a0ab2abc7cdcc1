//! Driving the core's futures to completion on hosts whose store answers at once.
//!
//! The core is `async` because D1 is. The memory store, the SQLite store and the
//! component's WIT `store` import are synchronous: their futures are ready when first
//! polled, so a loop around `poll` with a no-op waker is a complete executor for them.

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

/// Polls `future` until it completes. Meant for futures over synchronous stores, which
/// never return `Pending`; a future that waits on a real event would spin.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        core::hint::spin_loop();
    }
}
