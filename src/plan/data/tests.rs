//! Data pools from real files in a temp folder: CSV and JSON lines, relative paths,
//! errors that never print the contents, and each row order (unique, sharded, sequential,
//! random).

use super::*;
use rand::SeedableRng;
use serde_json::json;

/// A temp folder with a profile file and the data files given.
fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, "").expect("profile");
    let origin = profile.display().to_string();
    (dir, origin)
}

fn section(file: &str) -> DataSection {
    DataSection {
        file: file.into(),
        ..Default::default()
    }
}

fn load(origin: &str, sections: &[(&str, DataSection)]) -> Result<Pools, PlanError> {
    let map = sections
        .iter()
        .map(|(n, s)| (n.to_string(), s.clone()))
        .collect();
    Pools::from_sections(&map, origin)
}

#[test]
fn csv_rows_are_objects_of_strings_with_quotes_and_commas() {
    let csv = "zone,city\nUTC,London\n\"America/New_York\",\"New York, NY\"\n\"Odd \"\"q\"\"\",x\n";
    let (_dir, origin) = folder(&[("data/tz.csv", csv)]);
    let pools = load(&origin, &[("tz", section("data/tz.csv"))]).expect("loads");
    let p = pools.get(0);
    assert_eq!(p.rows.len(), 3);
    assert_eq!(
        p.rows[1],
        json!({"zone": "America/New_York", "city": "New York, NY"})
    );
    assert_eq!(p.rows[2]["zone"], "Odd \"q\"");
    assert_eq!(
        p.header.as_deref(),
        Some(&["zone".to_string(), "city".to_string()][..])
    );
    assert_eq!(p.default_field.as_deref(), Some("zone"));
    assert_eq!(p.field(&p.rows[1], None), Some(&json!("America/New_York")));
    assert_eq!(
        p.field(&p.rows[1], Some("city")),
        Some(&json!("New York, NY"))
    );
    assert_eq!(
        pools.describe(),
        ["tz: 3 rows from data/tz.csv, sequential, column zone"]
    );
}

#[test]
fn json_lines_hold_objects_or_scalars() {
    let (_dir, origin) = folder(&[
        (
            "users.jsonl",
            "{\"id\": 1, \"name\": \"a\"}\n\n  {\"id\": 2, \"name\": \"b\"}\n",
        ),
        ("n.ndjson", "1\n\"two\"\n[3]\n"),
    ]);
    let users = DataSection {
        column: Some("name".into()),
        order: Some("random".into()),
        ..section("users.jsonl")
    };
    let pools = load(&origin, &[("users", users), ("n", section("n.ndjson"))]).expect("loads");
    let n = pools.get(pools.id_of("n").expect("n"));
    assert_eq!(n.rows, [json!(1), json!("two"), json!([3])]);
    assert_eq!(
        n.field(&n.rows[2], None),
        Some(&json!([3])),
        "the whole line"
    );
    assert_eq!(n.header, None);
    let u = pools.get(pools.id_of("users").expect("users"));
    assert_eq!(u.order, Order::Random);
    assert_eq!(u.field(&u.rows[1], None), Some(&json!("b")));
    assert_eq!(u.field(&u.rows[1], Some("id")), Some(&json!(2)));
    assert_eq!(
        pools.describe(),
        [
            "n: 3 rows from n.ndjson, sequential",
            "users: 2 rows from users.jsonl, random, column name"
        ]
    );
}

#[test]
fn relative_paths_start_at_the_profile_folder_and_absolute_ones_anywhere() {
    let (dir, origin) = folder(&[("ids.csv", "id\n1\n")]);
    assert!(load(&origin, &[("ids", section("ids.csv"))]).is_ok());
    // Not relative to the current directory:
    let e = load("not-a-file.toml", &[("ids", section("ids.csv"))])
        .expect_err("relative to the cwd")
        .to_string();
    assert!(
        e.starts_with("not-a-file.toml: `data.ids.file`: cannot read ids.csv"),
        "{e}"
    );
    let abs = dir.path().join("ids.csv").display().to_string();
    let pools = load("command line", &[("ids", section(&abs))]).expect("absolute");
    assert_eq!(pools.get(0).rows, [json!({"id": "1"})]);
}

