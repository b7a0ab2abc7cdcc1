//! Answers on their way out: the node-wide budget of bytes held in rendered answers
//! ([`Budget`], [`super::Limits::response_budget`]), and the body that writes an answer
//! out in chunks ([`Answer`]), each chunk freed, and its bytes given back to the
//! budget, once the socket has taken it.
//!
//! The rules:
//!
//! - An answer of more than [`SMALL_ANSWER`] bytes holds its size in the budget from
//!   the moment it is rendered until the socket has taken it. A smaller one (a wallet
//!   or registry answer, a status) is not counted: it is no larger than the buffers a
//!   connection holds anyway, and so never waits behind the pages.
//! - A request of the bulk class (a page of the history, an export) first reserves
//!   [`PAGE_RESERVATION`] bytes, waiting before its component call, so that while the
//!   budget is taken new pages are not rendered at all; once rendered it holds its
//!   answer's real size, waiting for the rest while it still holds its component slot
//!   (so at most one rendered answer per slot waits outside the budget).
//! - A wait for the budget lasts at most [`super::Limits::budget_wait`]; then the
//!   request is answered 503 with `Retry-After`, and its rendered answer is dropped. A
//!   bulk request's wait for its component slot and for its reservation together last
//!   no longer, so that requests queued behind pages that wait for room are refused in
//!   time too, not one wait after another.
//! - An answer larger than the whole budget takes the whole budget.
//!
//! So the bytes of answers the node holds are at most the budget, plus one answer per
//! component slot waiting for room, plus what each connection's writer has in hand (a
//! chunk or a few: [`CHUNK`]).

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::sync::Semaphore;

/// Answers up to this size are not counted in the budget.
pub(super) const SMALL_ANSWER: usize = 64 * 1024;

/// What a bulk request reserves before its component call: a page of a few hundred
/// updates.
pub(super) const PAGE_RESERVATION: usize = 1024 * 1024;

/// The size of the pieces an answer is written out in.
pub(super) const CHUNK: usize = 64 * 1024;

/// The bytes of rendered answers the node may hold at once.
#[derive(Debug)]
pub(super) struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
    wait: Duration,
}

impl Budget {
    /// A budget of `total` bytes (at least one), whose requests wait at most `wait`.
    pub(super) fn new(total: usize, wait: Duration) -> Self {
        let total = total.clamp(1, Semaphore::MAX_PERMITS);
        Budget { bytes: Arc::new(Semaphore::new(total)), total, wait }
    }

    /// The whole budget, in bytes.
    pub(super) fn total(&self) -> usize {
        self.total
    }

    /// How long a request waits for room.
    pub(super) fn wait(&self) -> Duration {
        self.wait
    }

    /// Makes `held` hold `bytes`: what it holds beyond them is given back at once, what
    /// it lacks is waited for; false if that was not free within the wait (`held` is
    /// unchanged then).
    pub(super) async fn grow(&self, held: &mut Held, bytes: usize) -> bool {
        self.grow_until(held, bytes, tokio::time::Instant::now() + self.wait).await
    }

    /// [`Budget::grow`], waiting no later than `deadline`.
    pub(super) async fn grow_until(&self, held: &mut Held, bytes: usize, deadline: tokio::time::Instant) -> bool {
        let wanted = bytes.min(self.total);
        if wanted <= held.count {
            held.give_back(held.count - wanted);
            return true;
        }
        let more = u32::try_from(wanted - held.count).unwrap_or(u32::MAX);
        match tokio::time::timeout_at(deadline, self.bytes.acquire_many(more)).await {
            Ok(Ok(permit)) => {
                permit.forget();
                held.count += more as usize;
                true
            }
            _ => false,
        }
    }
}

/// Bytes held in the budget; given back when dropped.
#[derive(Debug)]
pub(super) struct Held {
    bytes: Arc<Semaphore>,
    count: usize,
}

impl Held {
    /// Nothing held (an answer not counted).
    pub(super) fn none(budget: &Budget) -> Held {
        Held { bytes: Arc::clone(&budget.bytes), count: 0 }
    }

    /// Up to `count` of these bytes, as a hold of their own.
    fn split(&mut self, count: usize) -> Held {
        let count = count.min(self.count);
        self.count -= count;
        Held { bytes: Arc::clone(&self.bytes), count }
    }

    fn give_back(&mut self, count: usize) {
        let count = count.min(self.count);
        if count > 0 {
            self.count -= count;
            self.bytes.add_permits(count);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.give_back(self.count);
    }
}

/// A piece of an answer with its share of the budget: both are freed together, when
/// the writer is done with the piece.
struct Piece {
    bytes: Vec<u8>,
    _held: Held,
}

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// An answer's body, handed to the connection's writer a [`CHUNK`] at a time.
pub(super) struct Answer {
    /// The pieces not yet handed over, the next one last.
    pieces: Vec<Bytes>,
    /// Bytes not yet handed over.
    left: u64,
    /// Called once the last piece has been handed over.
    on_end: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answer").field("pieces", &self.pieces.len()).field("left", &self.left).finish()
    }
}

