//! The work queue: at most `workers` requests (questions, searches, routes) are worked on at
//! once, at most `depth` wait, and the rest are turned away at once (503 + `Retry-After`)
//! instead of piling up.

use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Semaphore, SemaphorePermit};

#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Full,
    Closed,
}

pub struct AnswerQueue {
    slots: Semaphore,
    waiting: AtomicUsize,
    depth: usize,
}

impl AnswerQueue {
    pub fn new(workers: usize, depth: usize) -> AnswerQueue {
        AnswerQueue { slots: Semaphore::new(workers.max(1)), waiting: AtomicUsize::new(0), depth }
    }

    /// Questions waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// A slot to answer in, after waiting for one if the queue has room.
    pub async fn enter(&self) -> Result<SemaphorePermit<'_>, Refused> {
        if let Ok(permit) = self.slots.try_acquire() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.depth {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Full);
        }
        let permit = self.slots.acquire().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| Refused::Closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn waits_up_to_depth_then_refuses() {
        let q = Arc::new(AnswerQueue::new(1, 1));
        let busy = q.enter().await.unwrap();
        let waiter = {
            let q = q.clone();
            tokio::spawn(async move { q.enter().await.map(|_| ()) })
        };
        while q.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(q.enter().await.err(), Some(Refused::Full), "one answering, one waiting: the third is refused");
        drop(busy);
        assert_eq!(waiter.await.unwrap(), Ok(()), "the waiting question gets the freed slot");
        assert!(q.enter().await.is_ok());
    }
}
