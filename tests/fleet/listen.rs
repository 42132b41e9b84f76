//! `subscriptions/listen` (2026-07-28) against the built-in server: listeners over
//! Streamable HTTP, WebSocket and stdio hear every change (a `fanout` phase, nothing
//! missed, no finding), a listen the server ends is heard again, and each listen mistake
//! (`serve --fault listen-*`) makes its finding — or its count — while the healthy server
//! makes none.

use crate::support::{
    builtin_http, builtin_stdio, check_schema, codes, count, counter, run_profile, FleetRun,
};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::{Fault, HttpServer, ServerOptions};
use serde_json::Value;
use std::time::Duration;

/// The tool list changes this often in these tests.
const EVERY: Duration = Duration::from_millis(150);

async fn server(faults: &[Fault], lifetime: Option<Duration>) -> HttpServer {
    builtin_http(ServerOptions {
        faults: faults.to_vec(),
        change_every: Some(EVERY),
        listen_lifetime: lifetime,
        ..ServerOptions::default()
    })
    .await
}

/// A listening persona per `(name, transport, target)`, each session held for the run,
/// calling a tool twice a second.
fn profile(personas: &[(&str, &str, String)], duration: &str, listen: &str) -> String {
    let mut p = format!(
        "name = \"listen\"\n[target]\ntimeout = \"2s\"\n[load]\nclients = {}\nduration = \"{duration}\"\n",
        2 * personas.len()
    );
    for (name, transport, target) in personas {
        p.push_str(&format!(
            "[[persona]]\nname = \"{name}\"\ntransport = \"{transport}\"\n{target}\n\
             protocol_version = \"2026-07-28\"\nshape = \"long-lived\"\npace = \"2/s\"\n\
             listen = {listen}\n"
        ));
    }
    p.push_str(
        "[[scenario]]\nname = \"call\"\nsteps = [{ op = \"tools/call\", tool = \"echo\", arguments = { message = \"hi\" } }]\n",
    );
    p
}

async fn run(text: &str) -> Value {
    run_profile(text, None).await
}

fn over_http(srv: &HttpServer) -> (&'static str, &'static str, String) {
    ("http", "http", format!("url = \"{}\"", srv.url()))
}

#[tokio::test]
async fn listeners_on_every_modern_transport_hear_every_change() {
    let srv = server(&[], None).await;
    let stdio = format!("{} --change-every 150ms", builtin_stdio(&[]));
    let personas = [
        over_http(&srv),
        ("ws", "ws", format!("url = \"ws://{}/ws\"", srv.addr)),
        ("stdio", "stdio", format!("command = {:?}", stdio)),
    ];
    let json = run(&profile(&personas, "2500ms", "{ lists = [\"tools\"] }")).await;
    assert_eq!(json["sessions"]["failed"], 0, "{:#}", json["failures"]);
    assert_eq!(
        codes(&json),
        Vec::<String>::new(),
        "a healthy server: no finding"
    );
    let sessions = json["sessions"]["started"].as_u64().unwrap_or(0);
    assert_eq!(sessions, 6);
    assert_eq!(counter(&json, "listen_opened"), sessions);
    assert_eq!(count(&json, "subscriptions/listen"), sessions);
    assert_eq!(json["phases"]["subscriptions/listen"]["errors"], 0);
    // ~2.5 s / 150 ms ≈ 16 changes to each of 6 listeners.
    let heard = counter(&json, "listen_notifications");
    assert!(heard >= 6 * 8, "each listener heard the changes: {heard}");
    assert_eq!(
        count(&json, "fanout"),
        heard,
        "every change was stamped and timed"
    );
    assert_eq!(counter(&json, "listen_changes_missed"), 0);
    for persona in ["http", "ws", "stdio"] {
        let fanout = &json["personas"][persona]["phases"]["fanout"];
        assert!(
            fanout["count"].as_u64().unwrap_or(0) > 0,
            "{persona}: {fanout:#}"
        );
    }
    // Each change made the listener fetch the tool list again (list_changed = refetch).
    assert!(counter(&json, "list_refetch") > 0);
    assert!(count(&json, "tools/list") >= counter(&json, "list_refetch"));
    let p99 = json["phases"]["fanout"]["p99_us"]
        .as_f64()
        .unwrap_or(f64::MAX);
    assert!(p99 < 1e6, "loopback fan-out within a second: {p99} µs");
}

