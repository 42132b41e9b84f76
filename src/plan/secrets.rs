//! Secrets in the plan: where they come from (`${VAR}` from the environment, header lines
//! from `--header @file`) and how the effective profile is written without them. Values
//! are expanded when the plan is resolved; the profile keeps what the user wrote, so the
//! results folder's `profile.toml` names the variables and files, never their contents.

use super::error::PlanError;
use super::Plan;
use crate::profile::Profile;
use crate::redact::{self, MASK};

/// `${NAME}` references in `text` replaced by the environment's values; `key` names the
/// setting in errors (an unset variable is one).
pub(super) fn expand(text: &str, key: &str, origin: &str) -> Result<String, PlanError> {
    expand_with(text, key, origin, &|name| std::env::var(name).ok())
}

fn expand_with(
    text: &str,
    key: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, PlanError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| {
            PlanError::new(
                origin,
                key,
                "a `${` is not closed",
                "write a variable as ${NAME}",
            )
        })?;
        let name = &after[..end];
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(PlanError::new(
                origin,
                key,
                format!("`${{{name}}}` is not a variable name"),
                "use letters, digits and '_', e.g. ${MCP_TOKEN}",
            ));
        }
        let value = env(name).ok_or_else(|| {
            PlanError::new(
                origin,
                key,
                format!("the environment variable {name} is not set"),
                format!("set it before the run (export {name}=...), or write the value itself"),
            )
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A value a results folder wrote as `***` cannot be sent: say where to give it again.
pub(super) fn refuse_masked(masked: bool, key: &str, origin: &str) -> Result<(), PlanError> {
    if !masked {
        return Ok(());
    }
    Err(PlanError::new(
        origin,
        key,
        format!("holds {MASK:?}: a secret redacted when this profile was written"),
        "give it again from the environment (\"${VAR}\") or a file (--header @file)",
    ))
}

/// Whether a URL carries a masked password, user name or query value.
pub(super) fn url_is_masked(url: &url::Url) -> bool {
    url.password() == Some(MASK)
        || url.username() == MASK
        || url.query_pairs().any(|(_, v)| v == MASK)
}

/// The headers of a `--header @file`: one `Name: value` per line; blank lines and `#`
/// comments are skipped. Errors name the file and the line, never its text.
pub(super) fn header_file(
    path: &str,
    key: &str,
    origin: &str,
) -> Result<Vec<(String, String)>, PlanError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("cannot read the header file {path:?}: {e}"),
            "name a file holding 'Name: value' lines (--header @FILE)",
        )
    })?;
    let mut headers = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| {
            PlanError::new(
                origin,
                key,
                format!("line {} of {path:?} has no ':'", n + 1),
                "write each header as 'Name: value'",
            )
        })?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    if headers.is_empty() {
        return Err(PlanError::new(
            origin,
            key,
            format!("{path:?} holds no header"),
            "write a 'Name: value' line in it",
        ));
    }
    Ok(headers)
}

/// The profile as the results folder writes it: URLs, header values and command
/// environment values as written when they name variables, `***` when they are literal
/// secrets; and the keys that were masked.
pub(super) fn written_profile(p: &Profile) -> (Profile, Vec<String>) {
    let mut out = p.clone();
    let mut masked = Vec::new();
    let mut url = |u: &mut Option<String>, key: String| {
        if let Some(text) = u {
            let shown = redact::url_as_written(text);
            if shown != *text {
                masked.push(key);
                *text = shown;
            }
        }
    };
    url(&mut out.target.url, "target.url".into());
    url(&mut out.watch.server_metrics, "watch.server_metrics".into());
    for (i, persona) in out.personas.iter_mut().enumerate() {
        url(&mut persona.url, format!("persona[{i}].url"));
    }
    for (i, entry) in out.outputs.push.iter_mut().enumerate() {
        // `KIND=URL`: the URL is what may carry a secret.
        if let Some((kind, raw)) = entry.split_once('=') {
            let mut shown = Some(raw.to_string());
            url(&mut shown, format!("outputs.push[{i}]"));
            *entry = format!("{kind}={}", shown.unwrap_or_default());
        }
    }
    for (i, persona) in out.personas.iter_mut().enumerate() {
        let cc = persona
            .auth
            .as_mut()
            .and_then(|a| a.client_credentials.as_mut());
        if let Some(cc) = cc {
            let shown = redact::value_as_written(&cc.client_secret).into_owned();
            if shown != cc.client_secret {
                masked.push(format!(
                    "persona[{i}].auth.client_credentials.client_secret"
                ));
                cc.client_secret = shown;
            }
        }
    }
    let tables = [
        ("headers", &mut out.target.headers),
        ("env", &mut out.target.env),
    ];
    for (table, values) in tables {
        for (name, value) in values.iter_mut() {
            let shown = redact::value_as_written(value).into_owned();
            if shown != *value {
                masked.push(format!("target.{table}.{name}"));
                *value = shown;
            }
        }
    }
    (out, masked)
}

