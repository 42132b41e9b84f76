//! The minimum Rust version we state is one the locked dependency tree builds with: no
//! package of `Cargo.lock` declares a `rust-version` newer than `Cargo.toml`'s, and the
//! README says the same version. Read offline from `cargo metadata --locked`, so a
//! dependency bump that needs a newer compiler fails here, not on a user's machine.

use serde_json::Value;
use std::process::Command;

/// `"1.89"`, `"1.85.0"` → (1, 89, 0), comparable.
fn version(text: &str) -> (u32, u32, u32) {
    let mut parts = text.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// The packages whose `rust-version` is newer than `ours`, as `name version (needs …)`.
fn newer_than(ours: &str, packages: &[Value]) -> Vec<String> {
    packages
        .iter()
        .filter_map(|p| {
            let needs = p["rust_version"].as_str()?;
            (version(needs) > version(ours)).then(|| {
                format!(
                    "{} {} (needs Rust {needs})",
                    p["name"].as_str().unwrap_or("?"),
                    p["version"].as_str().unwrap_or("?")
                )
            })
        })
        .collect()
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_we_state() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("json");
    let packages = metadata["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["name"] == "mcp-fleet")
        .and_then(|p| p["rust_version"].as_str())
        .expect("Cargo.toml states a rust-version")
        .to_string();
    assert!(
        packages.len() > 100,
        "the whole locked tree: {}",
        packages.len()
    );
    let newer = newer_than(&ours, packages);
    assert!(
        newer.is_empty(),
        "Cargo.toml says rust-version = {ours:?}, but the locked tree needs more:\n{}",
        newer.join("\n")
    );
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    assert!(
        readme.contains(&format!("Rust {ours} or newer")),
        "README.md states another minimum than Cargo.toml's {ours}"
    );
}

#[test]
fn a_dependency_newer_than_ours_is_named() {
    let packages: Vec<Value> = serde_json::from_str(
        r#"[{"name": "uuid", "version": "1.29.3", "rust_version": "1.89"},
            {"name": "old", "version": "1.0.0", "rust_version": "1.70.0"},
            {"name": "none", "version": "0.1.0", "rust_version": null}]"#,
    )
    .expect("json");
    assert_eq!(
        newer_than("1.85", &packages),
        ["uuid 1.29.3 (needs Rust 1.89)"]
    );
    assert!(newer_than("1.89", &packages).is_empty());
    assert!(newer_than("1.89.0", &packages).is_empty());
}
