//! Soak verdicts: what a long run did to the server, in figures a release can be gated
//! on. Leak slopes of the resource series (least squares over the steady part, with R²
//! and a 95 % confidence interval), latency and error drift per phase (the first steady
//! window against the last), the outages and reconnect storms the run lived through, and
//! whether the generator itself was the bottleneck. `summary.json` keeps them under
//! `soak` (their types are `summary::soak`'s); thresholds (`slope(server.rss) < 5MiB/h`,
//! `drift(p99(tools/call)) < 20%`) read them there.

mod drift;
pub mod fit;
mod observe;
mod rebuild;
pub mod shape;
mod verdicts;

pub use drift::{drift, Window};
pub use fit::{slope, slopes};
pub use observe::{decide, observe, reading, Decision, Reading};
pub use rebuild::refresh;
pub use verdicts::{generator, verdicts};
