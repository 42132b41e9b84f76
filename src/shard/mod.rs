//! Running one test as many processes: shard I of N takes every global index k with
//! k mod N = I (open model: arrival k, its intended time and its seed; closed model:
//! virtual client k), as k6's execution segments do, so the N shards together make
//! exactly the schedule and the choices of one process. `--start-at` anchors every
//! shard's schedule and intervals to one wall-clock moment; `merge` adds their raw
//! figures into one exact report; `--processes` runs N local shards from one command.
//! This module is the vocabulary, below the plan (which draws `unique` rows by shard);
//! `lib::run` applies it to a run.

mod start;

pub use start::{Start, StartAt, StartError, START_TOLERANCE};

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
        let (index_name, count_name) = if var(K8S_INDEX).is_some() {
            (K8S_INDEX, K8S_COUNT)
        } else if var(SLURM_INDEX).is_some() {
            (SLURM_INDEX, SLURM_COUNT)
        } else {
            return Err(ShardError::NoEnvironment);
        };
        let index_text = var(index_name).unwrap_or_default();
        let Some(count_text) = var(count_name) else {
            return Err(ShardError::NoCount {
                index: index_name.to_string(),
                count: count_name.to_string(),
            });
        };
        let count = count_text
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ShardError::BadCount {
                name: count_name.to_string(),
                value: count_text.clone(),
            })?;
        match index_text.trim().parse::<u32>() {
            Ok(index) if index < count => Ok(Shard { index, count }),
            _ => Err(ShardError::BadEnvironment {
                name: index_name.to_string(),
                value: index_text,
                count: count_text,
            }),
        }
    }

    /// The source addresses this shard connects from when the shards share one machine
    /// (`run --processes`, or [`LOCAL_SHARDS`] set): address j goes to shard j mod N
    /// when there are at least N of them; with fewer, every shard uses all of them.
    pub fn split_sources<T: Clone>(self, all: &[T]) -> Vec<T> {
        if all.len() < self.count as usize {
            return all.to_vec();
        }
        all.iter()
            .enumerate()
            .filter(|(j, _)| self.owns(*j as u64))
            .map(|(_, a)| a.clone())
            .collect()
    }
}

/// Kubernetes Indexed Job: the pod's completion index.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// The Job's completion count: Kubernetes has no variable for it, so the kustomize base
/// (deploy/kubernetes) sets this one from `completions`.
pub const K8S_COUNT: &str = "MCP_FLEET_SHARDS";
/// Slurm: the task's rank and the number of tasks of the step.
pub const SLURM_INDEX: &str = "SLURM_PROCID";
pub const SLURM_COUNT: &str = "SLURM_NTASKS";
/// Set (to anything) when the shards of a run share one machine (`run --processes` sets
/// it for its children): each shard then takes its part of the plan's source addresses
/// ([`Shard::split_sources`]) instead of all of them.
pub const LOCAL_SHARDS: &str = "MCP_FLEET_LOCAL_SHARDS";

