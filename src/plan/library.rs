//! `from = …` of a persona: the persona library. A persona may start from one of the
//! recorded real clients built into the binary (profiles/clients/, by name) or from a
//! persona of another profile file; the keys it writes itself win. Expanded once, first
//! thing in resolution, so the results' profile.toml holds the whole persona.

use super::data::base_folder;
use super::error::PlanError;
use crate::profile::{PersonaSection, Profile};

/// The built-in library: name → profile text (one `[[persona]]` each, recorded from the
/// real client it names by interop/record.sh; written by interop/client_library.py).
pub const LIBRARY: &[(&str, &str)] = &[
    (
        "ts-sdk-1",
        include_str!("../../profiles/clients/ts-sdk-1.toml"),
    ),
    (
        "ts-sdk-2",
        include_str!("../../profiles/clients/ts-sdk-2.toml"),
    ),
    (
        "python-sdk-1",
        include_str!("../../profiles/clients/python-sdk-1.toml"),
    ),
    (
        "python-sdk-2",
        include_str!("../../profiles/clients/python-sdk-2.toml"),
    ),
    (
        "inspector-cli",
        include_str!("../../profiles/clients/inspector-cli.toml"),
    ),
];

/// How deep `from` may chain (a library persona that starts from another).
const DEPTH: usize = 4;

/// Expand every persona's `from` in place.
pub fn expand(personas: &mut [PersonaSection], origin: &str) -> Result<(), PlanError> {
    for (i, p) in personas.iter_mut().enumerate() {
        let key = format!("persona[{i}].from");
        let mut depth = 0;
        while let Some(from) = p.from.take() {
            depth += 1;
            if depth > DEPTH {
                return Err(PlanError::new(
                    origin,
                    &key,
                    format!("`from` chains more than {DEPTH} deep"),
                    "start from a persona that does not start from another in turn",
                ));
            }
            let base = find(&from, &key, origin)?;
            *p = merge(base, p, &key, origin)?;
        }
    }
    Ok(())
}

/// The persona `from` names.
fn find(from: &str, key: &str, origin: &str) -> Result<PersonaSection, PlanError> {
    let names = || {
        let names: Vec<&str> = LIBRARY.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    };
    let (text, source, wanted) = if let Some((_, text)) = LIBRARY.iter().find(|(n, _)| *n == from) {
        ((*text).to_string(), format!("the library's {from}"), None)
    } else {
        let (file, wanted) = match from.split_once('#') {
            Some((f, n)) => (f, Some(n)),
            None => (from, None),
        };
        if !file.ends_with(".toml") {
            return Err(PlanError::new(
                origin,
                key,
                format!("{from:?} is not in the client library"),
                format!(
                    "use one of: {}; or a profile file, e.g. \"hosts.toml#name\"",
                    names()
                ),
            ));
        }
        let path = base_folder(origin).join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            PlanError::new(
                origin,
                key,
                format!("cannot read {}: {e}", path.display()),
                "give a path relative to this profile's folder",
            )
        })?;
        (text, path.display().to_string(), wanted)
    };
    let profile = Profile::parse(&text, &source)
        .map_err(|e| PlanError::new(origin, key, e.to_string(), "fix that profile"))?;
    let persona = match wanted {
        None => profile.personas.into_iter().next(),
        Some(name) => profile.personas.into_iter().find(|p| p.name == name),
    };
    persona.ok_or_else(|| {
        PlanError::new(
            origin,
            key,
            format!(
                "{source} has no persona{}",
                wanted.map(|n| format!(" named {n:?}")).unwrap_or_default()
            ),
            "name a persona that file has",
        )
    })
}

