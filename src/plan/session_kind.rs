//! What kind of sessions a persona opens: the handshake's era and the session's shape
//! (churn or long-lived). Its own file because the persona, its habits and its client
//! faults all check against these, and the persona is built from the other two.

/// Which handshake a persona uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraMode {
    /// `initialize` → `notifications/initialized` (≤ 2025-11-25).
    Legacy,
    /// `server/discover` and per-request `_meta` (2026-07-28).
    Modern,
    /// Probe with `server/discover`, fall back to the handshake.
    Auto,
}

impl EraMode {
    pub fn name(self) -> &'static str {
        match self {
            EraMode::Legacy => "legacy",
            EraMode::Modern => "modern",
            EraMode::Auto => "auto",
        }
    }

    pub const ALL: [EraMode; 3] = [EraMode::Legacy, EraMode::Modern, EraMode::Auto];

    pub fn from_name(s: &str) -> Option<EraMode> {
        EraMode::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// How a persona's sessions live.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Open, run the scenario once, close (handshake throughput).
    Churn,
    /// Stay open for the whole run, repeating the scenario; `pace` iterations per second
    /// per session (`None`: back to back, with the load's think time between).
    LongLived { pace: Option<f64> },
}