#[test]
fn bad_data_names_the_key_and_never_the_contents() {
    let (_dir, origin) = folder(&[
        ("ok.csv", "a,b\n1,2\n"),
        ("short.csv", "a,b\n1,2\nsecret-value\n"),
        ("empty.csv", "a,b\n"),
        ("blank.jsonl", "\n\n"),
        ("bad.jsonl", "{\"a\": 1}\n{secret-value\n"),
        ("dup.csv", "a,a\n1,2\n"),
        ("mixed.jsonl", "{\"a\": 1}\n7\n"),
    ]);
    let o = &origin;
    let cases: Vec<(&str, DataSection, String)> = vec![
        ("x", section("missing.csv"), format!("{o}: `data.x.file`: cannot read")),
        ("x", section("short.csv"), format!("{o}: `data.x.file`: line 3 has 1 fields, the header 2\nfix: give every row")),
        ("x", section("empty.csv"), format!("{o}: `data.x.file`: empty.csv has no rows\nfix: put at least one row")),
        ("x", section("blank.jsonl"), format!("{o}: `data.x.file`: blank.jsonl has no rows")),
        ("x", section("bad.jsonl"), format!("{o}: `data.x.file`: line 2 is not JSON\nfix: write one JSON value per line")),
        ("x", section("dup.csv"), format!("{o}: `data.x.file`: the CSV header names column \"a\" twice")),
        ("x", DataSection { column: Some("c".into()), ..section("ok.csv") }, format!("{o}: `data.x.column`: \"c\" is not a column of ok.csv\nfix: use one of: a, b")),
        ("x", DataSection { column: Some("a".into()), ..section("mixed.jsonl") }, format!("{o}: `data.x.column`: line 2 is not an object with field \"a\"")),
        ("x", DataSection { order: Some("shuffled".into()), ..section("ok.csv") }, format!("{o}: `data.x.order`: unknown order \"shuffled\"\nfix: use \"sequential\", \"random\" or \"unique\"")),
        ("x", DataSection { format: Some("xml".into()), ..section("ok.csv") }, format!("{o}: `data.x.format`: unknown format \"xml\"\nfix: use \"csv\" or \"jsonl\"")),
        ("x", section(""), format!("{o}: `data.x.file`: is empty")),
        ("1x", section("ok.csv"), format!("{o}: `data.1x`: \"1x\" is not a pool name")),
    ];
    for (name, s, want) in cases {
        let got = load(&origin, &[(name, s.clone())])
            .expect_err(&format!("{s:?}"))
            .to_string();
        assert!(
            got.starts_with(&want),
            "for {s:?}\n got: {got}\nwant: {want}"
        );
        assert!(!got.contains("secret-value"), "{got}");
    }
    // The format wins over the extension.
    let s = DataSection {
        format: Some("csv".into()),
        ..section("bad.jsonl")
    };
    assert!(
        load(&origin, &[("x", s)]).is_ok(),
        "read as CSV, one column"
    );
}

#[test]
fn unique_rows_are_claimed_once_then_run_out() {
    let p = Pool::new(
        "u".into(),
        Order::Unique,
        None,
        vec![json!(1), json!(2), json!(3)],
    );
    let mut cursor = 0;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    let got: Vec<_> = (0..5)
        .map(|_| p.draw(&mut cursor, &mut rng).cloned())
        .collect();
    assert_eq!(
        got,
        [Some(json!(1)), Some(json!(2)), Some(json!(3)), None, None]
    );
    // Across threads, every row exactly once.
    let p = std::sync::Arc::new(Pool::new(
        "u".into(),
        Order::Unique,
        None,
        (0..1000).map(|i| json!(i)).collect(),
    ));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let p = p.clone();
            std::thread::spawn(move || {
                let mut out = Vec::new();
                while let Some(v) = p.claim_unique() {
                    out.push(v.as_i64().unwrap_or(-1));
                }
                out
            })
        })
        .collect();
    let mut all: Vec<i64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("joins"))
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..1000).collect::<Vec<i64>>());
}

#[test]
fn unique_rows_under_shards_partition_the_pool() {
    let rows: Vec<Value> = (0..10).map(|i| json!(i)).collect();
    let mut taken = Vec::new();
    for index in 0..3 {
        let mut pools = Pools(vec![Pool::new(
            "u".into(),
            Order::Unique,
            None,
            rows.clone(),
        )]);
        pools.set_shard(Shard { index, count: 3 });
        let p = pools.get(0);
        let mine: Vec<i64> = std::iter::from_fn(|| p.claim_unique())
            .filter_map(Value::as_i64)
            .collect();
        // In order, every third row from the shard's own.
        let want: Vec<i64> = (0..10).filter(|i| i % 3 == i64::from(index)).collect();
        assert_eq!(mine, want, "shard {index}/3");
        assert_eq!(p.claim_unique(), None, "then none");
        taken.extend(mine);
    }
    taken.sort_unstable();
    assert_eq!(taken, (0..10).collect::<Vec<i64>>(), "every row once");
}

#[test]
fn sequential_rows_wrap_and_random_rows_stay_in_the_pool() {
    let p = Pool::new(
        "s".into(),
        Order::Sequential,
        None,
        vec![json!("a"), json!("b"), json!("c")],
    );
    let mut cursor = 2; // the client with index 2 starts at row 2
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    let got: Vec<_> = (0..5)
        .filter_map(|_| p.draw(&mut cursor, &mut rng).cloned())
        .collect();
    assert_eq!(
        got,
        [json!("c"), json!("a"), json!("b"), json!("c"), json!("a")]
    );
    assert_eq!(p.row(u64::MAX), Some(&json!("a")), "u64::MAX % 3 == 0");
    let r = Pool::new("r".into(), Order::Random, None, vec![json!(0), json!(1)]);
    let seen: std::collections::BTreeSet<i64> = (0..100)
        .filter_map(|_| r.draw(&mut cursor, &mut rng).and_then(Value::as_i64))
        .collect();
    assert_eq!(seen, [0, 1].into());
}