impl Answer {
    /// `body`, holding `held` (which it splits over its pieces).
    ///
    /// The body is cut from its end, each piece copied out and the rest shrunk, so
    /// that the answer never needs much more than its own size.
    pub(super) fn new(mut body: Vec<u8>, mut held: Held) -> Self {
        let left = body.len() as u64;
        let mut pieces = Vec::with_capacity(body.len().div_ceil(CHUNK));
        while body.len() > CHUNK {
            let at = (body.len() - 1) / CHUNK * CHUNK;
            let tail = body.split_off(at);
            body.shrink_to_fit();
            let share = held.split(tail.len());
            pieces.push(Bytes::from_owner(Piece { bytes: tail, _held: share }));
        }
        if !body.is_empty() {
            let share = held.split(usize::MAX);
            pieces.push(Bytes::from_owner(Piece { bytes: body, _held: share }));
        }
        Answer { pieces, left, on_end: None }
    }

    /// A small body, held nowhere.
    pub(super) fn small(body: impl Into<Bytes>) -> Self {
        let body: Bytes = body.into();
        let left = body.len() as u64;
        let pieces = if body.is_empty() { Vec::new() } else { vec![body] };
        Answer { pieces, left, on_end: None }
    }

    /// Calls `on_end` once the last piece has been handed over (at once, for an empty
    /// body).
    pub(super) fn on_end(mut self, on_end: impl FnOnce() + Send + 'static) -> Self {
        if self.pieces.is_empty() {
            on_end();
        } else {
            self.on_end = Some(Box::new(on_end));
        }
        self
    }
}

impl hyper::body::Body for Answer {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let Some(piece) = self.pieces.pop() else {
            return Poll::Ready(None);
        };
        self.left -= piece.len() as u64;
        if self.pieces.is_empty()
            && let Some(on_end) = self.on_end.take()
        {
            on_end();
        }
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::Body as _;

    fn budget(total: usize) -> Budget {
        Budget::new(total, Duration::from_millis(50))
    }

    /// `bytes` of the budget, once free; `None` if they were not free within the wait.
    async fn hold(budget: &Budget, bytes: usize) -> Option<Held> {
        let mut held = Held::none(budget);
        budget.grow(&mut held, bytes).await.then_some(held)
    }

    fn free(budget: &Budget) -> usize {
        budget.bytes.available_permits()
    }

    #[tokio::test]
    async fn an_answer_gives_its_bytes_back_piece_by_piece_as_the_writer_drops_them() {
        let budget = budget(1024 * 1024);
        let held = hold(&budget, 200_000).await.expect("room");
        assert_eq!(free(&budget), 1024 * 1024 - 200_000);
        let mut answer = std::pin::pin!(Answer::new(vec![7u8; 200_000], held));
        assert_eq!(answer.size_hint().exact(), Some(200_000));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let Poll::Ready(Some(Ok(first))) = answer.as_mut().poll_frame(&mut cx) else { panic!("a first piece") };
        let first = first.into_data().expect("data");
        assert_eq!(first.len(), CHUNK);
        assert_eq!(free(&budget), 1024 * 1024 - 200_000, "the writer still has the piece");
        drop(first);
        assert_eq!(free(&budget), 1024 * 1024 - 200_000 + CHUNK);
        let mut total = CHUNK;
        while let Poll::Ready(Some(Ok(piece))) = answer.as_mut().poll_frame(&mut cx) {
            total += piece.into_data().expect("data").len();
        }
        assert_eq!(total, 200_000);
        assert!(answer.is_end_stream());
        assert_eq!(free(&budget), 1024 * 1024);
    }

    #[tokio::test]
    async fn a_request_over_the_budget_waits_then_is_refused_and_gets_room_once_it_is_freed() {
        let budget = budget(100_000);
        let first = hold(&budget, 80_000).await.expect("room");
        assert!(hold(&budget, 30_000).await.is_none(), "over the budget");
        drop(first);
        assert!(hold(&budget, 30_000).await.is_some());
        // Larger than the whole budget: it takes the whole budget.
        let whole = hold(&budget, 1_000_000).await.expect("the whole budget");
        assert_eq!(free(&budget), 0);
        drop(whole);
        assert_eq!(free(&budget), 100_000);
    }

    #[tokio::test]
    async fn a_reservation_shrinks_or_grows_to_the_answer() {
        let budget = budget(100_000);
        let mut held = hold(&budget, 50_000).await.expect("room");
        assert!(budget.grow(&mut held, 10_000).await);
        assert_eq!(free(&budget), 90_000);
        assert!(budget.grow(&mut held, 70_000).await);
        assert_eq!(free(&budget), 30_000);
        let _other = hold(&budget, 20_000).await.expect("room");
        assert!(!budget.grow(&mut held, 90_000).await, "more than is free");
        assert_eq!(free(&budget), 10_000, "a refused growth holds what it held");
    }

    #[test]
    fn an_empty_answer_ends_at_once() {
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&ended);
        let answer = Answer::small(Vec::new()).on_end(move || flag.store(true, std::sync::atomic::Ordering::SeqCst));
        assert!(answer.is_end_stream());
        assert!(ended.load(std::sync::atomic::Ordering::SeqCst));
    }
}
