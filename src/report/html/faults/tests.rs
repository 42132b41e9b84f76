//! The client faults section of the page and the personas side by side: their rows and
//! cells, mistakes marked, examples escaped, nothing without faults.

use super::super::{render, ReportInput};
use crate::summary::{ClientFaultExample, ClientFaultSummary, PersonaSummary, Summary};

fn page(s: &Summary) -> String {
    render(&ReportInput {
        summary: s,
        timeline: &[],
        histograms: Default::default(),
        profile_toml: None,
    })
}

/// The fixture with a good persona beside the buggy `slow` one, which committed
/// `invalid-json` (handled) and `oversized` (crashed twice, once with `<html>` in what
/// was seen).
fn with_faults() -> Summary {
    let mut s = crate::report::threshold::tests::summary();
    let mut good = s.personas["slow"].clone();
    good.phases = s.phases.clone();
    s.personas.insert("good".into(), good);
    if let Some(p) = s.personas.get_mut("slow") {
        let PersonaSummary { phases, .. } = p;
        let mut call = s.phases["tools/call"].clone();
        call.errors = 30;
        call.count = 300;
        phases.insert("tools/call".into(), call);
        p.failed = 25;
        p.completed = 75;
    }
    let fault = |name: &str, v: [u64; 5], examples: Vec<(&str, &str)>| ClientFaultSummary {
        persona: "slow".into(),
        fault: name.into(),
        description: format!("{name} description"),
        expected: format!("{name} expected"),
        sessions: v.iter().sum(),
        verdicts: ["handled", "wrong_error", "crashed", "hung", "accepted"]
            .iter()
            .zip(v)
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
        examples: examples
            .into_iter()
            .map(|(v, t)| ClientFaultExample {
                verdict: v.into(),
                text: t.into(),
            })
            .collect(),
    };
    s.client_faults = vec![
        fault(
            "invalid-json",
            [12, 0, 0, 0, 0],
            vec![("handled", "-32700")],
        ),
        fault(
            "oversized",
            [3, 0, 2, 0, 0],
            vec![("crashed", "closed: <html>gone"), ("crashed", "second")],
        ),
    ];
    s
}

/// The text between `from` and the end of the next table.
fn table<'a>(html: &'a str, from: &str) -> &'a str {
    let at = html.find(from).unwrap_or_else(|| panic!("no {from}"));
    let end = at + html[at..].find("</table>").expect("end of table");
    &html[at..end]
}

fn rows(table: &str) -> Vec<&str> {
    table.split("<tr").skip(2).collect()
}

#[test]
fn the_client_faults_table_has_verdicts_expectations_and_escaped_examples() {
    let html = page(&with_faults());
    let t = table(&html, "<h2 id=client-faults>");
    assert!(t.contains("1 of 2 mishandled."), "{t}");
    for head in [
        "persona",
        "fault",
        "what the client did",
        "expected",
        "sessions",
        "handled",
        "wrong error",
        "crashed",
        "hung",
        "accepted",
        "first examples",
    ] {
        assert!(t.contains(&format!(">{head}</th>")), "{head}: {t}");
    }
    let rows = rows(t);
    assert_eq!(rows.len(), 2, "{t}");
    let (json, big) = (rows[0], rows[1]);
    assert!(
        json.starts_with(" data-fault=\"invalid-json\">"),
        "handled: not marked: {json}"
    );
    assert!(json.contains("<td>invalid-json expected</td>"), "{json}");
    assert!(
        !json.contains("class=ex"),
        "no example of a handled fault: {json}"
    );
    assert!(
        big.starts_with(" class=bad data-fault=\"oversized\">"),
        "{big}"
    );
    assert!(
        big.contains("<td class=\"n bad\" data-verdict=\"crashed\">2</td>"),
        "{big}"
    );
    assert!(
        big.contains("<td class=\"n\" data-verdict=\"handled\">3</td>"),
        "{big}"
    );
    assert!(
        big.contains("<td class=\"n\" data-verdict=\"hung\">0</td>"),
        "{big}"
    );
    assert!(
        big.contains("<div class=ex>crashed: closed: &lt;html&gt;gone</div>"),
        "{big}"
    );
    assert!(!big.contains("second"), "the first example only: {big}");
    // After the findings, before the parameters.
    let (findings, faults, params) = (
        html.find("<h2>Conformance findings</h2>"),
        html.find("<h2 id=client-faults>"),
        html.find("<h2>Run parameters</h2>"),
    );
    assert!(findings < faults && faults < params);
}

#[test]
fn the_personas_side_by_side_show_the_good_beside_the_buggy() {
    let html = page(&with_faults());
    let t = table(&html, "<h3 id=personas-side-by-side>");
    let rows = rows(t);
    assert_eq!(rows.len(), 2, "{t}");
    let cells = |row: &str| -> Vec<String> {
        row.split("<td")
            .skip(1)
            .map(|c| {
                c.split_once('>')
                    .map_or("", |x| x.1)
                    .trim_end_matches("</td>")
                    .to_string()
            })
            .map(|c| c.split("</td>").next().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        cells(rows[0]),
        ["good", "100", "–", "0.0%", "30.00ms", "90.00ms", "9.00ms", "0.0%"],
        "{}",
        rows[0]
    );
    assert_eq!(
        cells(rows[1]),
        ["slow", "100", "17", "25.0%", "–", "–", "9.00ms", "10.0%"],
        "{}",
        rows[1]
    );
    assert!(
        rows[1].contains("<td class=\"n bad\">25.0%</td>"),
        "{}",
        rows[1]
    );
}

#[test]
fn no_section_without_client_faults() {
    let mut s = with_faults();
    s.client_faults.clear();
    let html = page(&s);
    assert!(!html.contains("id=client-faults"));
    assert!(!html.contains("side-by-side"));
}

#[test]
fn auth_and_task_phases_sit_where_they_happen_in_the_phase_table() {
    let mut s = crate::report::threshold::tests::summary();
    for name in [
        "tasks/cancel",
        "tasks/get",
        "task",
        "auth",
        "token",
        "connect",
        "tasks/result",
    ] {
        let p = s.phases["initialize"].clone();
        s.phases.insert(name.into(), p);
    }
    let html = page(&s);
    let t = table(&html, "<h2 id=phases>");
    let order: Vec<&str> = t
        .split("<td>")
        .skip(1)
        .filter_map(|c| c.split("</td>").next())
        .filter(|c| crate::metrics::Phase::from_name(c).is_some())
        .collect();
    assert_eq!(
        order,
        [
            "connect",
            "token",
            "auth",
            "initialize",
            "tools/call",
            "task",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "session"
        ]
    );
}
