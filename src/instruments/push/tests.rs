//! The push outputs against receivers that fail: down, refusing for good, down long
//! enough to fill the queue. Real sockets on 127.0.0.1, a real collector.

use super::*;
use crate::metrics::Collector;
use crate::protocol::TransportKind;
use axum::http::StatusCode;
use std::sync::atomic::AtomicU64;

/// A collector and push outputs to `url` every `every`: the pushers, the collector's
/// task and recorder (drop it to end the collector), and the live counters.
fn pushing(
    url: &str,
    every: Duration,
) -> (
    Pushers,
    tokio::task::JoinHandle<crate::metrics::Stats>,
    crate::metrics::Recorder,
    Arc<LiveCounters>,
) {
    let (collector, recorder) = Collector::new(vec![TransportKind::StreamableHttp], 0);
    let collector = collector.with_push();
    let snapshots = collector.snapshots();
    let collecting = tokio::spawn(collector.run());
    let live = Arc::new(LiveCounters::default());
    let (_latest, resources) = watch::channel(Arc::new(Latest::default()));
    let pushers = Pushers::start(
        &[PushTarget {
            kind: PushKind::PrometheusRw,
            url: url::Url::parse(url).expect("url"),
        }],
        every,
        Labels {
            run: "r".into(),
            shard: "0/1".into(),
            personas: vec![("p".into(), TransportKind::StreamableHttp)],
        },
        Sources {
            snapshots,
            live: live.clone(),
            resources,
            started: tokio::time::Instant::now(),
            started_at: SystemTime::now(),
        },
    );
    (pushers, collecting, recorder, live)
}

/// A receiver that is down: a port held by a socket that does not listen (so no other
/// process takes it meanwhile), where every connect is refused; keep the socket.
fn down() -> (tokio::net::TcpSocket, String) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let addr = socket.local_addr().expect("addr");
    (socket, format!("http://{addr}/api/v1/write"))
}

/// End the run: the collector's final figures, then the pushers' report.
async fn finish(
    pushers: Pushers,
    collecting: tokio::task::JoinHandle<crate::metrics::Stats>,
    recorder: crate::metrics::Recorder,
) -> PushSummary {
    drop(recorder);
    let mut stats = collecting.await.expect("the collector ends");
    let mut outputs = pushers.finish(stats.pushed.take()).await;
    assert_eq!(outputs.len(), 1);
    outputs.remove(0)
}

#[tokio::test]
async fn a_receiver_that_is_down_is_a_live_warning_and_a_count_never_an_error() {
    let (_held, url) = down();
    let (pushers, collecting, recorder, live) = pushing(&url, Duration::from_millis(200));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while live.push_warning().is_none() {
        assert!(tokio::time::Instant::now() < deadline, "no warning in 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let warning = live.push_warning().unwrap_or_default();
    assert!(warning.contains("PUSH FAILING: prometheus-rw"), "{warning}");
    let o = finish(pushers, collecting, recorder).await;
    assert!(
        o.failed >= 1 && !o.final_delivered && o.delivered == 0,
        "{o:?}"
    );
    assert!(
        o.last_error
            .as_deref()
            .is_some_and(|e| e.contains("connect")),
        "{o:?}"
    );
}

#[tokio::test]
async fn a_queue_that_fills_while_the_receiver_is_down_drops_its_oldest_pushes() {
    // Every 20 ms for ~0.6 s: past the first failure the retries back off, so pushes
    // pile up in the queue of 12 and the oldest go.
    let (_held, url) = down();
    let (pushers, collecting, recorder, _live) = pushing(&url, Duration::from_millis(20));
    tokio::time::sleep(Duration::from_millis(600)).await;
    let o = finish(pushers, collecting, recorder).await;
    assert!(o.dropped >= 1, "{o:?}");
    assert!(o.failed >= 1 && !o.final_delivered, "{o:?}");
}

#[tokio::test]
async fn a_refusal_for_good_is_not_sent_again_and_the_next_push_lands() {
    // A receiver that refuses the first push with 400 and takes the rest.
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    let app = axum::Router::new().route(
        "/api/v1/write",
        axum::routing::post(move || {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            async move {
                if n == 0 {
                    (StatusCode::BAD_REQUEST, "out of order sample")
                } else {
                    (StatusCode::NO_CONTENT, "")
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/api/v1/write");
    let (pushers, collecting, recorder, _live) = pushing(&url, Duration::from_millis(100));
    tokio::time::sleep(Duration::from_millis(350)).await;
    let o = finish(pushers, collecting, recorder).await;
    assert_eq!(o.dropped, 1, "the refused push, once: {o:?}");
    assert_eq!(o.failed, 1, "{o:?}");
    assert!(o.final_delivered && o.delivered >= 2, "{o:?}");
    assert_eq!(
        o.last_error.as_deref(),
        Some("status 400: out of order sample")
    );
    assert_eq!(seen.load(Ordering::Relaxed), o.delivered + 1, "no resend");
}
