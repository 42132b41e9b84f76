use super::*;
use crate::plan::{Overrides, Plan};
use crate::profile::Profile;

/// Resolve `persona` (the lines of one `[[persona]]`) in a profile written to `dir`.
fn resolve(dir: &Path, persona: &str) -> Result<Plan, PlanError> {
    let path = dir.join("p.toml");
    let text = format!(
        "[target]\nurl = \"http://127.0.0.1:9/mcp\"\n[[persona]]\nname = \"a\"\n{persona}\n"
    );
    std::fs::write(&path, &text).expect("write profile");
    let origin = path.to_string_lossy().into_owned();
    let profile = Profile::parse(&text, &origin).expect("parses");
    Plan::resolve(profile, &Overrides::default(), &origin)
}

#[test]
fn tokens_come_from_a_file_beside_the_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("t.txt"), "# tokens\ntok-a\n\n  tok-b  \n").expect("write");
    let plan = resolve(dir.path(), "auth = { tokens = \"file:t.txt\" }").expect("resolves");
    let auth = plan.personas[0].auth.as_ref().expect("auth");
    assert!(auth.discover);
    match &auth.source {
        TokenSource::Tokens { tokens: t, .. } => assert_eq!(t.as_slice(), ["tok-a", "tok-b"]),
        other => panic!("{other:?}"),
    }
    assert!(!plan.profile_toml().contains("tok-a"));
}

#[test]
fn bad_token_sources_are_plan_errors_that_name_no_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("empty.txt"), "# none\n\n").expect("write");
    std::fs::write(dir.path().join("bad.txt"), "good\nsec ret\n").expect("write");
    let cases = [
        ("auth = { tokens = \"file:empty.txt\" }", "holds no token"),
        ("auth = { tokens = \"file:missing.txt\" }", "cannot read"),
        ("auth = { tokens = \"t.txt\" }", "is not `file:PATH`"),
        ("auth = { tokens = \"file:bad.txt\" }", "line 2 of"),
        ("auth = { discover = false }", "exactly one of"),
        (
            "auth = { tokens = \"file:bad.txt\", client_credentials = { client_id = \"c\", client_secret = \"s\" } }",
            "exactly one of",
        ),
        (
            "command = \"srv\"\nauth = { tokens = \"file:bad.txt\" }",
            "on a stdio persona",
        ),
        (
            "auth = { client_credentials = { client_id = \"\", client_secret = \"s\" } }",
            "client_credentials.client_id",
        ),
        (
            "auth = { client_credentials = { client_id = \"c\", client_secret = \"***\" } }",
            "a secret redacted",
        ),
        (
            "auth = { client_credentials = { token_url = \"nope\", client_id = \"c\", client_secret = \"s\" } }",
            "is not a URL",
        ),
    ];
    for (persona, expected) in cases {
        let e = resolve(dir.path(), persona).expect_err(persona).to_string();
        assert!(e.contains(expected), "{persona}: {e}");
        assert!(!e.contains("sec ret"), "{e}");
    }
}

#[test]
fn client_credentials_expand_and_literal_secrets_are_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = resolve(
        dir.path(),
        "auth = { client_credentials = { token_url = \"http://127.0.0.1:9/token\", \
         client_id = \"fleet\", client_secret = \"lit-s3cret\", scope = \"mcp\", \
         refresh_before = \"5s\" }, discover = false }",
    )
    .expect("resolves");
    let auth = plan.personas[0].auth.as_ref().expect("auth");
    assert!(!auth.discover);
    let TokenSource::ClientCredentials(cc) = &auth.source else {
        panic!("not client credentials");
    };
    assert_eq!(cc.client_secret, "lit-s3cret");
    assert_eq!(cc.refresh_before, Duration::from_secs(5));
    assert_eq!(cc.scope.as_deref(), Some("mcp"));
    let written = plan.profile_toml();
    assert!(!written.contains("lit-s3cret"), "{written}");
    assert!(written.contains("persona[0].auth.client_credentials.client_secret"));
    // A variable is expanded in memory and written as named.
    let path = std::env::var("PATH").expect("PATH is set");
    let plan = resolve(
        dir.path(),
        "auth = { client_credentials = { client_id = \"fleet\", client_secret = \"${PATH}\" } }",
    )
    .expect("resolves");
    let TokenSource::ClientCredentials(cc) = &plan.personas[0].auth.as_ref().expect("a").source
    else {
        panic!("not client credentials");
    };
    assert_eq!(cc.client_secret, path);
    assert_eq!(cc.refresh_before, DEFAULT_REFRESH_BEFORE);
    assert!(cc.token_url.is_none());
    assert!(plan.profile_toml().contains("${PATH}"));
}
