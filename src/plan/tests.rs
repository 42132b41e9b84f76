//! Unit tests of the plan driver: defaults, overrides, sources, and errors that name
//! the file, the key and the fix.

use super::*;

fn plan(text: &str) -> Result<Plan, PlanError> {
    Plan::resolve(
        Profile::parse(text, "p.toml").expect("parses"),
        &Overrides::default(),
        "p.toml",
    )
}

#[test]
fn empty_profile_gets_defaults() {
    let p = plan("").expect("defaults");
    assert_eq!(p.target, Target::BuiltIn);
    assert_eq!(
        p.load.model,
        LoadModel::Closed {
            clients: Curve::constant(10.0, None)
        }
    );
    assert_eq!(p.load.sessions, Some(100));
    assert_eq!(p.personas.len(), 1);
    assert_eq!(
        p.personas[0].initialize_params["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(p.scenarios[0].name, "discovery");
    assert_eq!(p.scenarios[0].steps.len(), 3);
    assert!(p.tools.is_empty(), "discovery calls no tool");
}

#[test]
fn overrides_win_over_the_profile() {
    let profile = Profile::parse(
        "[target]\nurl = \"http://a/mcp\"\n[load]\nclients = 2\nsessions = 5\n",
        "p",
    )
    .expect("parses");
    let o = Overrides {
        stdio: Some("server --flag 'a b'".into()),
        clients: Some(7),
        duration: Some("2s".into()),
        seed: Some(9),
        client: ClientArgs {
            headers: vec!["Authorization: Bearer t".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let p = Plan::resolve(profile, &o, "p").expect("resolves");
    assert_eq!(
        p.target,
        Target::Stdio {
            program: "server".into(),
            args: vec!["--flag".into(), "a b".into()],
            env: vec![]
        }
    );
    assert_eq!(
        p.load.model,
        LoadModel::Closed {
            clients: Curve::constant(7.0, None)
        }
    );
    assert_eq!(p.load.sessions, Some(5));
    assert_eq!(p.load.duration, Some(Duration::from_secs(2)));
    assert_eq!(p.seed, 9);
    assert_eq!(p.connection.headers[0].0.as_str(), "authorization");
    assert_eq!(p.effective_profile.load.clients, Some(7));
}

#[test]
fn an_accepted_threshold_names_a_tool_the_scenarios_call() {
    let profile = |t: &str| {
        format!(
            "thresholds = [\"{t}\"]\n[[scenario]]\nname = \"a\"\n\
                 steps = [{{ op = \"mix\", calls = [{{ tool = \"echo\" }}] }}]\n"
        )
    };
    assert!(plan(&profile("accepted(echo) > 95%")).is_ok());
    assert!(plan(&profile("accepted(tools/call) > 95%")).is_ok());
    let e = plan(&profile("accepted(ecoh) > 95%"))
        .expect_err("a typo")
        .to_string();
    assert!(
        e.contains("thresholds[0]") && e.contains("no scenario calls tool `ecoh`"),
        "{e}"
    );
    assert!(
        e.contains("use one of the tools the scenarios call: echo"),
        "{e}"
    );
    let none = plan("thresholds = [\"accepted(echo) > 0.5\"]").expect_err("no calls");
    assert!(
        none.to_string().contains("no scenario calls a tool"),
        "{none}"
    );
}

#[test]
fn tools_are_interned_once() {
    let p = plan(
        r#"
[[scenario]]
name = "a"
steps = [{ op = "tools/call", tool = "echo" }, { op = "tools/call", tool = "add" }]
[[scenario]]
name = "b"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "x" } }]
"#,
    )
    .expect("resolves");
    assert_eq!(p.tools, ["echo", "add"]);
    assert!(matches!(
        p.scenarios[1].steps[0],
        Step::CallTool(Call { tool: 0, .. })
    ));
}

#[test]
fn errors_name_file_key_and_fix() {
    let cases = [
            ("[load]\nclients = 0\n", "p.toml: `load.clients`: is 0, so nothing would run\nfix: set clients = 1 or more"),
            ("[load]\nduration = \"soon\"\n", "p.toml: `load.duration`: \"soon\" is not a duration"),
            ("[target]\nurl = \"ftp://x\"\n", "p.toml: `target.url`: scheme \"ftp\" is not supported"),
            ("[target]\nurl = \"http://x\"\ncommand = \"y\"\n", "p.toml: `target`: both `url` and `command` are set"),
            ("[target]\ncommand = \"\"\n", "p.toml: `target.command`: is empty"),
            ("[[persona]]\nname = \"a\"\n[[persona]]\nname = \"a\"\n", "p.toml: `persona[1].name`: persona name \"a\" is used twice"),
            ("[[persona]]\nname = \"a\"\nweight = 0\n", "p.toml: `persona.weight`: every persona has weight 0"),
            ("[[persona]]\nname = \"a\"\nscenarios = [\"nope\"]\n", "p.toml: `persona[0].scenarios`: no scenario is named \"nope\"\nfix: use one of: discovery"),
            ("[[persona]]\nname = \"a\"\ncapabilities = 3\n", "p.toml: `persona[0].capabilities`: is not a table"),
            ("[[persona]]\nname = \"a\"\naccept_versions = []\n", "p.toml: `persona[0].accept_versions`: is empty"),
            ("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"pause\", duration = \"x\" }]\n", "p.toml: `scenario[0].steps[0].duration`: \"x\" is not a duration"),
            ("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"t\", arguments = 5 }]\n", "p.toml: `scenario[0].steps[0].arguments`: is not a table"),
            ("[target]\nheaders = { \"Bad Name\" = \"x\" }\n", "p.toml: `target.headers.Bad Name`: not a valid HTTP header name"),
        ];
    for (text, expected) in cases {
        let e = plan(text).expect_err(text).to_string();
        assert!(
            e.starts_with(expected),
            "for {text:?}\n got: {e}\nwant: {expected}"
        );
    }
}

#[test]
fn interval_is_resolved_in_the_plan() {
    let o = Overrides {
        interval: Some("250ms".into()),
        ..Default::default()
    };
    let p = Plan::resolve(Profile::default(), &o, "cli").expect("resolves");
    assert_eq!(p.interval, Duration::from_millis(250));
    assert_eq!(
        plan("").expect("defaults").interval,
        crate::metrics::DEFAULT_INTERVAL
    );
    let o = Overrides {
        interval: Some("1ms".into()),
        ..Default::default()
    };
    let e = Plan::resolve(Profile::default(), &o, "cli").expect_err("too short");
    assert_eq!(
            e.to_string(),
            "command line: `--interval`: \"1ms\" is not a duration of 10ms or more\nfix: use e.g. --interval 1s"
        );
}

#[test]
fn sources_are_chosen_in_order() {
    let none = Overrides::default();
    let with_target = Overrides {
        target: Some("http://127.0.0.1:1/mcp".into()),
        ..Default::default()
    };
    let file = Path::new("p.toml");
    assert_eq!(
        Source::choose(Some(file), &with_target),
        Source::File(file.into())
    );
    assert_eq!(Source::choose(None, &with_target), Source::CommandLine);
    assert_eq!(Source::choose(None, &none), Source::Quickstart);
    let p = Plan::from_source(&Source::Quickstart, &none).expect("the quickstart resolves");
    assert_eq!(p.name, "quickstart");
    let e =
        Plan::from_source(&Source::File("/nonexistent/p.toml".into()), &none).expect_err("no file");
    assert!(e
        .to_string()
        .starts_with("cannot read profile /nonexistent/p.toml"));
}

#[test]
fn cli_thresholds_are_named_as_cli_and_kept_in_the_profile() {
    let o = Overrides {
        thresholds: vec!["p99(initialize) < 50ms".into()],
        ..Default::default()
    };
    let profile = Profile::parse("thresholds = [\"error_rate < 1%\"]\n", "p").expect("parses");
    let p = Plan::resolve(profile, &o, "p").expect("resolves");
    assert_eq!(p.thresholds.len(), 2);
    assert_eq!(p.effective_profile.thresholds.len(), 2);
    let o = Overrides {
        thresholds: vec!["p99(nope) < 1ms".into()],
        ..Default::default()
    };
    let e = Plan::resolve(Profile::default(), &o, "p")
        .expect_err("bad")
        .to_string();
    assert!(
        e.starts_with("command line: `--threshold`: `p99(nope) < 1ms`: unknown phase"),
        "{e}"
    );
}

#[test]
fn bad_header_override_is_explained() {
    let o = Overrides {
        client: ClientArgs {
            headers: vec!["NoColon".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let e = Plan::resolve(Profile::default(), &o, "cli")
        .expect_err("bad header")
        .to_string();
    assert_eq!(
            e,
            "cli: `--header`: has no ':'\nfix: write it as 'Name: value' (or @FILE to read it from a file)"
        );
}

#[test]
fn a_profile_file_reads_its_pools_from_its_own_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("data")).expect("mkdir");
    std::fs::write(
        dir.path().join("data/tz.csv"),
        "zone,city\nUTC,London\nEurope/Paris,Paris\n",
    )
    .expect("csv");
    let profile = dir.path().join("p.toml");
    std::fs::write(
            &profile,
            r#"
[data.tz]
file = "data/tz.csv"
order = "random"
[arguments]
optional = 0.25
allow_destructive = true
[[scenario]]
name = "s"
on_error = "end-session"
steps = [
  { op = "tools/call", tool = "get_time", arguments = { timezone = "${pool.tz}", label = "in ${pool.tz.city}" } },
]
"#,
        )
        .expect("profile");
    // From another working directory than the profile's folder: the test's own.
    let p = Plan::from_source(&Source::File(profile), &Overrides::default()).expect("resolves");
    assert_eq!(
        p.pools.describe(),
        ["tz: 2 rows from data/tz.csv, random, column zone"]
    );
    assert_eq!(
        p.arguments,
        ArgumentPolicy {
            optional: 0.25,
            allow_destructive: true
        }
    );
    assert_eq!(p.scenarios[0].on_error, OnError::EndSession);
    let Step::CallTool(call) = &p.scenarios[0].steps[0] else {
        panic!("a call: {:?}", p.scenarios[0].steps[0])
    };
    assert!(call.generate, "pinned arguments generate the rest");
    let vars: Vec<String> = call.arguments.vars().iter().map(|v| v.describe()).collect();
    assert_eq!(vars, ["pool#0.city", "pool#0"], "label, timezone");
    // The profile written to the results keeps what the user wrote.
    assert!(p.profile_toml().contains("${pool.tz}"));
}

#[test]
fn calls_without_arguments_generate_and_fixed_ones_stay_fixed() {
    let p = plan(
        r#"
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "a" },
  { op = "tools/call", tool = "b", arguments = { x = 1, y = [2, "z"] }, generate = false },
  { op = "mix", calls = [{ tool = "c" }, { tool = "d", generate = false }] },
]
"#,
    )
    .expect("resolves");
    let steps = &p.scenarios[0].steps;
    assert_eq!(p.scenarios[0].on_error, OnError::Continue);
    let Step::CallTool(a) = &steps[0] else {
        panic!("a")
    };
    assert!(a.generate);
    assert_eq!(a.arguments, template::Template::empty_object());
    let Step::CallTool(b) = &steps[1] else {
        panic!("b")
    };
    assert!(!b.generate);
    assert_eq!(
        b.arguments,
        template::Template::Fixed(serde_json::json!({"x": 1, "y": [2, "z"]}))
    );
    let Step::Mix(m) = &steps[2] else {
        panic!("mix")
    };
    assert!(m.calls[0].generate);
    assert!(!m.calls[1].generate);
}

#[test]
fn captured_variables_must_be_captured_before_they_are_used() {
    let ok = plan(
            r#"
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "create", capture = { id = "/id", note = { regex = "note: (\\w+)" } } },
  { op = "resources/read", uri = "mem://${id}", capture = { body = "$.items[*].text" } },
  { op = "tools/call", tool = "read", arguments = { id = "${id}", about = "${body}" }, capture = { id = "/next" } },
  { op = "prompts/get", prompt = "${prompt.name}", arguments = { n = "${note}" } },
  { op = "mix", calls = [
      { tool = "list", capture = { file = { path = "$.files[*]", pick = "random" } } },
      { tool = "read_file", arguments = { path = "${file}", uri = "${resource.uri}" } },
  ] },
]
"#,
        )
        .expect("resolves");
    let steps = &ok.scenarios[0].steps;
    let Step::CallTool(create) = &steps[0] else {
        panic!("create")
    };
    let names: Vec<&str> = create.capture.iter().map(|c| c.var.as_str()).collect();
    assert_eq!(names, ["id", "note"]);
    let Step::ReadResource { uri, capture } = &steps[1] else {
        panic!("read")
    };
    assert_eq!(uri.describe_with(&ok.pools), "mem://${id}");
    assert_eq!(capture[0].var, "body");
    let Step::Mix(m) = &steps[4] else {
        panic!("mix")
    };
    assert_eq!(m.calls[0].capture[0].pick, capture::Pick::Random);
    assert_eq!(m.calls[1].arguments.captured(), ["file"]);

    let cases = [
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${note}\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${note}` is not captured by an earlier step\n\
                 fix: capture it in an earlier step of this scenario, e.g. capture = { note = \"/id\" } on a tools/call",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", capture = { id = \"/id\" } },\n\
                 { op = \"resources/read\", uri = \"x://${idd}\" }]",
                "p.toml: `scenario[0].steps[1].uri`: `${idd}` is not captured by an earlier step\n\
                 fix: capture it in an earlier step, or use one of: id",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${id}\" }, capture = { id = \"/id\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${id}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"prompts/get\", prompt = \"${p}\" }]",
                "p.toml: `scenario[0].steps[0].prompt`: `${p}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"mix\", calls = [{ tool = \"a\", arguments = { w = 1, x = [\"a\", { z = \"${resource.uri}\" }, \"${y}\"] } }] }]",
                "p.toml: `scenario[0].steps[0].calls[0].arguments.x[2]`: `${y}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${pool.nope}\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${pool.nope}`: no pool is named \"nope\"\n\
                 fix: add a [data.nope] section with a file, or fix the name",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", capture = { x = \"id\" } }]",
                "p.toml: `scenario[0].steps[0].capture.x`: \"id\" is neither a JSON pointer nor a path",
            ),
            (
                "steps = [{ op = \"mix\", calls = [{ tool = \"a\", capture = { x = { regex = \"(\" } } }] }]",
                "p.toml: `scenario[0].steps[0].calls[0].capture.x`: the regex does not compile",
            ),
            (
                "steps = [{ op = \"resources/read\", uri = \"\" }]",
                "p.toml: `scenario[0].steps[0].uri`: is empty",
            ),
            (
                "on_error = \"stop\"\nsteps = []",
                "p.toml: `scenario[0].on_error`: unknown value \"stop\"\n\
                 fix: use on_error = \"continue\" or on_error = \"end-session\"",
            ),
        ];
    for (steps, want) in cases {
        let text = format!("[[scenario]]\nname = \"s\"\n{steps}\n");
        let got = plan(&text).expect_err(&text).to_string();
        assert!(
            got.starts_with(want),
            "for {text}\n got: {got}\nwant: {want}"
        );
    }
    // Captures do not cross scenarios.
    let text = "[[scenario]]\nname = \"a\"\nsteps = [{ op = \"tools/call\", tool = \"t\", capture = { id = \"/id\" } }]\n\
                    [[scenario]]\nname = \"b\"\nsteps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${id}\" } }]\n";
    let got = plan(text).expect_err("other scenario").to_string();
    assert!(
        got.starts_with("p.toml: `scenario[1].steps[0].arguments.a`: `${id}` is not captured"),
        "{got}"
    );
}