/// The seed of a sharded run whose profile names none: every shard must draw the same
/// choices, so it comes from the written profile (FNV-1a of its bytes, the same in every
/// process and on every machine, unlike `DefaultHasher`'s random keys).
pub fn profile_seed(profile_toml: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in profile_toml.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A `--shard` that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("--shard {0:?}: not I/N with 0 ≤ I < N\nfix: e.g. --shard 0/4 (the first of four), or --shard auto in a Kubernetes Indexed Job or under srun")]
    Syntax(String),
    #[error("--shard auto: neither JOB_COMPLETION_INDEX with MCP_FLEET_SHARDS (Kubernetes Indexed Job) nor SLURM_PROCID with SLURM_NTASKS (Slurm) is set\nfix: run it as a pod of an Indexed Job (deploy/kubernetes), under srun, or give --shard I/N")]
    NoEnvironment,
    #[error("--shard auto: {index} is set but {count} is not: the shard count is unknown\nfix: set {count} to the number of shards (the kustomize base sets it from the Job's completions)")]
    NoCount { index: String, count: String },
    #[error("--shard auto: {name}={value:?} is not a shard count of 1 or more\nfix: set {name} to the number of shards")]
    BadCount { name: String, value: String },
    #[error("--shard auto: {name}={value:?} is not a shard index below the count {count}\nfix: check the Job's completions (or srun's --ntasks) and the count variable agree")]
    BadEnvironment {
        name: String,
        value: String,
        count: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn auto_reads_a_kubernetes_indexed_job_or_slurm() {
        let k8s = [(K8S_INDEX, "3"), (K8S_COUNT, "4")];
        assert_eq!(Shard::from_env(env(&k8s)), Ok(Shard { index: 3, count: 4 }));
        let slurm = [(SLURM_INDEX, "0"), (SLURM_COUNT, " 2 ")];
        assert_eq!(
            Shard::from_env(env(&slurm)),
            Ok(Shard { index: 0, count: 2 })
        );
        // Both: the Indexed Job's (a pod of a Job started under srun is unlikely, but the
        // Job's own variables are the more specific).
        let both = [
            (K8S_INDEX, "1"),
            (K8S_COUNT, "2"),
            (SLURM_INDEX, "5"),
            (SLURM_COUNT, "8"),
        ];
        assert_eq!(
            Shard::from_env(env(&both)),
            Ok(Shard { index: 1, count: 2 })
        );
    }

    #[test]
    fn auto_says_what_is_missing_or_wrong() {
        assert_eq!(Shard::from_env(env(&[])), Err(ShardError::NoEnvironment));
        assert_eq!(
            Shard::from_env(env(&[(SLURM_COUNT, "4")])),
            Err(ShardError::NoEnvironment),
            "a count alone names no shard"
        );
        let no_count = Shard::from_env(env(&[(K8S_INDEX, "0")])).expect_err("no count");
        assert_eq!(
            no_count,
            ShardError::NoCount {
                index: K8S_INDEX.into(),
                count: K8S_COUNT.into()
            }
        );
        assert!(no_count.to_string().contains("\nfix: set MCP_FLEET_SHARDS"));
        for count in ["0", "four", "-1", ""] {
            assert_eq!(
                Shard::from_env(env(&[(SLURM_INDEX, "0"), (SLURM_COUNT, count)])),
                Err(ShardError::BadCount {
                    name: SLURM_COUNT.into(),
                    value: count.into()
                }),
                "{count:?}"
            );
        }
        for index in ["4", "x", "-1", ""] {
            let e = Shard::from_env(env(&[(K8S_INDEX, index), (K8S_COUNT, "4")]));
            assert_eq!(
                e,
                Err(ShardError::BadEnvironment {
                    name: K8S_INDEX.into(),
                    value: index.into(),
                    count: "4".into()
                }),
                "{index:?}"
            );
        }
        for e in [ShardError::NoEnvironment, ShardError::Syntax("x".into())] {
            assert!(e.to_string().contains("\nfix: "), "{e}");
        }
    }

    #[test]
    fn parse_takes_i_of_n() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
        assert_eq!(Shard::parse(" 0 / 1 "), Ok(Shard::ONE));
        for bad in ["3/3", "1", "a/b", "0/0", "-1/2", ""] {
            assert_eq!(
                Shard::parse(bad),
                Err(ShardError::Syntax(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn shares_add_up_and_global_indexes_are_ours() {
        for n in [1u32, 2, 3, 7] {
            for total in [0u64, 1, 2, 6, 7, 100, 101] {
                let shards = (0..n).map(|index| Shard { index, count: n });
                let sum: u64 = shards.clone().map(|s| s.share(total)).sum();
                assert_eq!(sum, total, "{n} shards of {total}");
                for s in shards {
                    let mine: Vec<u64> = (0..total).filter(|&k| s.owns(k)).collect();
                    let by_global: Vec<u64> = (0..s.share(total)).map(|c| s.global(c)).collect();
                    assert_eq!(mine, by_global, "{s} of {total}");
                }
            }
        }
    }

    #[test]
    fn local_shards_split_the_source_addresses() {
        let all = ["a", "b", "c", "d", "e"];
        let s = |index| Shard { index, count: 2 };
        assert_eq!(s(0).split_sources(&all), ["a", "c", "e"]);
        assert_eq!(s(1).split_sources(&all), ["b", "d"]);
        let few = ["a"];
        assert_eq!(s(1).split_sources(&few), ["a"], "fewer than N: all of them");
        assert!(s(0).split_sources::<&str>(&[]).is_empty());
    }

    #[test]
    fn the_profile_seed_is_fixed_by_the_bytes() {
        // FNV-1a 64 of "a" (a published test vector), so it cannot drift between builds.
        assert_eq!(profile_seed("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(profile_seed(""), 0xcbf2_9ce4_8422_2325);
        assert_ne!(
            profile_seed("name = \"a\"\n"),
            profile_seed("name = \"b\"\n")
        );
    }
}
