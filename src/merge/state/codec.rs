//! The state's histograms and phase tables to and from their written form
//! (HdrHistogram V2 deflate, base64; phases by their stable names).

use super::{PhaseState, TableState};
use crate::metrics::{FailureKind, Phase, PhaseStats, PhaseTable};
use crate::protocol::Era;
use anyhow::Context;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

pub(super) fn encode(h: &Histogram<u64>) -> anyhow::Result<String> {
    let mut raw = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut raw)
        .map_err(|e| anyhow::anyhow!("encoding a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(raw))
}

pub(super) fn decode(text: &str) -> anyhow::Result<Histogram<u64>> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text)
        .context("a histogram is not base64")?;
    Deserializer::new()
        .deserialize(&mut raw.as_slice())
        .map_err(|e| anyhow::anyhow!("a histogram does not decode: {e:?}"))
}

pub(super) fn phase_state(s: &PhaseStats) -> anyhow::Result<PhaseState> {
    Ok(PhaseState {
        service: encode(&s.service)?,
        response: encode(&s.response)?,
        ok: s.ok,
        tool_errors: s.tool_errors,
        clamped: s.clamped,
        skipped: s.skipped,
        failures: s.failures.iter().map(|(k, v)| (k.name(), *v)).collect(),
    })
}

pub(super) fn phase_stats(s: &PhaseState) -> anyhow::Result<PhaseStats> {
    let mut failures = BTreeMap::new();
    for (name, n) in &s.failures {
        let kind = FailureKind::from_name(name)
            .with_context(|| format!("unknown failure kind `{name}`"))?;
        failures.insert(kind, *n);
    }
    let mut out = PhaseStats::default();
    // Into the collector's own configuration, so later additions cannot fail.
    add(&mut out.service, &decode(&s.service)?)?;
    add(&mut out.response, &decode(&s.response)?)?;
    out.ok = s.ok;
    out.tool_errors = s.tool_errors;
    out.clamped = s.clamped;
    out.skipped = s.skipped;
    out.failures = failures;
    Ok(out)
}

/// Add `from` into `to`, an error when it does not fit.
pub fn add(to: &mut Histogram<u64>, from: &Histogram<u64>) -> anyhow::Result<()> {
    to.add(from)
        .map_err(|e| anyhow::anyhow!("a histogram does not add: {e:?}"))
}

pub(super) fn table_state(t: &PhaseTable) -> anyhow::Result<TableState> {
    t.active()
        .map(|(p, s)| Ok((p.name().to_string(), phase_state(s)?)))
        .collect()
}

pub(super) fn phase_table(t: &TableState) -> anyhow::Result<PhaseTable> {
    let mut out = PhaseTable::default();
    for (name, s) in t {
        let phase = Phase::from_name(name).with_context(|| format!("unknown phase `{name}`"))?;
        *out.get_mut(phase) = phase_stats(s)?;
    }
    Ok(out)
}

pub(super) fn by_name<T: Copy>(
    all: impl IntoIterator<Item = T>,
    name: impl Fn(T) -> String,
    text: &str,
) -> Option<T> {
    all.into_iter().find(|x| name(*x) == text)
}

pub(super) fn era_of(name: &str) -> Option<Era> {
    by_name([Era::Legacy, Era::Modern], |e| e.name().into(), name)
}
