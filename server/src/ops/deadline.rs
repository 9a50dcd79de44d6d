//! An answer that must be ready by a deadline, with a timer only for answers that wait.
//!
//! Why not `tokio::time::timeout`: it makes its timer for every request, and a timer
//! holds a copy of the runtime's handle, a reference count that every request on both
//! cores would bump and drop (in a `perf` profile of the pet read, the timer's making
//! took five times its share of instructions). Most answers are ready at their first
//! poll (a cached read); only one that is not gets a timer, at that moment, set for the
//! same deadline.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};

pin_project_lite::pin_project! {
    /// `answer`'s output, or `None` once `deadline` has passed without it.
    pub struct ByDeadline<F> {
        #[pin]
        answer: F,
        deadline: Instant,
        #[pin]
        timer: Option<Sleep>,
    }
}

/// `answer`, given up at `deadline` (as `tokio::time::timeout_at`, but `None` for late).
pub fn by_deadline<F: Future>(deadline: Instant, answer: F) -> ByDeadline<F> {
    ByDeadline { answer, deadline, timer: None }
}

impl<F: Future> Future for ByDeadline<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        // The answer first, as tokio's `Timeout` does: one ready at the deadline wins.
        if let Poll::Ready(output) = this.answer.poll(cx) {
            return Poll::Ready(Some(output));
        }
        if this.timer.is_none() {
            this.timer.set(Some(tokio::time::sleep_until(*this.deadline)));
        }
        match this.timer.as_pin_mut() {
            Some(timer) => timer.poll(cx).map(|()| None),
            None => Poll::Pending, // set just above
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn an_answer_ready_by_the_deadline_is_given_and_a_later_one_is_not() {
        let start = Instant::now();
        let deadline = start + Duration::from_secs(2);
        // Ready at its first poll: no timer is made. One that waits gets one then.
        let mut ready = std::pin::pin!(by_deadline(deadline, std::future::ready(1)));
        assert_eq!(futures::poll!(ready.as_mut()), Poll::Ready(Some(1)));
        assert!(ready.timer.is_none(), "a timer for an answer that was ready");
        let mut waiting = std::pin::pin!(by_deadline(deadline, std::future::pending::<u8>()));
        assert_eq!(futures::poll!(waiting.as_mut()), Poll::Pending);
        assert!(waiting.timer.is_some(), "no timer for an answer that waits");
        // Waits, then is ready before the deadline.
        let waits = by_deadline(deadline, async {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            2
        });
        assert_eq!(waits.await, Some(2));
        // Never ready: given up at the deadline, not before.
        let never = by_deadline(deadline, std::future::pending::<u8>());
        assert_eq!(never.await, None);
        assert_eq!(Instant::now(), deadline);
        // A deadline already past: an answer ready at once still wins.
        assert_eq!(by_deadline(start, std::future::ready(3)).await, Some(3));
        assert_eq!(by_deadline(start, std::future::pending::<u8>()).await, None);
    }
}
