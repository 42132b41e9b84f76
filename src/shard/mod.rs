//! Running one test as many processes: shard I of N takes every global index k with
//! k mod N = I (open model: arrival k, its intended time and its seed; closed model:
//! virtual client k), as k6's execution segments do, so the N shards together make
//! exactly the schedule and the choices of one process. `--start-at` anchors every
//! shard's schedule and intervals to one wall-clock moment; `merge` (see
//! [`crate::merge`]) adds their raw figures into one exact report; `--processes`
//! ([`processes`]) runs N local shards from one command.

pub mod processes;

use std::fmt;

/// Shard `index` of `count` (0 ≤ index < count). [`Shard::ONE`] is an unsharded run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ONE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The whole run in one process.
    pub const ONE: Shard = Shard { index: 0, count: 1 };

    /// Whether this is one shard of several.
    pub fn is_sharded(self) -> bool {
        self.count > 1
    }

    /// Whether global index `k` (an arrival, a virtual client, a `unique` row) is ours.
    pub fn owns(self, k: u64) -> bool {
        k % u64::from(self.count) == u64::from(self.index)
    }

    /// How many of the global indexes 0..total are ours: the shares of all shards add
    /// up to `total`.
    pub fn share(self, total: u64) -> u64 {
        let (i, n) = (u64::from(self.index), u64::from(self.count));
        if total <= i {
            0
        } else {
            (total - i).div_ceil(n)
        }
    }

    /// The global index of our `local`-th index (I + N·local).
    pub fn global(self, local: u64) -> u64 {
        u64::from(self.index) + u64::from(self.count) * local
    }

    /// `--shard I/N` or `--shard auto`.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        if text.trim() == "auto" {
            return Shard::from_env(|name| std::env::var(name).ok());
        }
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| ShardError::Syntax(text.to_string()))?;
        let parse = |s: &str| s.trim().parse::<u32>().ok();
        match (parse(i), parse(n)) {
            (Some(index), Some(count)) if count >= 1 && index < count => Ok(Shard { index, count }),
            _ => Err(ShardError::Syntax(text.to_string())),
        }
    }

    /// `--shard auto`: a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, with the count
    /// in `MCP_FLEET_SHARDS`, which the kustomize base sets from `completions`) or Slurm
    /// (`SLURM_PROCID` of `SLURM_NTASKS`). `var` reads the environment (a seam for tests).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let _ = var;
        Err(ShardError::NoEnvironment)
    }
}

/// A `--shard` that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("--shard {0:?}: not I/N with 0 ≤ I < N\nfix: e.g. --shard 0/4 (the first of four), or --shard auto in a Kubernetes Indexed Job or under srun")]
    Syntax(String),
    #[error("--shard auto: neither JOB_COMPLETION_INDEX with MCP_FLEET_SHARDS (Kubernetes Indexed Job) nor SLURM_PROCID with SLURM_NTASKS (Slurm) is set\nfix: run it as a pod of an Indexed Job (deploy/kubernetes), under srun, or give --shard I/N")]
    NoEnvironment,
    #[error("--shard auto: {name}={value:?} is not a shard index below the count {count}")]
    BadEnvironment {
        name: String,
        value: String,
        count: String,
    },
}