impl Plan {
    /// The effective profile as the results folder's `profile.toml`: secrets redacted,
    /// with a comment naming what was redacted and how to give it again.
    pub fn profile_toml(&self) -> String {
        let toml = self.effective_profile.to_toml();
        if self.redacted.is_empty() {
            return toml;
        }
        format!(
            "# Secrets were redacted when this file was written (\"{MASK}\"): {}.\n\
             # To run it again, give them from the environment (\"${{VAR}}\") or a file \
             (--header @file).\n{toml}",
            self.redacted.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_string())
    }

    #[test]
    fn variables_expand_and_unset_ones_are_named() {
        assert_eq!(
            expand_with("Bearer ${TOKEN}!", "k", "o", &env).expect("expands"),
            "Bearer s3cret!"
        );
        assert_eq!(
            expand_with("$HOME {x}", "k", "o", &env).expect("kept"),
            "$HOME {x}"
        );
        let e = expand_with("${MISSING}", "target.headers.A", "p.toml", &env)
            .expect_err("unset")
            .to_string();
        assert_eq!(
            e,
            "p.toml: `target.headers.A`: the environment variable MISSING is not set\n\
             fix: set it before the run (export MISSING=...), or write the value itself"
        );
        assert!(expand_with("${TOKEN", "k", "o", &env).is_err());
        assert!(expand_with("${1X}", "k", "o", &env).is_err());
    }

    #[test]
    fn resolving_expands_and_refuses_redacted_values() {
        let resolve = |text: &str| {
            let profile = Profile::parse(text, "p").expect("parses");
            Plan::resolve(profile, &super::super::Overrides::default(), "p")
        };
        // PATH is set wherever tests run; nothing here changes the environment.
        let path = std::env::var("PATH").expect("PATH is set");
        let plan =
            resolve("[target]\ncommand = \"srv\"\nenv = { P = \"${PATH}\" }\n").expect("resolves");
        assert_eq!(
            plan.target,
            super::super::Target::Stdio {
                program: "srv".into(),
                args: vec![],
                env: vec![("P".into(), path)]
            }
        );
        assert_eq!(plan.effective_profile.target.env["P"], "${PATH}");
        let e =
            resolve("[target]\ncommand = \"s\"\nenv = { A = \"${MCP_FLEET_UNSET_IN_TESTS}\" }\n")
                .expect_err("unset")
                .to_string();
        assert!(
            e.starts_with(
                "p: `target.env.A`: the environment variable MCP_FLEET_UNSET_IN_TESTS is not set"
            ),
            "{e}"
        );
        let redacted = [
            ("[target]\nurl = \"http://u:***@h/mcp\"\n", "target.url"),
            ("[target]\nheaders = { A = \"***\" }\n", "target.headers.A"),
            (
                "[target]\ncommand = \"s\"\nenv = { A = \"***\" }\n",
                "target.env.A",
            ),
            (
                "[[persona]]\nname = \"a\"\nurl = \"http://h/mcp?k=***\"\n",
                "persona[0].url",
            ),
        ];
        for (text, key) in redacted {
            let e = resolve(text).expect_err(text).to_string();
            assert!(
                e.starts_with(&format!("p: `{key}`: holds \"***\": a secret redacted")),
                "{e}"
            );
        }
    }

    #[test]
    fn header_files_are_read_and_errors_do_not_show_their_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h");
        std::fs::write(&path, "# auth\nAuthorization: Bearer s3cret\n\nX-A: b\n").expect("write");
        let path = path.display().to_string();
        assert_eq!(
            header_file(&path, "k", "o").expect("reads"),
            [
                ("Authorization".to_string(), "Bearer s3cret".to_string()),
                ("X-A".to_string(), "b".to_string())
            ]
        );
        std::fs::write(&path, "s3cret\n").expect("write");
        let e = header_file(&path, "k", "o")
            .expect_err("no colon")
            .to_string();
        assert!(e.contains("line 1 of") && !e.contains("s3cret"), "{e}");
        let e = header_file("/nonexistent/h", "--header", "command line")
            .expect_err("missing")
            .to_string();
        assert!(
            e.contains("cannot read the header file \"/nonexistent/h\""),
            "{e}"
        );
    }

    #[test]
    fn the_written_profile_keeps_variables_and_masks_literals() {
        let p = Profile::parse(
            r#"
[target]
url = "http://u:pw@h/mcp?k=${KEY}&t=lit"
headers = { Authorization = "Bearer ${TOKEN}", X-Key = "lit" }
header_files = ["auth.header"]
env = { API_KEY = "lit" }
[[persona]]
name = "a"
url = "/mcp?x=1"
"#,
            "p",
        )
        .expect("parses");
        let (w, masked) = written_profile(&p);
        assert_eq!(
            w.target.url.as_deref(),
            Some("http://u:***@h/mcp?k=${KEY}&t=***")
        );
        assert_eq!(w.target.headers["Authorization"], "Bearer ${TOKEN}");
        assert_eq!(w.target.headers["X-Key"], MASK);
        assert_eq!(w.target.env["API_KEY"], MASK);
        assert_eq!(w.target.header_files, ["auth.header"]);
        assert_eq!(w.personas[0].url.as_deref(), Some("/mcp?x=***"));
        assert_eq!(
            masked,
            [
                "target.url",
                "persona[0].url",
                "target.headers.X-Key",
                "target.env.API_KEY"
            ]
        );
    }
}
