//! What a virtual client keeps from one session to the next: its response cache and,
//! for `[data]` pools drawn in order, how far it has walked each pool.

use crate::plan::data::PoolId;
use crate::session::ResponseCache;

#[derive(Debug, Default)]
pub struct ClientMemory {
    pub cache: ResponseCache,
    /// The client's index (closed model) or arrival number k (open model, set
    /// arrivals: the k-th of the list, whose persona it is): where its walk through a
    /// `sequential` pool starts.
    client: u64,
    /// The next row of each `sequential` pool.
    cursors: Vec<u64>,
}

impl ClientMemory {
    pub fn new(client: u64) -> ClientMemory {
        ClientMemory {
            client,
            ..ClientMemory::default()
        }
    }

    /// The client's index (closed model) or arrival number (open model, set arrivals).
    pub fn client(&self) -> u64 {
        self.client
    }

    /// This client's cursor in a `sequential` pool: its own starting row at first,
    /// then the following ones (the pool wraps it around).
    pub fn cursor(&mut self, pool: PoolId) -> &mut u64 {
        let i = usize::from(pool);
        if self.cursors.len() <= i {
            self.cursors.resize(i + 1, self.client);
        }
        &mut self.cursors[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_walks_from_its_own_row() {
        let mut a = ClientMemory::new(0);
        let mut b = ClientMemory::new(7);
        *a.cursor(0) += 1;
        assert_eq!([*a.cursor(0), *a.cursor(1)], [1, 0]);
        *b.cursor(1) += 1;
        assert_eq!([*b.cursor(0), *b.cursor(1)], [7, 8]);
    }
}
