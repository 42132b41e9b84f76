//! `[data.NAME]` pools: the rows of a CSV or JSON-lines file, read when the plan is
//! made and shared by every session of the run. How a session picks a row (its order)
//! is the pool's; the session keeps its client's cursors.

use std::sync::atomic::{AtomicU64, Ordering};

/// Index of a pool in [`Pools`].
pub type PoolId = u16;

/// How sessions draw rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Each virtual client walks the rows in order, starting at row (client index mod
    /// rows), wrapping around.
    Sequential,
    /// A seeded random row per draw.
    Random,
    /// Each row at most once across the run (a shard of a sharded run takes its share);
    /// a draw after the last row has no value.
    Unique,
}

/// One pool: its rows as JSON (a CSV row is an object of strings keyed by the header).
#[derive(Debug)]
pub struct Pool {
    pub name: String,
    pub order: Order,
    /// The field `${pool.NAME}` gives: the `column`, else a CSV file's first column;
    /// `None` for JSON lines without `column` (the whole line).
    pub default_field: Option<String>,
    pub rows: Vec<serde_json::Value>,
    /// The next row a `unique` draw takes.
    next_unique: AtomicU64,
}

impl Pool {
    pub fn new(
        name: String,
        order: Order,
        default_field: Option<String>,
        rows: Vec<serde_json::Value>,
    ) -> Pool {
        Pool {
            name,
            order,
            default_field,
            rows,
            next_unique: AtomicU64::new(0),
        }
    }

    /// The next row of a `unique` pool, or `None` once every row was taken.
    pub fn claim_unique(&self) -> Option<&serde_json::Value> {
        let i = self.next_unique.fetch_add(1, Ordering::Relaxed);
        usize::try_from(i).ok().and_then(|i| self.rows.get(i))
    }

    /// Row `i` modulo the rows (`None` for an empty pool, which the plan refuses).
    pub fn row(&self, i: u64) -> Option<&serde_json::Value> {
        let n = self.rows.len() as u64;
        (n > 0).then(|| &self.rows[(i % n) as usize])
    }

    /// The value of `field` (or the default field) in `row`; the whole row when the
    /// pool has no default field and none is named.
    pub fn field<'r>(
        &self,
        row: &'r serde_json::Value,
        field: Option<&str>,
    ) -> Option<&'r serde_json::Value> {
        match field.or(self.default_field.as_deref()) {
            Some(f) => row.get(f),
            None => Some(row),
        }
    }
}

/// Every pool of the plan, by [`PoolId`].
#[derive(Debug, Default)]
pub struct Pools(pub Vec<Pool>);

impl Pools {
    pub fn get(&self, id: PoolId) -> &Pool {
        &self.0[usize::from(id)]
    }

    pub fn id_of(&self, name: &str) -> Option<PoolId> {
        self.0
            .iter()
            .position(|p| p.name == name)
            .and_then(|i| PoolId::try_from(i).ok())
    }
}
