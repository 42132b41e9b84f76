//! Captures: pointers and paths parsed, bad ones named with a fix, and values read
//! from tool and resource results (structured content first, wildcards, regex groups).

use super::*;
use crate::profile::CaptureTable;
use rand::SeedableRng;
use serde_json::json;

fn capture(spec: CaptureSpec) -> Result<Capture, PlanError> {
    Capture::from_spec("v", &spec, "scenario[0].steps[0].capture.v", "p.toml")
}

fn text(s: &str) -> Capture {
    capture(CaptureSpec::Text(s.into())).expect(s)
}

fn table(t: CaptureTable) -> Capture {
    capture(CaptureSpec::Table(t.clone())).expect("valid table")
}

fn rng() -> rand::rngs::SmallRng {
    rand::rngs::SmallRng::seed_from_u64(1)
}

fn tool_text(t: &str) -> Value {
    json!({"content": [{"type": "image", "data": "x"}, {"type": "text", "text": t}]})
}

#[test]
fn pointers_and_paths_parse() {
    let segs = |c: Capture| match c.source {
        Source::Path(p) => p,
        Source::Regex(_) => panic!("a path"),
    };
    let s = |x: &str| Some(x.to_string());
    assert_eq!(segs(text("/a/0/b~1c~0d")), vec![s("a"), s("0"), s("b/c~d")]);
    assert_eq!(segs(text("$.a.b[0]")), vec![s("a"), s("b"), s("0")]);
    assert_eq!(segs(text("$.a[*].b")), vec![s("a"), None, s("b")]);
    assert_eq!(
        segs(text("$['odd key'][\"x.y\"]")),
        vec![s("odd key"), s("x.y")]
    );
    assert_eq!(segs(text("$")), Vec::<Option<String>>::new());
    let t = CaptureTable {
        pointer: Some("/id".into()),
        pick: Some("random".into()),
        ..Default::default()
    };
    let c = table(t);
    assert_eq!(c.pick, Pick::Random);
    assert_eq!(segs(c), vec![s("id")]);
}

#[test]
fn bad_captures_name_the_key_and_a_fix() {
    let k = "p.toml: `scenario[0].steps[0].capture.v`: ";
    let t = |pointer: Option<&str>, path: Option<&str>, regex: Option<&str>, pick: Option<&str>| {
        CaptureSpec::Table(CaptureTable {
            pointer: pointer.map(Into::into),
            path: path.map(Into::into),
            regex: regex.map(Into::into),
            pick: pick.map(Into::into),
        })
    };
    let cases = [
        (
            CaptureSpec::Text("id".into()),
            "\"id\" is neither a JSON pointer nor a path\nfix: write \"/a/0/b\"",
        ),
        (
            CaptureSpec::Text("$.a[x]".into()),
            "path \"$.a[x]\": [x] is neither an index nor [*]\nfix: write a path as",
        ),
        (
            CaptureSpec::Text("$.a[0".into()),
            "path \"$.a[0\": a '[' is not closed",
        ),
        (
            CaptureSpec::Text("$..a".into()),
            "path \"$..a\": a '.' is followed by no name",
        ),
        (
            CaptureSpec::Text("$a".into()),
            "path \"$a\": unexpected 'a'",
        ),
        (
            CaptureSpec::Text("$['a".into()),
            "path \"$['a\": a quoted name is not closed",
        ),
        (
            t(None, None, Some("(unclosed"), None),
            "the regex does not compile",
        ),
        (
            t(None, None, None, None),
            "says nowhere to look\nfix: give one of pointer, path or regex",
        ),
        (
            t(Some("/a"), Some("$.a"), None, None),
            "gives more than one of pointer, path and regex\nfix: keep one",
        ),
        (
            t(Some("a"), None, None, None),
            "pointer \"a\" does not start with '/'",
        ),
        (
            t(Some("/a"), None, None, Some("last")),
            "unknown pick \"last\"\nfix: use pick = \"first\" or pick = \"random\"",
        ),
    ];
    for (spec, want) in cases {
        let got = capture(spec.clone())
            .expect_err(&format!("{spec:?}"))
            .to_string();
        assert!(
            got.starts_with(&format!("{k}{want}")),
            "for {spec:?}\n got: {got}\nwant: {k}{want}"
        );
    }
    let got = Capture::from_spec("9v", &CaptureSpec::Text("/a".into()), "k", "p.toml")
        .expect_err("bad name")
        .to_string();
    assert!(
        got.starts_with("p.toml: `k`: \"9v\" is not a variable name"),
        "{got}"
    );
}