#[tokio::test]
async fn a_listen_the_server_ends_cleanly_is_heard_again_without_a_finding() {
    let srv = server(&[], Some(Duration::from_millis(400))).await;
    let json = run(&profile(
        &[over_http(&srv)],
        "1500ms",
        "{ lists = [\"tools\"] }",
    ))
    .await;
    assert_eq!(json["sessions"]["failed"], 0, "{:#}", json["failures"]);
    assert_eq!(codes(&json), Vec::<String>::new());
    let ended = counter(&json, "listen_ended");
    assert!(ended >= 2, "each listen was ended every 400 ms: {ended}");
    assert_eq!(
        counter(&json, "listen_reopened"),
        ended,
        "and sent again at once"
    );
    assert_eq!(counter(&json, "listen_dropped"), 0);
    assert_eq!(counter(&json, "listen_changes_missed"), 0);
}

#[tokio::test]
async fn a_listen_the_server_cancels_is_a_clean_end_too() {
    let srv = builtin_http(ServerOptions {
        change_every: Some(EVERY),
        listen_lifetime: Some(Duration::from_millis(400)),
        listen_end_cancelled: true,
        ..ServerOptions::default()
    })
    .await;
    let json = run(&profile(
        &[over_http(&srv)],
        "1500ms",
        "{ lists = [\"tools\"] }",
    ))
    .await;
    assert_eq!(json["sessions"]["failed"], 0, "{:#}", json["failures"]);
    assert_eq!(
        codes(&json),
        Vec::<String>::new(),
        "notifications/cancelled is an end"
    );
    let ended = counter(&json, "listen_ended");
    assert!(ended >= 2, "{ended}");
    assert_eq!(counter(&json, "listen_reopened"), ended);
    assert_eq!(counter(&json, "listen_dropped"), 0);
}

