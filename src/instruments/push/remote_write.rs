//! Prometheus remote write 1.0: the series of one push as a `WriteRequest` (protobuf,
//! then snappy's block format), latencies as native histograms. The messages are the
//! fields of `prompb/types.proto` and `remote.proto` this output sends, declared with
//! prost's derive (no protoc, no generated code in the tree).

use super::series::{Series, Value};
use crate::metrics::native::{NativeHistogram, SCHEMA};

#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// Sorted by name, `__name__` first.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// An integer native histogram (`count_int`, `zero_count_int`, positive deltas).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Histogram {
    #[prost(uint64, tag = "1")]
    pub count_int: u64,
    #[prost(double, tag = "3")]
    pub sum: f64,
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    #[prost(uint64, tag = "6")]
    pub zero_count_int: u64,
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    /// 0: unknown (the receiver detects resets itself).
    #[prost(int32, tag = "14")]
    pub reset_hint: i32,
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BucketSpan {
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

/// The request of one push, every series stamped `timestamp_ms`.
pub fn request(series: &[Series], timestamp_ms: i64) -> WriteRequest {
    let timeseries = series
        .iter()
        .map(|s| {
            let mut labels: Vec<Label> = std::iter::once(("__name__", s.name.to_string()))
                .chain(s.labels.iter().cloned())
                .map(|(name, value)| Label {
                    name: name.to_string(),
                    value,
                })
                .collect();
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            let (samples, histograms) = match &s.value {
                Value::Counter(v) | Value::Gauge(v) => (
                    vec![Sample {
                        value: *v,
                        timestamp: timestamp_ms,
                    }],
                    Vec::new(),
                ),
                Value::Histogram(h) => (Vec::new(), vec![histogram(h, timestamp_ms)]),
            };
            TimeSeries {
                labels,
                samples,
                histograms,
            }
        })
        .collect();
    WriteRequest { timeseries }
}

fn histogram(h: &NativeHistogram, timestamp_ms: i64) -> Histogram {
    let (spans, deltas) = h.spans_and_deltas();
    Histogram {
        count_int: h.count,
        sum: h.sum,
        schema: SCHEMA,
        zero_threshold: 0.0,
        zero_count_int: 0,
        positive_spans: spans
            .into_iter()
            .map(|(offset, length)| BucketSpan { offset, length })
            .collect(),
        positive_deltas: deltas,
        reset_hint: 0,
        timestamp: timestamp_ms,
    }
}

/// The body as sent: the protobuf, snappy-compressed (block format, as the protocol
/// says; not the framed stream format).
pub fn body(request: &WriteRequest) -> Vec<u8> {
    let raw = prost::Message::encode_to_vec(request);
    // Compressing a byte slice that fits in memory cannot fail but for its size
    // (over 4 GiB): a push is a few hundred kilobytes.
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn a_request_round_trips_with_sorted_labels_and_a_native_histogram() {
        let h = NativeHistogram {
            count: 3,
            sum: 0.003,
            buckets: [(-320, 2), (-318, 1)].into_iter().collect(),
        };
        let series = vec![
            Series {
                name: "mcp_fleet_phase_duration_seconds",
                labels: vec![("run", "r".into()), ("phase", "initialize".into())],
                value: Value::Histogram(h),
            },
            Series {
                name: "mcp_fleet_sessions_in_flight",
                labels: vec![("run", "r".into())],
                value: Value::Gauge(4.0),
            },
        ];
        let req = request(&series, 1_700_000_000_000);
        let bytes = snap::raw::Decoder::new()
            .decompress_vec(&body(&req))
            .expect("snappy block");
        let back = WriteRequest::decode(bytes.as_slice()).expect("protobuf");
        assert_eq!(back, req);
        let names: Vec<&str> = back.timeseries[0]
            .labels
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(names, ["__name__", "phase", "run"]);
        let hist = &back.timeseries[0].histograms[0];
        assert_eq!((hist.count_int, hist.schema), (3, SCHEMA));
        assert_eq!(
            hist.positive_spans,
            [
                BucketSpan {
                    offset: -320,
                    length: 1
                },
                BucketSpan {
                    offset: 1,
                    length: 1
                }
            ]
        );
        assert_eq!(hist.positive_deltas, [2, -1]);
        assert_eq!(back.timeseries[1].samples[0].value, 4.0);
    }
}
