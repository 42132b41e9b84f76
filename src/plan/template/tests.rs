//! Templates: every `${…}` syntax, pools named per step, fixed subtrees, rendering
//! that keeps types, and bad templates that name the key and a fix.

use super::super::data::{Order, Pool};
use super::*;
use serde_json::json;

fn pools() -> Pools {
    let mut tz = Pool::new(
        "tz".into(),
        Order::Sequential,
        Some("zone".into()),
        vec![json!({"zone": "UTC", "city": "London"})],
    );
    tz.header = Some(vec!["zone".into(), "city".into()]);
    let ids = Pool::new("ids-2".into(), Order::Random, None, vec![json!(7)]);
    Pools(vec![tz, ids])
}

fn env(name: &str) -> Option<String> {
    (name == "REPO").then(|| "/srv/repo".to_string())
}

fn parse(v: Value) -> Result<Template, PlanError> {
    let pools = pools();
    let mut ctx = TemplateContext::with_env(&pools, &env);
    Template::parse(&v, &mut ctx, "scenario[0].steps[1].arguments", "p.toml")
}

fn err(v: Value) -> String {
    parse(v.clone()).expect_err(&v.to_string()).to_string()
}

struct Values;
impl Lookup for Values {
    fn value(&mut self, var: &Var) -> Result<Value, String> {
        match var {
            Var::Captured(n) if n == "id" => Ok(json!(42)),
            Var::Captured(n) if n == "name" => Ok(json!("Ada")),
            Var::Captured(n) if n == "obj" => Ok(json!({"a": [1]})),
            Var::Pool { pool: 0, field } => Ok(json!(field.clone().unwrap_or("UTC".into()))),
            Var::ResourceUri => Ok(json!("file:///a")),
            Var::PromptName => Ok(json!("greet")),
            other => Err(format!("${{{}}} was not captured", other.describe())),
        }
    }
}

#[test]
fn every_syntax_parses() {
    assert_eq!(
        parse(json!("${pool.tz}")).expect("pool"),
        Template::Var(Var::Pool {
            pool: 0,
            field: None
        })
    );
    assert_eq!(
        parse(json!("${pool.tz.city}")).expect("field"),
        Template::Var(Var::Pool {
            pool: 0,
            field: Some("city".into())
        })
    );
    assert_eq!(
        parse(json!("${pool.ids-2.any}")).expect("lines pools take any field"),
        Template::Var(Var::Pool {
            pool: 1,
            field: Some("any".into())
        })
    );
    assert_eq!(
        parse(json!("${resource.uri}")).expect("uri"),
        Template::Var(Var::ResourceUri)
    );
    assert_eq!(
        parse(json!("${prompt.name}")).expect("prompt"),
        Template::Var(Var::PromptName)
    );
    assert_eq!(
        parse(json!("${note_1}")).expect("captured"),
        Template::Var(Var::Captured("note_1".into()))
    );
    assert_eq!(
        parse(json!("id ${id}!")).expect("text"),
        Template::Text(vec![
            Part::Text("id ".into()),
            Part::Var(Var::Captured("id".into())),
            Part::Text("!".into())
        ])
    );
    assert_eq!(
        parse(json!("${env.REPO}/.git")).expect("env"),
        Template::Fixed(json!("/srv/repo/.git"))
    );
    assert_eq!(
        parse(json!("cost $5, $${x} and ${env.REPO}")).expect("literal"),
        Template::Fixed(json!("cost $5, ${x} and /srv/repo"))
    );
    assert_eq!(parse(json!("")).expect("empty"), Template::Fixed(json!("")));
    let named: Vec<String> = parse(json!("${pool.tz.city} ${pool.ids-2} ${x}"))
        .expect("text")
        .vars()
        .iter()
        .map(|v| v.describe_with(&pools()))
        .collect();
    assert_eq!(named, ["pool.tz.city", "pool.ids-2", "x"]);
}