/// `base` under `over`: every key `over` sets wins; its name is `over`'s.
fn merge(
    base: PersonaSection,
    over: &PersonaSection,
    key: &str,
    origin: &str,
) -> Result<PersonaSection, PlanError> {
    let bad = |e: String| PlanError::new(origin, key, e, "report this: the persona did not merge");
    let table = |p: &PersonaSection| match toml::Value::try_from(p) {
        Ok(toml::Value::Table(t)) => Ok(t),
        Ok(_) => Err(bad("not a table".into())),
        Err(e) => Err(bad(e.to_string())),
    };
    let mut merged = table(&base)?;
    for (k, v) in table(over)? {
        merged.insert(k, v);
    }
    let mut p: PersonaSection = toml::Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| bad(e.to_string()))?;
    // The base's own `from` (a chain) is expanded next; `over`'s was taken.
    p.from = base.from;
    p.name = over.name.clone();
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn persona(toml_text: &str) -> PersonaSection {
        Profile::parse(toml_text, "t")
            .expect("parses")
            .personas
            .remove(0)
    }

    #[test]
    fn a_file_persona_under_the_keys_written_here() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("hosts.toml"),
            "[[persona]]\nname = \"a\"\nprotocol_version = \"2025-03-26\"\nget_stream = true\n\
             client_info = { name = \"host\", version = \"1\" }\n\
             [[persona]]\nname = \"b\"\nprotocol_version = \"2025-06-18\"\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("p.toml"), "").expect("write");
        let origin = dir.path().join("p.toml").display().to_string();
        let mut ps = vec![
            persona("[[persona]]\nname = \"mine\"\nfrom = \"hosts.toml\"\nget_stream = false\n"),
            persona("[[persona]]\nname = \"other\"\nfrom = \"hosts.toml#b\"\n"),
        ];
        expand(&mut ps, &origin).expect("expands");
        assert_eq!(ps[0].name, "mine");
        assert_eq!(ps[0].protocol_version.as_deref(), Some("2025-03-26"));
        assert_eq!(ps[0].get_stream, Some(false));
        assert!(ps[0]
            .client_info
            .as_ref()
            .is_some_and(|c| c.name.as_deref() == Some("host")));
        assert_eq!(ps[1].protocol_version.as_deref(), Some("2025-06-18"));
        assert!(ps.iter().all(|p| p.from.is_none()));
    }

    #[test]
    fn every_library_persona_resolves_by_name() {
        let names: Vec<&str> = LIBRARY.iter().map(|(n, _)| *n).collect();
        let text: String = names
            .iter()
            .map(|n| format!("[[persona]]\nname = \"my-{n}\"\nfrom = \"{n}\"\n"))
            .collect();
        let profile = Profile::parse(&text, "t").expect("parses");
        let plan = crate::plan::Plan::resolve(profile, &crate::plan::Overrides::default(), "t")
            .expect("resolves");
        assert_eq!(plan.personas.len(), names.len());
        for (p, (name, lib)) in plan.effective_profile.personas.iter().zip(LIBRARY) {
            let own = Profile::parse(lib, name)
                .expect("library parses")
                .personas
                .remove(0);
            assert_eq!(p.name, format!("my-{name}"));
            assert_eq!(p.protocol_version, own.protocol_version, "{name}");
            assert!(
                p.client_info.is_some() && p.capabilities.is_some(),
                "{name}"
            );
        }
    }

    #[test]
    fn unknown_names_files_and_personas_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("h.toml"), "[[persona]]\nname = \"a\"\n").expect("write");
        std::fs::write(dir.path().join("p.toml"), "").expect("write");
        let origin = dir.path().join("p.toml").display().to_string();
        for (from, says) in [
            ("no-such-client", "not in the client library"),
            ("missing.toml", "cannot read"),
            ("h.toml#zz", "no persona named \"zz\""),
        ] {
            let mut ps = vec![persona(&format!(
                "[[persona]]\nname = \"x\"\nfrom = \"{from}\"\n"
            ))];
            let e = expand(&mut ps, &origin).expect_err(from).to_string();
            assert!(e.contains(says), "{from}: {e}");
        }
        // A persona that starts from itself.
        std::fs::write(
            dir.path().join("loop.toml"),
            "[[persona]]\nname = \"a\"\nfrom = \"loop.toml\"\n",
        )
        .expect("write");
        let mut ps = vec![persona("[[persona]]\nname = \"x\"\nfrom = \"loop.toml\"\n")];
        assert!(expand(&mut ps, &origin)
            .expect_err("loop")
            .to_string()
            .contains("chains more than"));
    }
}
