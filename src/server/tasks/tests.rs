use super::*;
use tokio::sync::mpsc;

fn store(faults: TaskFaults) -> Arc<TaskStore> {
    Arc::new(TaskStore::new(faults))
}

fn call(tool: &str, ms: u64, task: bool) -> Value {
    let mut p = json!({"name": tool, "arguments": {"ms": ms}});
    if task {
        p["task"] = json!({"ttl": 5000});
    }
    p
}

async fn create(s: &Arc<TaskStore>, tool: &str, ms: u64, notifier: &Notifier) -> String {
    let r = tools_call(s, true, &call(tool, ms, true), notifier)
        .await
        .expect("a task call")
        .expect("created");
    assert_eq!(r["task"]["status"], "working", "{r}");
    assert_eq!(r["task"]["ttl"], 5000);
    assert_eq!(r["task"]["pollInterval"], POLL_INTERVAL_MS);
    assert!(r["task"]["createdAt"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    r["task"]["taskId"].as_str().expect("taskId").to_string()
}

async fn ask(s: &TaskStore, method: &str, id: &str) -> Result<Value, RpcError> {
    s.request(method, &json!({"taskId": id})).await
}

#[tokio::test]
async fn a_task_runs_to_completion_and_its_result_waits_for_it() {
    let s = store(TaskFaults::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let id = create(&s, "slow_report", 60, &Notifier::new(tx)).await;
    let got = ask(&s, m::TASKS_GET, &id).await.expect("get");
    assert_eq!(got["status"], "working");
    let t = Instant::now();
    let result = ask(&s, m::TASKS_RESULT, &id).await.expect("result");
    assert!(
        t.elapsed() >= Duration::from_millis(40),
        "waited for the work"
    );
    assert_eq!(result["structuredContent"]["ms"], 60);
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id.as_str());
    let got = ask(&s, m::TASKS_GET, &id).await.expect("get");
    assert_eq!(got["status"], "completed");
    let note: Value =
        serde_json::from_slice(&rx.recv().await.expect("a notification")).expect("json");
    assert_eq!(note["method"], m::TASKS_STATUS);
    assert_eq!(note["params"]["status"], "completed");
    let err = ask(&s, m::TASKS_CANCEL, &id).await.expect_err("terminal");
    assert_eq!(err.code, codes::INVALID_PARAMS);
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled() {
    let s = store(TaskFaults::default());
    let id = create(&s, "slow_report", 50, &Notifier::none()).await;
    let c = ask(&s, m::TASKS_CANCEL, &id).await.expect("cancel");
    assert_eq!(c["status"], "cancelled");
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        ask(&s, m::TASKS_GET, &id).await.expect("get")["status"],
        "cancelled"
    );
    assert!(ask(&s, m::TASKS_RESULT, &id).await.is_err(), "no result");
    assert_eq!(
        ask(&s, m::TASKS_GET, "nope")
            .await
            .expect_err("unknown")
            .code,
        codes::INVALID_PARAMS
    );
}

#[tokio::test]
async fn task_support_decides_who_may_call_what() {
    let s = store(TaskFaults::default());
    let n = Notifier::none();
    let direct = tools_call(&s, true, &call("slow_report", 1, false), &n)
        .await
        .expect("ours");
    assert_eq!(
        direct.expect_err("needs a task").code,
        codes::METHOD_NOT_FOUND
    );
    let quick = tools_call(&s, true, &call("quick_report", 1, false), &n)
        .await
        .expect("ours");
    assert_eq!(quick.expect("direct")["structuredContent"]["ms"], 1);
    let echo = tools_call(&s, true, &call("echo", 1, true), &n)
        .await
        .expect("ours");
    assert_eq!(echo.expect_err("forbidden").code, codes::METHOD_NOT_FOUND);
    assert!(tools_call(&s, true, &call("echo", 1, false), &n)
        .await
        .is_none());
    // Not told about tasks: the task field is ignored and the tool runs.
    let old = tools_call(&s, false, &call("slow_report", 1, true), &n)
        .await
        .expect("ours");
    assert_eq!(old.expect("direct")["structuredContent"]["ms"], 1);
    let get = dispatch(&s, false, m::TASKS_GET, &json!({"taskId": "x"}), &n).await;
    assert_eq!(
        get.expect("ours").expect_err("undeclared").code,
        codes::METHOD_NOT_FOUND
    );
    let bad = json!({"name": "slow_report", "arguments": {"ms": -1}, "task": {}});
    let bad = tools_call(&s, true, &bad, &n);
    assert_eq!(
        bad.await.expect("ours").expect_err("bad ms").code,
        codes::INVALID_PARAMS
    );
}

#[tokio::test]
async fn tasks_list_is_paginated_and_expired_tasks_go() {
    let s = store(TaskFaults {
        stuck: true,
        ..Default::default()
    });
    for _ in 0..25 {
        create(&s, "slow_report", 1, &Notifier::none()).await;
    }
    let first = s.request(m::TASKS_LIST, &json!({})).await.expect("list");
    assert_eq!(first["tasks"].as_array().map(Vec::len), Some(PAGE));
    let cursor = first["nextCursor"].clone();
    let rest = s
        .request(m::TASKS_LIST, &json!({"cursor": cursor}))
        .await
        .expect("page 2");
    assert_eq!(rest["tasks"].as_array().map(Vec::len), Some(5));
    assert!(rest.get("nextCursor").is_none());
    let p = json!({"name": "slow_report", "arguments": {"ms": 1}, "task": {"ttl": 1}});
    let r = tools_call(&s, true, &p, &Notifier::none())
        .await
        .expect("ours")
        .expect("created");
    tokio::time::sleep(Duration::from_millis(10)).await;
    let id = r["task"]["taskId"].as_str().expect("id");
    assert!(ask(&s, m::TASKS_GET, id).await.is_err(), "expired");
}

#[tokio::test]
async fn the_task_faults_do_what_they_say() {
    let stuck = store(TaskFaults {
        stuck: true,
        ..Default::default()
    });
    let id = create(&stuck, "slow_report", 1, &Notifier::none()).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(
        ask(&stuck, m::TASKS_GET, &id).await.expect("get")["status"],
        "working"
    );

    let regress = store(TaskFaults {
        regress: true,
        ..Default::default()
    });
    let id = create(&regress, "slow_report", 1, &Notifier::none()).await;
    ask(&regress, m::TASKS_RESULT, &id).await.expect("result");
    assert_eq!(
        ask(&regress, m::TASKS_GET, &id).await.expect("get")["status"],
        "completed"
    );
    assert_eq!(
        ask(&regress, m::TASKS_GET, &id).await.expect("get")["status"],
        "working"
    );

    let early = store(TaskFaults {
        early_result: true,
        ..Default::default()
    });
    let id = create(&early, "slow_report", 500, &Notifier::none()).await;
    let t = Instant::now();
    ask(&early, m::TASKS_RESULT, &id)
        .await
        .expect("result at once");
    assert!(t.elapsed() < Duration::from_millis(400));
    assert_eq!(
        ask(&early, m::TASKS_GET, &id).await.expect("get")["status"],
        "working"
    );
}

/// Through the handler: the capability is told to 2025-11-25 sessions only, and the
/// task tools are listed with their `execution.taskSupport`.
async fn through(
    h: &crate::server::handler::Handler,
    s: &crate::server::handler::Session,
    method: &str,
    params: Value,
) -> Value {
    let msg = crate::protocol::Incoming::Request {
        id: crate::protocol::RequestId::Number(1),
        method: method.into(),
        params: Some(params),
    };
    let reply = h.handle(s, msg, &Notifier::none()).await.expect("reply");
    serde_json::from_slice(&reply).expect("json")
}

#[tokio::test]
async fn the_handler_declares_tasks_to_2025_11_25_sessions() {
    use crate::server::handler::{Handler, Session};
    let h = Handler::new(&crate::server::ServerOptions {
        tasks: true,
        ..Default::default()
    });
    let new = Session::new();
    let r = through(
        &h,
        &new,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    assert_eq!(r["result"]["capabilities"]["tasks"], capability());
    assert_eq!(
        r["result"]["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    let listed = through(&h, &new, m::TOOLS_LIST, json!({})).await;
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let slow = tools
        .iter()
        .find(|t| t["name"] == "slow_report")
        .expect("listed");
    assert_eq!(slow["execution"]["taskSupport"], "required");
    let created = through(&h, &new, m::TOOLS_CALL, call("slow_report", 1, true)).await;
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    let old = Session::new();
    let r = through(
        &h,
        &old,
        "initialize",
        json!({"protocolVersion": "2025-06-18"}),
    )
    .await;
    assert!(r["result"]["capabilities"].get("tasks").is_none(), "{r}");
    let direct = through(&h, &old, m::TOOLS_CALL, call("slow_report", 1, false)).await;
    assert_eq!(direct["result"]["structuredContent"]["ms"], 1, "{direct}");
}
