//! The work queue: at most `workers` requests (questions, searches, routes) are worked on at
//! once, at most `depth` wait, and the rest are turned away at once (503 + `Retry-After`)
//! instead of piling up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Full,
    Closed,
}

pub struct WorkQueue {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    depth: usize,
}

impl WorkQueue {
    pub fn new(workers: usize, depth: usize) -> WorkQueue {
        WorkQueue { slots: Arc::new(Semaphore::new(workers.max(1))), waiting: AtomicUsize::new(0), depth }
    }

    /// Questions waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// A slot to work in, after waiting for one if the queue has room. The slot is owned, so it
    /// can move into the blocking task and stay taken until the work is really done.
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, Refused> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.depth {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Full);
        }
        let permit = self.slots.clone().acquire_owned().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| Refused::Closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_up_to_depth_then_refuses() {
        let q = Arc::new(WorkQueue::new(1, 1));
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
