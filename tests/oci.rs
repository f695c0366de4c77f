//! The bundled charts over OCI, against a real registry (Debian's
//! `docker-registry`) seeded by real Helm: `charts pull` by digest and by
//! tag through a mirror, `charts verify`, `charts lock` after a Renovate-
//! style bump, refusals (tampered blob, 401, 404, 500, registry down), and
//! `charts push` as Helm pushes, pulled back by real Helm.

#[path = "support/cluster.rs"]
mod cluster;
#[path = "support/python.rs"]
mod python;
#[path = "support/registry.rs"]
mod registry;

use registry::{shared_charts, tools_present, Auth, Registry, ROOT};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_navique-operator");

struct Outcome {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn charts(args: &[&str], extra: &[String]) -> Outcome {
    let out = Command::new(BIN)
        .arg("charts")
        .args(args)
        .args(extra)
        .env("DOCKER_CONFIG", "/nonexistent-navique-docker-config")
        .output()
        .unwrap();
    Outcome {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("navique-oci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sha256_file(p: &Path) -> String {
    navique_ai_core_operator::digest::sha256_hex(&std::fs::read(p).unwrap())
}

fn catalog() -> navique_ai_core_operator::operator::model::catalog::Catalog {
    navique_ai_core_operator::operator::model::catalog::Catalog::built_in()
}

fn ready() -> bool {
    shared_charts().is_some() && tools_present()
}

/// A pins file with only cert-manager's entry of the built-in catalog
/// (edited by `edit`), for tests that need one chart.
fn cert_manager_pins(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("vendored-charts/catalog.toml")).unwrap();
    let start = text.find("\n[[capability]]\n").unwrap() + 1;
    let end = text[start + 1..].find("\n[[capability]]\n").unwrap() + start + 2;
    let path = dir.join("pins.toml");
    std::fs::write(&path, edit(text[start..end].to_string())).unwrap();
    path
}

#[test]
fn every_bundled_chart_is_pulled_by_digest_and_by_tag_through_a_mirror_and_verified() {
    if !ready() {
        return;
    }
    let reg = Registry::start(None);
    reg.seed(&[], &[]);
    let mirrors = reg.mirror_flags();
    for mode in [&[][..], &["--by-tag"][..]] {
        let dest = scratch(if mode.is_empty() {
            "by-digest"
        } else {
            "by-tag"
        });
        let d = dest.to_str().unwrap();
        let mut args = vec!["pull", "--dest", d, "--plain-http"];
        args.extend_from_slice(mode);
        let out = charts(&args, &mirrors);
        assert!(out.ok, "{}", out.stderr);
        for (name, pin) in navique_ai_core_operator::cli::charts::all_pins(&catalog()) {
            let file = dest.join(format!("{}-{}.tgz", pin.chart, pin.version));
            assert_eq!(sha256_file(&file), pin.sha256, "{name}");
            let line = out
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("pulled {name} ")))
                .unwrap();
            // The mirror was used: the upstream host comes after the registry's address.
            let upstream = pin.oci.trim_start_matches("oci://");
            assert!(
                line.contains(&format!("oci://{}/{upstream}@{}", reg.addr, pin.digest)),
                "{line}"
            );
        }
        let verified = charts(&["verify", d], &[]);
        assert!(verified.ok, "{}", verified.stderr);
        assert!(
            verified.stdout.contains("9 charts verified"),
            "{}",
            verified.stdout
        );
        // Nothing but the tarballs: no partial file left behind.
        assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 9);
        std::fs::remove_dir_all(&dest).unwrap();
    }
}