#[test]
fn arguments_optional_is_a_share() {
    assert_eq!(
        plan("").expect("defaults").arguments,
        ArgumentPolicy::default()
    );
    assert_eq!(
        plan("[arguments]\noptional = 0\n")
            .expect("0")
            .arguments
            .optional,
        0.0
    );
    assert_eq!(
        plan("[arguments]\noptional = 1.0\n")
            .expect("1")
            .arguments
            .optional,
        1.0
    );
    for bad in ["1.5", "-0.1", "nan"] {
        let e = plan(&format!("[arguments]\noptional = {bad}\n"))
            .expect_err(bad)
            .to_string();
        assert!(
            e.starts_with("p.toml: `arguments.optional`: ")
                && e.contains("is not a share from 0 to 1\nfix: use e.g. optional = 0.5"),
            "{e}"
        );
    }
}

#[test]
fn a_target_alone_runs_ten_seconds_and_is_named_for_its_host() {
    let target = |extra: Overrides| Overrides {
        target: Some("http://me:hunter2@127.0.0.1:3000/mcp?key=sekrit".into()),
        ..extra
    };
    let p =
        Plan::from_source(&Source::CommandLine, &target(Overrides::default())).expect("resolves");
    assert_eq!(p.load.duration, Some(Duration::from_secs(10)));
    assert_eq!(p.load.sessions, None);
    assert_eq!(p.folder_name(), "127.0.0.1-3000");
    // A stop on the command line is the reader's: no default duration beside it.
    let with_sessions = target(Overrides {
        sessions: Some(5000),
        ..Default::default()
    });
    let p = Plan::from_source(&Source::CommandLine, &with_sessions).expect("resolves");
    assert_eq!((p.load.duration, p.load.sessions), (None, Some(5000)));
    // A profile's own stop is left alone, and its name names the folder.
    let p = Plan::from_source(&Source::Quickstart, &Overrides::default()).expect("resolves");
    assert_eq!(p.folder_name(), "quickstart");
    let p = plan("[load]\nclients = 1\n").expect("resolves");
    assert_eq!(p.folder_name(), "builtin-http");
    assert_eq!(p.load.sessions, Some(100));
}

