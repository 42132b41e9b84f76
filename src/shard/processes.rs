//! `run --processes N`: N local shard processes from one command, then one merged
//! results folder, so a run past one process's open-file limit needs no cluster.
