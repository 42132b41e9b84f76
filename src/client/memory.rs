//! What a virtual client keeps from one session to the next: its response cache and,
//! for `[data]` pools drawn in order, how far it has walked each pool.

use crate::plan::data::PoolId;
use crate::session::ResponseCache;

#[derive(Debug, Default)]
pub struct ClientMemory {
    pub cache: ResponseCache,
    /// The client's index (closed model) or arrival number (open model): where its
    /// walk through a `sequential` pool starts.
    client: u64,
    /// Rows drawn so far, per pool.
    drawn: Vec<u64>,
}

impl ClientMemory {
    pub fn new(client: u64) -> ClientMemory {
        ClientMemory {
            client,
            ..ClientMemory::default()
        }
    }

    /// The row index of this client's next draw from a `sequential` pool: its own
    /// starting row, then the following ones (the pool wraps it around).
    pub fn next_row(&mut self, pool: PoolId) -> u64 {
        let i = usize::from(pool);
        if self.drawn.len() <= i {
            self.drawn.resize(i + 1, 0);
        }
        let n = self.drawn[i];
        self.drawn[i] += 1;
        self.client.wrapping_add(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_walks_from_its_own_row() {
        let mut a = ClientMemory::new(0);
        let mut b = ClientMemory::new(7);
        assert_eq!([a.next_row(0), a.next_row(0), a.next_row(1)], [0, 1, 0]);
        assert_eq!([b.next_row(1), b.next_row(1)], [7, 8]);
    }
}