#[test]
fn an_open_model_plan_shows_no_think_time() {
    let closed = plan("[load]\nclients = 2\nsessions = 4\n").expect("closed");
    assert!(
        closed.describe().contains(", think "),
        "{}",
        closed.describe()
    );
    let open = plan("[load]\nrate = \"50/s\"\nduration = \"2s\"\n").expect("open");
    let text = open.describe();
    assert!(!text.contains("think"), "{text}");
    assert!(text.contains("request timeout 10s"), "{text}");
}

#[test]
fn a_pause_step_is_a_duration_a_range_or_an_exponential_mean() {
    use std::time::Duration;
    let p = plan(
        "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"pause\", duration = \"5ms\" }, \
         { op = \"pause\", duration = \"10ms..20ms\" }, { op = \"pause\", duration = \"exp:3ms\" }]\n",
    )
    .expect("pauses");
    let ms = Duration::from_millis;
    assert_eq!(
        p.scenarios[0].steps,
        [
            Step::Pause(Think::Fixed(ms(5))),
            Step::Pause(Think::Uniform(ms(10), ms(20))),
            Step::Pause(Think::Exponential(ms(3))),
        ]
    );
    let e =
        plan("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"pause\", duration = \"2s..1s\" }]\n")
            .expect_err("backwards");
    assert!(
        e.to_string().contains("scenario[0].steps[0].duration"),
        "{e}"
    );
}
