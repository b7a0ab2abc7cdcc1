//! Driving the core's futures to completion on hosts whose store answers at once.
//!
//! The core is `async` because D1 is. The memory store, the native LSM store and the
//! component's WIT `store` import are synchronous: their futures are ready when first
//! polled, so a loop around `poll` with a no-op waker is a complete executor for them.

use core::future::Future;
use core::future::poll_fn;
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

/// Runs `a` and `b` at once, to the end of both: each makes progress while the other
/// waits (on a host whose store or network is asynchronous).
pub async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut first, mut second) = (None, None);
    poll_fn(|cx| {
        if first.is_none()
            && let Poll::Ready(output) = a.as_mut().poll(cx)
        {
            first = Some(output);
        }
        if second.is_none()
            && let Poll::Ready(output) = b.as_mut().poll(cx)
        {
            second = Some(output);
        }
        match (first.take(), second.take()) {
            (Some(a), Some(b)) => Poll::Ready((a, b)),
            (a, b) => {
                (first, second) = (a, b);
                Poll::Pending
            }
        }
    })
    .await
}