#[tokio::test]
async fn the_shipped_modern_listen_profile_runs_green_against_the_built_in_server() {
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/modern-listen.toml");
    let json = FleetRun::new(RunArgs {
        profile: Some(profile.into()),
        overrides: mcp_fleet::cli::Overrides {
            duration: Some("5s".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(json["sessions"]["failed"], 0, "{:#}", json["failures"]);
    assert_eq!(codes(&json), Vec::<String>::new());
    let sessions = json["sessions"]["started"].as_u64().unwrap_or(0);
    assert_eq!(counter(&json, "listen_opened"), sessions);
    assert!(
        count(&json, "fanout") >= sessions,
        "a change or two for each listener"
    );
    assert_eq!(counter(&json, "listen_changes_missed"), 0);
    let held = json["thresholds"].as_array().into_iter().flatten();
    assert!(held.clone().count() == 2 && held.into_iter().all(|t| t["passed"] == true));
}

/// The fault over `via` (`http` or `stdio`) makes the finding `code`.
async fn finds(fault: Fault, via: &str, code: &str, lifetime: Option<Duration>) -> Value {
    let srv = server(&[fault], lifetime).await;
    let persona = match via {
        "stdio" => {
            let cmd = format!("{} --change-every 150ms", builtin_stdio(&[fault]));
            ("stdio", "stdio", format!("command = {cmd:?}"))
        }
        _ => over_http(&srv),
    };
    let json = run(&profile(&[persona], "1200ms", "{ lists = [\"tools\"] }")).await;
    let found = codes(&json);
    assert!(
        found.iter().any(|c| c == code),
        "{} over {via}: want {code}, got {found:?}",
        fault.name()
    );
    let other: Vec<&String> = found.iter().filter(|c| c.as_str() != code).collect();
    assert!(
        other.is_empty(),
        "{}: only {code}, not {other:?}",
        fault.name()
    );
    json
}

#[tokio::test]
async fn a_listen_cut_without_an_end_is_a_finding_and_is_sent_again_with_backoff() {
    let lifetime = Some(Duration::from_millis(300));
    let json = finds(
        Fault::ListenNoEnd,
        "http",
        "listen.ended-without-notice",
        lifetime,
    )
    .await;
    assert!(counter(&json, "listen_dropped") >= 1);
    assert_eq!(counter(&json, "listen_ended"), 0);
    assert!(
        counter(&json, "listen_reopened") >= 1,
        "sent again after its backoff"
    );
    assert_eq!(
        json["sessions"]["failed"], 0,
        "a dropped listen fails no session"
    );
}

#[tokio::test]
async fn changes_on_another_request_stream_are_a_finding() {
    finds(
        Fault::ListenOnRequestStream,
        "http",
        "listen.notification-off-listen",
        None,
    )
    .await;
}

#[tokio::test]
async fn listen_messages_without_the_subscription_id_are_a_finding_on_http_and_stdio() {
    for via in ["http", "stdio"] {
        finds(
            Fault::ListenNoId,
            via,
            "listen.missing-subscription-id",
            None,
        )
        .await;
    }
}

#[tokio::test]
async fn a_notification_the_filter_did_not_ask_for_is_a_finding() {
    finds(
        Fault::ListenUnasked,
        "http",
        "listen.unrequested-notification",
        None,
    )
    .await;
}

#[tokio::test]
async fn a_listen_with_no_acknowledgement_first_is_a_finding() {
    let json = finds(
        Fault::ListenNoAck,
        "http",
        "listen.not-acknowledged-first",
        None,
    )
    .await;
    // Opened all the same, when its first change came.
    assert_eq!(counter(&json, "listen_opened"), 2);
}

#[tokio::test]
async fn changes_a_listener_never_got_are_counted() {
    let srv = server(&[Fault::ListenLossy], None).await;
    let json = run(&profile(
        &[over_http(&srv)],
        "1500ms",
        "{ lists = [\"tools\"] }",
    ))
    .await;
    let missed = counter(&json, "listen_changes_missed");
    let heard = counter(&json, "listen_notifications");
    assert!(
        missed >= 4,
        "every other change missed: {missed} missed, {heard} heard"
    );
    assert!(
        missed.abs_diff(heard) <= 4,
        "about as many missed as heard: {missed} vs {heard}"
    );
    assert_eq!(
        codes(&json),
        Vec::<String>::new(),
        "a count, not a protocol finding"
    );
}

#[tokio::test]
async fn a_legacy_persona_cannot_listen() {
    let srv = server(&[], None).await;
    let text = profile(&[over_http(&srv)], "1s", "{ lists = [\"tools\"] }").replace(
        "protocol_version = \"2026-07-28\"",
        "protocol_version = \"2025-11-25\"",
    );
    let err = FleetRun::new(RunArgs::default())
        .profile(&text)
        .error()
        .await;
    let text = format!("{err:#}");
    assert!(
        text.contains("listen") && text.contains("2026-07-28"),
        "{text}"
    );
}

#[tokio::test]
async fn a_list_changed_storm_reaches_every_listener() {
    // No timer: the only changes are the storm's, 5 at 50 % of the run.
    let srv = builtin_http(ServerOptions::default()).await;
    let text = profile(&[over_http(&srv)], "1600ms", "{ lists = [\"tools\"] }").replace(
        "[[persona]]",
        "events = [{ at = \"50%\", storm = \"list-changed\", count = 5 }]\n[[persona]]",
    );
    let json = run(&text).await;
    assert_eq!(json["sessions"]["failed"], 0, "{:#}", json["failures"]);
    assert_eq!(counter(&json, "changes_triggered"), 5);
    assert_eq!(
        counter(&json, "listen_notifications"),
        2 * 5,
        "each listener heard all 5"
    );
    assert_eq!(count(&json, "fanout"), 10);
    assert_eq!(counter(&json, "listen_changes_missed"), 0);
    assert_eq!(codes(&json), Vec::<String>::new());
}
