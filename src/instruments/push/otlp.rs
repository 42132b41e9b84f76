//! OTLP metrics over HTTP/protobuf (`--push otlp=URL`, e.g.
//! `http://collector:4318/v1/metrics`): the series of one push as an
//! `ExportMetricsServiceRequest`, built from the OpenTelemetry project's own message
//! types (`opentelemetry-proto`). Counters are cumulative monotonic sums, gauges gauges,
//! latencies exponential histograms at the native histograms' scale (an OTLP bucket `i`
//! is Prometheus' `i + 1`: OTLP's buckets hold (base^i, base^(i+1)]).
//!
//! The run and the shard are resource attributes (`mcp_fleet.run`, `mcp_fleet.shard`,
//! with `service.name` and `service.instance.id`), and also attributes of every point
//! (`run`, `shard`): a backend that keeps resource attributes apart (Prometheus puts them
//! in `target_info`) still has them on each series, so one dashboard reads both pushes.

use super::series::{Labels, Series, Value};
use crate::metrics::native::{NativeHistogram, SCHEMA};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    exponential_histogram_data_point::Buckets, metric::Data, number_data_point,
    AggregationTemporality, ExponentialHistogram, ExponentialHistogramDataPoint, Gauge, Metric,
    NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;

fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.to_string())),
        }),
        ..KeyValue::default()
    }
}

/// The request of one push: every series stamped `time_ns`, counted from `start_ns`
/// (the run's start).
pub fn request(
    series: &[Series],
    labels: &Labels,
    start_ns: u64,
    time_ns: u64,
) -> ExportMetricsServiceRequest {
    // One metric per name, its points in the order the series come.
    let mut metrics: Vec<Metric> = Vec::new();
    for s in series {
        let attributes: Vec<KeyValue> = s.labels.iter().map(|(k, v)| attribute(k, v)).collect();
        let at = metrics.iter().position(|m| m.name == s.name);
        let metric = match at {
            Some(i) => &mut metrics[i],
            None => {
                metrics.push(Metric {
                    name: s.name.to_string(),
                    data: Some(empty_data(&s.value)),
                    ..Metric::default()
                });
                let last = metrics.len() - 1;
                &mut metrics[last]
            }
        };
        match (&mut metric.data, &s.value) {
            (Some(Data::Sum(sum)), Value::Counter(v)) => {
                sum.data_points
                    .push(number(attributes, start_ns, time_ns, *v));
            }
            (Some(Data::Gauge(g)), Value::Gauge(v)) => {
                g.data_points
                    .push(number(attributes, start_ns, time_ns, *v));
            }
            (Some(Data::ExponentialHistogram(e)), Value::Histogram(h)) => {
                e.data_points
                    .push(exponential(attributes, start_ns, time_ns, h));
            }
            // One name is one kind of value in the series vocabulary.
            _ => {}
        }
    }
    let resource = Resource {
        attributes: vec![
            attribute("service.name", "mcp-fleet"),
            attribute(
                "service.instance.id",
                &format!("{}/{}", labels.run, labels.shard),
            ),
            attribute("mcp_fleet.run", &labels.run),
            attribute("mcp_fleet.shard", &labels.shard),
        ],
        ..Resource::default()
    };
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(resource),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "mcp-fleet".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..InstrumentationScope::default()
                }),
                metrics,
                ..ScopeMetrics::default()
            }],
            ..ResourceMetrics::default()
        }],
    }
}

fn empty_data(v: &Value) -> Data {
    let cumulative = AggregationTemporality::Cumulative as i32;
    match v {
        Value::Counter(_) => Data::Sum(Sum {
            data_points: Vec::new(),
            aggregation_temporality: cumulative,
            is_monotonic: true,
        }),
        Value::Gauge(_) => Data::Gauge(Gauge::default()),
        Value::Histogram(_) => Data::ExponentialHistogram(ExponentialHistogram {
            data_points: Vec::new(),
            aggregation_temporality: cumulative,
        }),
    }
}