#[test]
fn steps_describe_pools_by_name() {
    let p = pools();
    let t = parse(json!("tz/${pool.tz.city}/${pool.ids-2}")).expect("parses");
    assert_eq!(t.describe_with(&p), "tz/${pool.tz.city}/${pool.ids-2}");
    let whole = parse(json!("${resource.uri}")).expect("parses");
    assert_eq!(whole.describe_with(&p), "${resource.uri}");
}

#[test]
fn subtrees_without_variables_are_fixed() {
    let fixed = json!({"a": [1, "x", {"b": null}], "c": true, "d": "${env.REPO}"});
    assert_eq!(
        parse(fixed).expect("fixed"),
        Template::Fixed(json!({"a": [1, "x", {"b": null}], "c": true, "d": "/srv/repo"}))
    );
    let t = parse(json!({"keep": {"n": 1}, "list": [1, "${id}"]})).expect("mixed");
    let Template::Object(fields) = &t else {
        panic!("an object: {t:?}")
    };
    assert_eq!(fields[0], ("keep".into(), Template::Fixed(json!({"n": 1}))));
    assert_eq!(
        fields[1],
        (
            "list".into(),
            Template::Array(vec![
                Template::Fixed(json!(1)),
                Template::Var(Var::Captured("id".into()))
            ])
        )
    );
    assert_eq!(t.captured(), ["id"]);
}

#[test]
fn render_keeps_types_of_whole_variables_and_writes_text() {
    let t = parse(json!({
        "id": "${id}",
        "label": "${name} #${id} ${obj}",
        "where": ["${resource.uri}", "${prompt.name}", "${pool.tz.city}"],
        "n": 3
    }))
    .expect("parses");
    assert_eq!(
        t.render(&mut Values).expect("renders"),
        json!({
            "id": 42,
            "label": "Ada #42 {\"a\":[1]}",
            "where": ["file:///a", "greet", "city"],
            "n": 3
        })
    );
    let t = parse(json!({"a": "x ${id}", "b": "${missing}", "c": "${gone}"})).expect("p");
    assert_eq!(
        t.render(&mut Values).expect_err("no value"),
        "${missing} was not captured"
    );
    assert_eq!(Template::empty_object().render(&mut Values), Ok(json!({})));
}

#[test]
fn bad_templates_name_the_key_and_a_fix() {
    let k = "p.toml: `scenario[0].steps[1].arguments.a`: ";
    let cases = [
        (json!({"a": "${id"}), "a `${` is not closed in \"${id\"\nfix: close it with `}`"),
        (json!({"a": "${}"}), "`${}` names nothing\nfix: write ${pool.NAME}"),
        (json!({"a": "${9x}"}), "`${9x}` is not a variable name\nfix: a captured"),
        (json!({"a": "${db.x}"}), "`${db.x}`: unknown namespace \"db\"\nfix: write ${pool.NAME}"),
        (json!({"a": "${pool.nope}"}), "`${pool.nope}`: no pool is named \"nope\"\nfix: use one of: tz, ids-2"),
        (json!({"a": "${pool.tz.country}"}), "`${pool.tz.country}`: pool tz has no column \"country\"\nfix: use one of its columns: zone, city"),
        (json!({"a": "${pool.tz.}"}), "`${pool.tz.}` names an empty field"),
        (json!({"a": "${pool.}"}), "`${pool.}` names no pool"),
        (json!({"a": "${resource.name}"}), "`${resource.name}` is not known\nfix: write ${resource.uri}"),
        (json!({"a": "${prompt.uri}"}), "`${prompt.uri}` is not known\nfix: write ${prompt.name}"),
        (json!({"a": "${env.UNSET_X}"}), "`${env.UNSET_X}`: the environment variable UNSET_X is not set\nfix: set it before the run (export UNSET_X=...)"),
        (json!({"a": "${env.}"}), "`${env.}` is not an environment variable"),
    ];
    for (v, want) in cases {
        let got = err(v.clone());
        assert!(
            got.starts_with(&format!("{k}{want}")),
            "for {v}\n got: {got}\nwant: {k}{want}"
        );
    }
    let got = err(json!({"a": [0, "${x"]}));
    assert!(
        got.starts_with("p.toml: `scenario[0].steps[1].arguments.a[1]`"),
        "{got}"
    );
}
