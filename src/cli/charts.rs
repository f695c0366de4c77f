//! `navique-operator charts ...`: the bundled charts' pins, pulled from OCI
//! registries and verified, for images and air-gapped clusters.

use super::args::Args;
use crate::oci::{self, Expect, Mirrors, Options, Registry, Repository};
use crate::operator::model::catalog::{Catalog, ChartStore, Pin};
use std::path::{Path, PathBuf};

/// Every pinned chart with the name the catalog gives it.
pub fn all_pins(c: &Catalog) -> Vec<(&str, &Pin)> {
    c.capability
        .iter()
        .map(|e| (e.name.as_str(), &e.pin))
        .chain(c.workload.iter().map(|w| (w.name.as_str(), &w.pin)))
        .collect()
}

fn registry(a: &Args) -> Result<Registry, String> {
    Registry::new(Options {
        mirrors: Mirrors::parse(&a.all(&["--registry-mirror"])).map_err(|e| e.to_string())?,
        plain_http: a.flag("--plain-http"),
        registry_config: a.one(&["--registry-config"]).map(PathBuf::from),
        ca_file: a.one(&["--ca-file"]).map(PathBuf::from),
    })
    .map_err(|e| e.to_string())
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

pub fn run(rest: &[String]) -> Result<(), String> {
    let Some(sub) = rest.first() else {
        return Err("charts: expected list, pull, verify, lock, push or images".into());
    };
    let a = Args::parse(&rest[1..])?;
    match sub.as_str() {
        "list" => list(&a),
        "pull" => pull(&a),
        "verify" => verify(&a),
        "lock" => lock(&a),
        "push" => push(&a),
        "images" => images(&a),
        other => Err(format!(
            "charts: unknown subcommand {other:?} (list, pull, verify, lock, push, images)"
        )),
    }
}

/// `charts list [--pins FILE] [-o json]`.
fn list(a: &Args) -> Result<(), String> {
    let catalog = super::operator::catalog(a)?;
    let rows = all_pins(&catalog);
    if a.one(&["-o", "--output"]).as_deref() == Some("json") {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, p)| {
                serde_json::json!({
                    "name": name, "chart": p.chart, "version": p.version,
                    "oci": p.oci, "digest": p.digest, "sha256": p.sha256,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&items).unwrap_or_default()
        );
        return Ok(());
    }
    println!("{:<30}{:<16}{:<64}DIGEST", "NAME", "VERSION", "CHART");
    for (name, p) in rows {
        println!("{name:<30}{:<16}{:<64}{}", p.version, p.oci, p.digest);
    }
    Ok(())
}

/// `charts pull [--pins FILE] [--dest DIR] [--registry-mirror SRC=DST]...
/// [--plain-http] [--registry-config FILE] [--by-tag]`: every pinned chart
/// into DIR as `<chart>-<version>.tgz`, each checked against both digests
/// before it is written, so a failure leaves nothing half-written.
fn pull(a: &Args) -> Result<(), String> {
    let catalog = super::operator::catalog(a)?;
    let dest = PathBuf::from(a.one(&["--dest", "-d"]).unwrap_or_else(|| "charts".into()));
    let by_tag = a.flag("--by-tag");
    let registry = registry(a)?;
    let rt = runtime()?;
    let mut failures = Vec::new();
    for (name, pin) in all_pins(&catalog) {
        let outcome = rt.block_on(async {
            let repo = Repository::parse(&pin.oci).map_err(|e| format!("{name}: {e}"))?;
            let expect = Expect {
                digest: Some(pin.digest.clone()),
                sha256: Some(pin.sha256.clone()),
            };
            let (resolved, data) = if by_tag {
                let (r, data) = registry
                    .pull_chart(
                        &repo,
                        &pin.version,
                        &Expect {
                            digest: None,
                            ..expect.clone()
                        },
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                if r.digest != pin.digest {
                    return Err(format!(
                        "{}:{}: the tag points at manifest {}, the pin says {}; refusing it",
                        r.repository, pin.version, r.digest, pin.digest
                    ));
                }
                (r, data)
            } else {
                registry
                    .pull_chart(&repo, &pin.version, &expect)
                    .await
                    .map_err(|e| e.to_string())?
            };
            let file = format!("{}-{}.tgz", pin.chart, pin.version);
            let path = oci::write_atomically(&dest, &file, &data).map_err(|e| e.to_string())?;
            Ok::<_, String>(format!(
                "{} {}@{} -> {}",
                name,
                resolved.repository,
                resolved.digest,
                path.display()
            ))
        });
        match outcome {
            Ok(line) => println!("pulled {line}"),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// `charts verify DIR [--pins FILE]`: every pinned tarball present, with
/// its pinned SHA-256, and a chart whose Chart.yaml says the pinned name
/// and version.
fn verify(a: &Args) -> Result<(), String> {
    let catalog = super::operator::catalog(a)?;
    let dir = a
        .positional
        .first()
        .ok_or("charts verify: expected the directory of tarballs")?;
    let errors = verify_dir(&catalog, Path::new(dir));
    if errors.is_empty() {
        println!("{} charts verified in {dir}", all_pins(&catalog).len());
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

pub fn verify_dir(catalog: &Catalog, dir: &Path) -> Vec<String> {
    let store = ChartStore::new(dir);
    let mut errors = Vec::new();
    for (name, pin) in all_pins(catalog) {
        match store.load(pin) {
            Err(e) => errors.push(format!("{name}: {}", e)),
            Ok(loaded) => {
                let m = &loaded.chart.metadata;
                if m.name != pin.chart || m.version != pin.version {
                    errors.push(format!(
                        "{name}: {}: Chart.yaml says {} {}, the pin says {} {}",
                        loaded.path.display(),
                        m.name,
                        m.version,
                        pin.chart,
                        pin.version
                    ));
                }
            }
        }
    }
    errors
}

/// `charts lock [--pins FILE] [--registry-mirror ...] [--plain-http] [--only-charts]`:
/// resolves every pin's version tag to its manifest digest and chart
/// tarball digest, and every pinned image's tag to its digest, and writes
/// them into the pins file (comments and layout kept).
fn lock(a: &Args) -> Result<(), String> {
    let path = PathBuf::from(
        a.one(&["--pins", "--catalog"])
            .unwrap_or_else(|| crate::operator::model::catalog::BUILT_IN_PATH.into()),
    );
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let catalog = Catalog::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    let registry = registry(a)?;
    let rt = runtime()?;
    let mut resolved = std::collections::BTreeMap::new();
    let mut images = std::collections::BTreeMap::<String, String>::new();
    let mut failures = Vec::new();
    for (name, pin) in all_pins(&catalog) {
        let repo = Repository::parse(&pin.oci).map_err(|e| format!("{name}: {e}"))?;
        match rt.block_on(registry.resolve(&repo, &pin.version)) {
            Ok(r) => {
                resolved.insert(name.to_string(), r);
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let images_too = !a.flag("--only-charts");
    for image in catalog.image.iter().filter(|_| images_too) {
        match rt.block_on(registry.image_digest(&image.tagged())) {
            Ok(d) => {
                images.insert(image.tagged(), d);
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    if !failures.is_empty() {
        return Err(format!("{}\n(nothing written)", failures.join("\n")));
    }
    let updated = crate::operator::model::catalog::lock_text(&text, &resolved, &images)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Catalog::parse(&updated, &path.display().to_string()).map_err(|e| e.to_string())?;
    if updated == text {
        println!("{}: every pin is current", path.display());
        return Ok(());
    }
    oci::write_atomically(
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
        &path.file_name().unwrap_or_default().to_string_lossy(),
        updated.as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    for (name, r) in &resolved {
        println!("{name}: {} sha256 {}", r.digest, r.sha256);
    }
    for (name, d) in &images {
        println!("image {name}: {d}");
    }
    Ok(())
}

/// `charts push TARBALL... oci://HOST/PATH [--plain-http]`: as `helm push`,
/// to `oci://HOST/PATH/<chart name>:<version>`.
fn push(a: &Args) -> Result<(), String> {
    let (dest, files) = a
        .positional
        .split_last()
        .ok_or("charts push: expected TARBALL... oci://HOST/PATH")?;
    if files.is_empty() {
        return Err("charts push: expected TARBALL... oci://HOST/PATH".into());
    }
    let root = Repository::parse(&format!("{}/_", dest.trim_end_matches('/')))
        .map_err(|_| format!("charts push: {dest:?} is not oci://HOST/PATH"))?;
    let root = root.location.trim_end_matches("/_").to_string();
    let registry = registry(a)?;
    let rt = runtime()?;
    for file in files {
        let data = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        let chart = crate::chart::load::load_archive(&data).map_err(|e| format!("{file}: {e}"))?;
        let repo = Repository {
            location: format!("{root}/{}", chart.metadata.name),
        };
        let r = rt
            .block_on(registry.push_chart(Path::new(file), &repo))
            .map_err(|e| e.to_string())?;
        println!(
            "pushed {file} -> {}:{} {}",
            r.repository, chart.metadata.version, r.digest
        );
    }
    Ok(())
}

/// `charts images [--charts-dir DIR]... [--pins FILE] [--check] [-o json]`:
/// every container image the bundled charts deploy as the operator
/// installs them, and those the operator sets in upstream CRs, by digest
/// where pinned: the list an air-gapped cluster mirrors (OLM's
/// relatedImages). `--check` fails when an image has no pin or a pin no use.
fn images(a: &Args) -> Result<(), String> {
    let catalog = super::operator::catalog(a)?;
    let dirs = super::demo::charts_dirs(a);
    let rendered =
        crate::packaging::airgap::rendered_images(&catalog, &ChartStore::with_dirs(dirs))
            .map_err(|e| e.to_string())?;
    let pinned: std::collections::BTreeMap<String, &crate::operator::model::catalog::ImagePin> =
        catalog.image.iter().map(|i| (i.tagged(), i)).collect();
    if a.flag("--check") {
        let (unpinned, unused) = crate::packaging::airgap::pin_drift(&catalog, &rendered);
        if !unpinned.is_empty() || !unused.is_empty() {
            return Err(format!(
                "image pins drift from the charts:{}{}",
                unpinned
                    .iter()
                    .map(|i| format!(
                        "\n  not pinned: {i} (used by {})",
                        rendered[i].iter().cloned().collect::<Vec<_>>().join(", ")
                    ))
                    .collect::<String>(),
                unused
                    .iter()
                    .map(|i| format!("\n  pinned, used by no chart: {i}"))
                    .collect::<String>()
            ));
        }
    }
    let reference = |key: &str| {
        pinned
            .get(key)
            .map(|p| p.by_digest())
            .unwrap_or_else(|| key.to_string())
    };
    if a.one(&["-o", "--output"]).as_deref() == Some("json") {
        let items: Vec<serde_json::Value> = rendered
            .iter()
            .map(|(key, by)| serde_json::json!({"image": reference(key), "tag": key, "usedBy": by}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&items).unwrap_or_default()
        );
    } else {
        for (key, by) in &rendered {
            println!(
                "{}\t{}",
                reference(key),
                by.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(())
}