#[test]
fn pointer_reads_structured_content_first_then_text_json() {
    let c = text("/entity/id");
    let both = json!({
        "structuredContent": {"entity": {"id": 5}},
        "content": [{"type": "text", "text": "{\"entity\": {\"id\": 6}}"}]
    });
    assert_eq!(c.extract(&both, &mut rng()), Some(json!(5)));
    let texts = json!({"content": [
        {"type": "text", "text": "not json"},
        {"type": "text", "text": "{\"other\": 1}"},
        {"type": "text", "text": "{\"entity\": {\"id\": \"e-7\"}}"}
    ]});
    assert_eq!(c.extract(&texts, &mut rng()), Some(json!("e-7")));
    assert_eq!(c.extract(&tool_text("{\"entity\": {}}"), &mut rng()), None);
    assert_eq!(c.extract(&json!({}), &mut rng()), None);
    let idx = text("$.items[1].name");
    let r = json!({"structuredContent": {"items": [{"name": "a"}, {"name": "b"}]}});
    assert_eq!(idx.extract(&r, &mut rng()), Some(json!("b")));
    assert_eq!(text("$.items[9]").extract(&r, &mut rng()), None);
}

#[test]
fn wildcards_pick_first_or_random() {
    let r = json!({"structuredContent": {"files": [
        {"name": "a.txt"}, {"name": "b.txt"}, {"size": 1}, {"name": "c.txt"}
    ]}});
    assert_eq!(
        text("$.files[*].name").extract(&r, &mut rng()),
        Some(json!("a.txt"))
    );
    let random = table(CaptureTable {
        path: Some("$.files[*].name".into()),
        pick: Some("random".into()),
        ..Default::default()
    });
    let mut seen = std::collections::BTreeSet::new();
    let mut g = rng();
    for _ in 0..200 {
        let v = random.extract(&r, &mut g).expect("a name");
        seen.insert(v.as_str().expect("a string").to_string());
    }
    let want: std::collections::BTreeSet<String> =
        ["a.txt", "b.txt", "c.txt"].map(String::from).into();
    assert_eq!(
        seen, want,
        "random picks reach every element and only those"
    );
    assert_eq!(
        text("$.files[*].name").extract(&json!({"structuredContent": {"files": []}}), &mut rng()),
        None
    );
}

#[test]
fn regex_takes_the_first_group_or_the_whole_match() {
    let r = tool_text("created id: abc\nand id: def");
    let group = table(CaptureTable {
        regex: Some("id: (\\w+)".into()),
        ..Default::default()
    });
    assert_eq!(group.extract(&r, &mut rng()), Some(json!("abc")));
    let whole = table(CaptureTable {
        regex: Some("\\d+".into()),
        ..Default::default()
    });
    assert_eq!(
        whole.extract(&tool_text("took 12 of 30"), &mut rng()),
        Some(json!("12"))
    );
    let random = table(CaptureTable {
        regex: Some("id: (\\w+)".into()),
        pick: Some("random".into()),
        ..Default::default()
    });
    let mut g = rng();
    let picks: std::collections::BTreeSet<String> = (0..100)
        .filter_map(|_| random.extract(&r, &mut g))
        .map(|v| v.to_string())
        .collect();
    assert_eq!(picks, ["\"abc\"", "\"def\""].map(String::from).into());
    assert_eq!(group.extract(&tool_text("nothing here"), &mut rng()), None);
    // Across text contents joined by newlines.
    let two =
        json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "id: z"}]});
    assert_eq!(group.extract(&two, &mut rng()), Some(json!("z")));
}

#[test]
fn resources_read_results_are_read_too() {
    let r = json!({"contents": [
        {"uri": "file:///a", "blob": "AAAA"},
        {"uri": "file:///b", "mimeType": "application/json", "text": "{\"rows\": [{\"id\": 3}]}"}
    ]});
    assert_eq!(text("$.rows[*].id").extract(&r, &mut rng()), Some(json!(3)));
    let re = table(CaptureTable {
        regex: Some("\"id\": (\\d+)".into()),
        ..Default::default()
    });
    assert_eq!(re.extract(&r, &mut rng()), Some(json!("3")));
}
