//! Every transport against the built-in server (which serves all four on one port, and
//! stdio by spawning itself), separately and mixed in one run.

use crate::support::{check_schema, count, FleetRun};
use mcp_fleet::cli::{ClientArgs, RunArgs};
use std::path::PathBuf;

#[tokio::test]
async fn the_quickstart_over_each_transport() {
    for transport in ["http", "sse", "ws", "stdio"] {
        let json = FleetRun::new(RunArgs {
            profile: Some(PathBuf::from("profiles/quickstart.toml")),
            overrides: mcp_fleet::cli::Overrides {
                client: ClientArgs {
                    transport: mcp_fleet::protocol::TransportKind::from_name(transport),
                    ..Default::default()
                },
                clients: Some(4),
                sessions: Some(24),
                ..Default::default()
            },
            ..RunArgs::default()
        })
        .run()
        .await
        .json;
        check_schema(&json);
        assert_eq!(json["run"]["transport"], transport);
        assert_eq!(json["sessions"]["completed"], 24, "{transport}: {json:#}");
        assert_eq!(json["failures"], serde_json::json!({}), "{transport}");
        assert!(count(&json, "tools/call") >= 24, "{transport}");
        assert_eq!(json["transports"][transport]["session"]["count"], 24);
    }
}

#[tokio::test]
async fn four_transports_in_one_run() {
    let mut text = String::from("[load]\nclients = 8\nsessions = 80\n");
    for t in ["http", "sse", "ws", "stdio"] {
        text.push_str(&format!(
            "[[persona]]\nname = \"{t}-client\"\ntransport = \"{t}\"\n"
        ));
    }
    text.push_str(
        "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }, { op = \"tools/call\", tool = \"echo\", arguments = { message = \"x\" } }]\n",
    );
    let json = FleetRun::default().profile(&text).run().await.json;
    check_schema(&json);
    assert_eq!(json["run"]["transport"], "http+sse+stdio+ws");
    assert_eq!(json["sessions"]["completed"], 80);
    assert_eq!(json["failures"], serde_json::json!({}));
    let mut total = 0;
    for t in ["http", "sse", "ws", "stdio"] {
        let n = json["transports"][t]["session"]["count"]
            .as_u64()
            .unwrap_or(0);
        assert!(n > 0, "{t} ran");
        total += n;
    }
    assert_eq!(total, 80);
}