fn number(attributes: Vec<KeyValue>, start_ns: u64, time_ns: u64, v: f64) -> NumberDataPoint {
    NumberDataPoint {
        attributes,
        start_time_unix_nano: start_ns,
        time_unix_nano: time_ns,
        value: Some(number_data_point::Value::AsDouble(v)),
        ..NumberDataPoint::default()
    }
}

fn exponential(
    attributes: Vec<KeyValue>,
    start_ns: u64,
    time_ns: u64,
    h: &NativeHistogram,
) -> ExponentialHistogramDataPoint {
    // Dense counts from the first bucket to the last (OTLP has no spans).
    let positive = match (h.buckets.keys().next(), h.buckets.keys().next_back()) {
        (Some(&first), Some(&last)) => {
            let counts = (first..=last)
                .map(|i| h.buckets.get(&i).copied().unwrap_or(0))
                .collect();
            Some(Buckets {
                offset: first - 1,
                bucket_counts: counts,
            })
        }
        _ => None,
    };
    ExponentialHistogramDataPoint {
        attributes,
        start_time_unix_nano: start_ns,
        time_unix_nano: time_ns,
        count: h.count,
        sum: Some(h.sum),
        scale: SCHEMA,
        zero_count: 0,
        positive,
        ..ExponentialHistogramDataPoint::default()
    }
}

/// The body as sent (`application/x-protobuf`).
pub fn body(request: &ExportMetricsServiceRequest) -> Vec<u8> {
    prost::Message::encode_to_vec(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TransportKind;

    #[test]
    fn series_become_sums_gauges_and_exponential_histograms_with_run_and_shard() {
        let h = NativeHistogram {
            count: 3,
            sum: 0.003,
            buckets: [(-320, 2), (-318, 1)].into_iter().collect(),
        };
        let labels = Labels {
            run: "r1".into(),
            shard: "0/2".into(),
            personas: vec![("p".into(), TransportKind::Stdio)],
        };
        let l = |phase: &str| vec![("run", "r1".to_string()), ("phase", phase.to_string())];
        let series = vec![
            Series {
                name: "mcp_fleet_phase_samples_total",
                labels: l("initialize"),
                value: Value::Counter(4.0),
            },
            Series {
                name: "mcp_fleet_phase_samples_total",
                labels: l("ping"),
                value: Value::Counter(2.0),
            },
            Series {
                name: "mcp_fleet_phase_duration_seconds",
                labels: l("initialize"),
                value: Value::Histogram(h),
            },
            Series {
                name: "mcp_fleet_sessions_in_flight",
                labels: vec![],
                value: Value::Gauge(3.0),
            },
        ];
        let req = request(&series, &labels, 10, 20);
        let back: ExportMetricsServiceRequest =
            prost::Message::decode(body(&req).as_slice()).expect("protobuf");
        assert_eq!(back, req);
        let rm = &back.resource_metrics[0];
        let keys: Vec<&str> = rm
            .resource
            .as_ref()
            .expect("resource")
            .attributes
            .iter()
            .map(|a| a.key.as_str())
            .collect();
        assert!(keys.contains(&"mcp_fleet.run") && keys.contains(&"service.name"));
        let metrics = &rm.scope_metrics[0].metrics;
        assert_eq!(metrics.len(), 3, "one metric per name");
        match &metrics[0].data {
            Some(Data::Sum(s)) => {
                assert!(s.is_monotonic);
                assert_eq!(s.data_points.len(), 2);
                assert_eq!(s.data_points[0].start_time_unix_nano, 10);
            }
            other => panic!("{other:?}"),
        }
        match &metrics[1].data {
            Some(Data::ExponentialHistogram(e)) => {
                let p = &e.data_points[0];
                assert_eq!((p.count, p.scale), (3, SCHEMA));
                let b = p.positive.as_ref().expect("buckets");
                assert_eq!(b.offset, -321, "OTLP bucket i is Prometheus' i + 1");
                assert_eq!(b.bucket_counts, [2, 0, 1]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(metrics[2].data, Some(Data::Gauge(_))));
    }
}