#[test]
fn a_tampered_blob_is_refused_naming_both_digests_and_nothing_is_written() {
    if !ready() {
        return;
    }
    let reg = Registry::start(None);
    reg.seed(&["cert-manager"], &[]);
    let work = scratch("tampered");
    let pins = cert_manager_pins(&work, |t| t);
    let pin = navique_ai_core_operator::operator::model::catalog::Catalog::load(&pins)
        .unwrap()
        .capability[0]
        .pin
        .clone();
    let blob = reg.blob_path(&format!("sha256:{}", pin.sha256));
    let mut data = std::fs::read(&blob).unwrap();
    let at = data.len() / 2;
    data[at] ^= 0xff;
    std::fs::write(&blob, &data).unwrap();
    let dest = work.join("charts");
    let out = charts(
        &[
            "pull",
            "--pins",
            pins.to_str().unwrap(),
            "--dest",
            dest.to_str().unwrap(),
            "--plain-http",
        ],
        &reg.mirror_flags(),
    );
    assert!(!out.ok);
    let found = navique_ai_core_operator::digest::sha256_hex(&data);
    assert!(
        out.stderr.contains(&pin.sha256) && out.stderr.contains(&found),
        "{}",
        out.stderr
    );
    assert!(
        !dest.exists() || std::fs::read_dir(&dest).unwrap().next().is_none(),
        "a refused pull leaves nothing behind"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn a_digest_bump_without_the_tarball_digest_is_refused_until_lock_refreshes_it() {
    if !ready() {
        return;
    }
    // What Renovate's docker datasource does to a pin: a new version and
    // its manifest digest; the tarball's sha256 it does not know about.
    let shared = shared_charts().unwrap();
    let older = shared.join("upgrade/cert-manager-v1.19.2.tgz");
    let reg = Registry::start(None);
    reg.seed(
        &["cert-manager"],
        &[format!(
            "{}=oci://quay.io/jetstack/charts/cert-manager",
            older.display()
        )],
    );
    let work = scratch("bump");
    let mirrors = reg.mirror_flags();
    // The manifest digest of v1.19.2 as the registry has it.
    let pins_old = cert_manager_pins(&work, |t| {
        t.replace("version = \"v1.21.1\"", "version = \"v1.19.2\"")
    });
    let probe = charts(
        &["lock", "--pins", pins_old.to_str().unwrap(), "--plain-http"],
        &mirrors,
    );
    assert!(probe.ok, "{}", probe.stderr);
    let locked = std::fs::read_to_string(&pins_old).unwrap();
    let digest_line = locked
        .lines()
        .find(|l| l.starts_with("digest = "))
        .unwrap()
        .to_string();
    let sha_line = locked
        .lines()
        .find(|l| l.starts_with("sha256 = "))
        .unwrap()
        .to_string();
    assert!(
        sha_line.contains(&sha256_file(&older)),
        "lock wrote the tarball's digest: {sha_line}"
    );

    // Renovate's edit: version and digest of v1.19.2, sha256 still v1.21.1's.
    let current = catalog().capability[0].pin.clone();
    let pins = cert_manager_pins(&work, |t| {
        t.replace("version = \"v1.21.1\"", "version = \"v1.19.2\"")
            .replace(&format!("digest = \"{}\"", current.digest), &digest_line)
    });
    let dest = work.join("charts");
    let pull = |pins: &Path| {
        charts(
            &[
                "pull",
                "--pins",
                pins.to_str().unwrap(),
                "--dest",
                dest.to_str().unwrap(),
                "--plain-http",
            ],
            &mirrors,
        )
    };
    let refused = pull(&pins);
    assert!(!refused.ok);
    assert!(
        refused.stderr.contains(&current.sha256) && refused.stderr.contains(&sha256_file(&older)),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("charts lock"), "{}", refused.stderr);
    let relock = charts(
        &["lock", "--pins", pins.to_str().unwrap(), "--plain-http"],
        &mirrors,
    );
    assert!(relock.ok, "{}", relock.stderr);
    let text = std::fs::read_to_string(&pins).unwrap();
    assert!(text.contains(&sha_line), "{text}");
    assert!(
        text.contains("# The universal prerequisite"),
        "comments survive the lock"
    );
    let pulled = pull(&pins);
    assert!(pulled.ok, "{}", pulled.stderr);
    assert_eq!(
        sha256_file(&dest.join("cert-manager-v1.19.2.tgz")),
        sha256_file(&older)
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn registry_trouble_gets_a_clear_error() {
    if !ready() {
        return;
    }
    let work = scratch("trouble");
    let dest = work.join("charts");
    let d = dest.to_str().unwrap().to_string();
    let pins = cert_manager_pins(&work, |t| t);
    let p = pins.to_str().unwrap().to_string();
    let pull_from = |addr: &str, extra: &[String]| {
        let mut flags = vec![
            "--registry-mirror".to_string(),
            format!("quay.io={addr}/quay.io"),
        ];
        flags.extend_from_slice(extra);
        charts(
            &["pull", "--pins", &p, "--dest", &d, "--plain-http"],
            &flags,
        )
    };

    // Down: nothing listens.
    let down = format!("127.0.0.1:{}", registry::free_port());
    let out = pull_from(&down, &[]);
    assert!(
        !out.ok
            && out
                .stderr
                .contains(&format!("cannot reach the registry at {down}")),
        "{}",
        out.stderr
    );

    // 500 on everything.
    let troubled = registry::answering(500);
    let out = pull_from(&troubled, &[]);
    assert!(!out.ok && out.stderr.contains("500"), "{}", out.stderr);
    assert!(
        out.stderr.contains("quay.io/jetstack/charts/cert-manager"),
        "{}",
        out.stderr
    );

    // 404: an empty registry.
    let empty = Registry::start(None);
    let out = pull_from(&empty.addr, &[]);
    assert!(
        !out.ok && out.stderr.contains("not found (404"),
        "{}",
        out.stderr
    );

    // 401: a registry behind htpasswd, without and with credentials.
    let private = Registry::start(Some(Auth {
        user: "navique",
        password: "s3cret",
    }));
    let out = pull_from(&private.addr, &[]);
    assert!(
        !out.ok && out.stderr.contains("401") && out.stderr.contains("no credentials"),
        "{}",
        out.stderr
    );
    let config = work.join("docker-config.json");
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode("navique:s3cret");
    std::fs::write(
        &config,
        format!(
            "{{\"auths\":{{\"{}\":{{\"auth\":\"{auth}\"}}}}}}",
            private.addr
        ),
    )
    .unwrap();
    let cfg = [
        "--registry-config".to_string(),
        config.display().to_string(),
    ];
    // Seed it with our own push (Helm's needs a login); then pull with credentials.
    let tarball = shared_charts().unwrap().join("cert-manager-v1.21.1.tgz");
    let pushed = charts(
        &[
            "push",
            tarball.to_str().unwrap(),
            &format!("oci://{}/quay.io/jetstack/charts", private.addr),
            "--plain-http",
        ],
        &cfg,
    );
    assert!(pushed.ok, "{}", pushed.stderr);
    // Our push keeps the tarball's mtime, so the pin's manifest digest only
    // holds for the seeded copies: pull by tag, checking the tarball.
    let out = pull_from(
        &private.addr,
        &[cfg[0].clone(), cfg[1].clone(), "--by-tag".into()],
    );
    assert!(
        !out.ok && out.stderr.contains("the tag points at manifest"),
        "{}",
        out.stderr
    );
    let bad = work.join("bad-config.json");
    std::fs::write(
        &bad,
        format!(
            "{{\"auths\":{{\"{}\":{{\"auth\":\"{}\"}}}}}}",
            private.addr,
            base64::engine::general_purpose::STANDARD.encode("navique:wrong")
        ),
    )
    .unwrap();
    let out = pull_from(
        &private.addr,
        &["--registry-config".into(), bad.display().to_string()],
    );
    assert!(
        !out.ok && out.stderr.contains("401") && out.stderr.contains("bad-config.json"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn a_chart_pushed_by_us_has_helms_digest_and_real_helm_pulls_it_back() {
    if !ready() {
        return;
    }
    let shared = shared_charts().unwrap();
    let reg = Registry::start(None);
    let work = scratch("push");
    let mut pushed = Vec::new();
    for name in [
        "cert-manager-v1.21.1.tgz",
        "redis-23.1.1.tgz",
        "grafana-12.11.1.tgz",
        "langfuse-2.0.0.tgz",
    ] {
        let copy = work.join(name);
        std::fs::copy(shared.join(name), &copy).unwrap();
        pushed.push(copy);
    }
    let mut args = vec!["push"];
    args.extend(pushed.iter().map(|p| p.to_str().unwrap()));
    let ours = format!("oci://{}/ours", reg.addr);
    args.extend([ours.as_str(), "--plain-http"]);
    let out = charts(&args, &[]);
    assert!(out.ok, "{}", out.stderr);
    let script = format!(
        r#"
import helm_python, json, sys, urllib.request, hashlib, os
reg, work = {addr:?}, {work:?}
result = {{}}
for line in sys.stdin.read().splitlines():
    _, path, _, where, ours = line.split()
    name, tag = where.rsplit("/", 1)[1].rsplit(":", 1)
    helm_python.push(path, f"oci://{{reg}}/helm", plain_http=True)
    req = urllib.request.Request(f"http://{{reg}}/v2/helm/{{name}}/manifests/{{tag}}", method="HEAD",
        headers={{"Accept": "application/vnd.oci.image.manifest.v1+json"}})
    helms = urllib.request.urlopen(req).headers["Docker-Content-Digest"]
    dest = os.path.join(work, "pulled")
    os.makedirs(dest, exist_ok=True)
    helm_python.pull(f"oci://{{reg}}/ours/{{name}}", version=tag, destination=dest, plain_http=True)
    back = hashlib.sha256(open(os.path.join(dest, f"{{name}}-{{tag}}.tgz"), "rb").read()).hexdigest()
    mine = hashlib.sha256(open(path, "rb").read()).hexdigest()
    result[name] = {{"ours": ours, "helms": helms, "pulled_back": back == mine}}
print(json.dumps(result))
"#,
        addr = reg.addr,
        work = work.display().to_string()
    );
    let result = python::json(&script, &out.stdout);
    assert_eq!(result.as_object().unwrap().len(), 4, "{result}");
    for (name, r) in result.as_object().unwrap() {
        assert_eq!(
            r["ours"], r["helms"],
            "{name}: our push and Helm's give one manifest digest"
        );
        assert_eq!(
            r["pulled_back"], true,
            "{name}: Helm pulls back the bytes we pushed"
        );
    }
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn lock_resolves_every_pinned_image_to_the_digest_the_registry_serves() {
    if !ready() {
        return;
    }
    let reg = Registry::start(None);
    reg.seed_images();
    let work = scratch("images");
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("vendored-charts/catalog.toml")).unwrap();
    let mut zeroed = text.clone();
    for image in &catalog().image {
        zeroed = zeroed.replace(&image.digest, &format!("sha256:{}", "1".repeat(64)));
    }
    let pins = work.join("pins.toml");
    std::fs::write(&pins, &zeroed).unwrap();
    // Only the images: the charts are not in this registry.
    let out = charts(
        &["lock", "--pins", pins.to_str().unwrap(), "--plain-http"],
        &reg.mirror_flags(),
    );
    assert!(
        !out.ok && out.stderr.contains("(nothing written)"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&pins).unwrap(),
        zeroed,
        "a failed lock writes nothing"
    );
    reg.seed(&[], &[]);
    let out = charts(
        &["lock", "--pins", pins.to_str().unwrap(), "--plain-http"],
        &reg.mirror_flags(),
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&pins).unwrap(),
        text,
        "the committed digests are the registry's"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn the_operators_own_chart_goes_to_a_registry_and_real_helm_installs_it_from_there() {
    if !ready() {
        return;
    }
    let reg = Registry::start(None);
    let work = scratch("own-chart");
    let mut cluster = cluster::TestCluster::start();
    let ns = cluster.namespace("navique-system");
    let script = format!(
        r#"
import helm_python, json, subprocess
r = helm_python.package({chart:?}, destination={work:?})
print(json.dumps(r))
"#,
        chart = format!("{ROOT}/chart/navique-ai-core-operator"),
        work = work.display().to_string()
    );
    python::json(&script, "");
    let tarball = work.join(format!(
        "navique-ai-core-operator-{}.tgz",
        env!("CARGO_PKG_VERSION")
    ));
    let pushed = charts(
        &[
            "push",
            tarball.to_str().unwrap(),
            &format!("oci://{}/ghcr.io/scigility/charts", reg.addr),
            "--plain-http",
        ],
        &[],
    );
    assert!(pushed.ok, "{}", pushed.stderr);
    let script = format!(
        r#"
import helm_python, json
cfg = helm_python.Config(kubeconfig_path={kc:?}, namespace={ns:?})
cfg.install("oci://{addr}/ghcr.io/scigility/charts/navique-ai-core-operator", "navique-ai-core-operator", {{}},
            create_namespace=True, chart_version={version:?}, plain_http=True)
listed = [r["name"] for r in cfg.list()]
cfg.uninstall("navique-ai-core-operator")
print(json.dumps(listed))
"#,
        kc = cluster.kubeconfig.display().to_string(),
        ns = ns,
        addr = reg.addr,
        version = env!("CARGO_PKG_VERSION")
    );
    let listed = python::json(&script, "");
    assert_eq!(
        listed,
        serde_json::json!(["navique-ai-core-operator"]),
        "{listed}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}
