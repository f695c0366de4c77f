//! The capability catalog, read from `vendored-charts/catalog.toml`: which
//! capability operators exist, their pinned charts, where our release goes,
//! who needs them, how to recognise one someone else installed, and what
//! "ready" means for each. The charts themselves come from a directory.

use crate::chart::Chart;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The catalog of this build.
pub const BUILT_IN: &str = include_str!("../../../vendored-charts/catalog.toml");
pub const BUILT_IN_PATH: &str = "vendored-charts/catalog.toml";

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    #[serde(default)]
    pub capability: Vec<CapabilityEntry>,
    #[serde(default)]
    pub workload: Vec<WorkloadEntry>,
    /// Every container image the bundled charts deploy, and those the
    /// operator writes into upstream CRs, pinned by digest.
    #[serde(default)]
    pub image: Vec<ImagePin>,
}

#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ImagePin {
    /// The repository with its registry host (`quay.io/jetstack/cert-manager-controller`).
    pub name: String,
    pub tag: String,
    /// `sha256:...` the tag resolves to (`charts lock`).
    pub digest: String,
    /// Set for an image the operator writes into an upstream CR (the CR's
    /// kind and field), not found in a chart.
    #[serde(default)]
    pub set_by: Option<String>,
}

impl ImagePin {
    pub fn tagged(&self) -> String {
        format!("{}:{}", self.name, self.tag)
    }

    /// The reference a pod pulls: by digest.
    pub fn by_digest(&self) -> String {
        format!("{}@{}", self.name, self.digest)
    }
}

#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub chart: String,
    pub version: String,
    /// Where the chart is published (pulled by `charts pull`).
    pub oci: String,
    /// `sha256:...` of the OCI manifest the version's tag points at: what
    /// Renovate's docker datasource updates, and what `charts pull` asks for.
    pub digest: String,
    /// SHA-256 of the chart tarball (the manifest's chart layer): what the
    /// chart store checks before loading. A new `digest` without a new
    /// `sha256` is refused by `charts pull`; `charts lock` refreshes both.
    pub sha256: String,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct CapabilityEntry {
    pub name: String,
    #[serde(flatten)]
    pub pin: Pin,
    pub release: String,
    pub namespace: String,
    #[serde(default)]
    pub needed_by: Vec<Need>,
    #[serde(default)]
    pub prerequisites: Vec<String>,
    /// CRDs that must be Established for the capability to be Ready.
    pub crds: Vec<String>,
    /// Values we set on the chart.
    #[serde(default)]
    pub values: toml::Table,
    pub identity: Identity,
}

/// Which resources need a capability: a kind, and optionally the mode and
/// type they must select.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Need {
    pub kind: String,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
}

/// How the controller of a capability is recognised wherever it runs: pod
/// template labels (all of them), else a container image repository.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub labels: BTreeMap<String, String>,
    pub images: Vec<String>,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct WorkloadEntry {
    pub name: String,
    #[serde(flatten)]
    pub pin: Pin,
    pub kind: String,
    pub release_prefix: String,
}

/// A catalog that cannot be read or used, or a pinned chart that cannot be
/// loaded; each names the file (and line and column where it has them).
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The TOML itself; `at` is `:line:col` when known.
    #[error("{file}{at}: {message}")]
    Syntax {
        file: String,
        at: String,
        message: String,
    },
    #[error("{file}: {problem}")]
    Invalid {
        file: String,
        #[source]
        problem: CatalogProblem,
    },
    #[error("chart {chart} {version}: {path}: {source}")]
    ChartUnreadable {
        chart: String,
        version: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "chart {chart} {version}: {path}: sha256 is {found}, the pin says {pinned}; refusing it"
    )]
    ChartDigest {
        chart: String,
        version: String,
        path: String,
        found: String,
        pinned: String,
    },
    #[error("{path}: {source}")]
    ChartArchive {
        path: String,
        #[source]
        source: crate::chart::load::LoadError,
    },
}

/// What is wrong inside a catalog that parses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogProblem {
    #[error("capability {0:?} is listed twice")]
    CapabilityTwice(String),
    #[error("capability {capability:?}: prerequisite {prerequisite:?} is not another capability of the catalog")]
    UnknownPrerequisite {
        capability: String,
        prerequisite: String,
    },
    /// `owner` is `capability "name"` or `workload "name"`.
    #[error("{owner}: {problem}")]
    Pin { owner: String, problem: PinProblem },
    #[error("image {0} is listed twice")]
    ImageTwice(String),
    #[error(
        "image {image}: digest {digest:?} is not an OCI digest (sha256: and 64 hexadecimal digits)"
    )]
    ImageDigest { image: String, digest: String },
    #[error("prerequisites form a cycle among {0:?}")]
    Cycle(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PinProblem {
    #[error("sha256 {0:?} is not 64 hexadecimal digits")]
    Sha256(String),
    #[error("digest {0:?} is not an OCI digest (sha256: and 64 hexadecimal digits)")]
    Digest(String),
}

impl Catalog {
    pub fn built_in() -> Catalog {
        Catalog::parse(BUILT_IN, BUILT_IN_PATH).expect("the built-in catalog is valid")
    }

    pub fn load(path: &Path) -> Result<Catalog, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Catalog::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a catalog; errors name the file, line and column.
    pub fn parse(text: &str, file: &str) -> Result<Catalog, CatalogError> {
        let catalog: Catalog = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let (line, col) = line_col(text, s.start);
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            CatalogError::Syntax {
                file: file.to_string(),
                at,
                message: e.message().to_string(),
            }
        })?;
        catalog.check().map_err(|problem| CatalogError::Invalid {
            file: file.to_string(),
            problem,
        })?;
        Ok(catalog)
    }

    fn check(&self) -> Result<(), CatalogProblem> {
        let names: Vec<&str> = self.capability.iter().map(|c| c.name.as_str()).collect();
        for (i, c) in self.capability.iter().enumerate() {
            if names[..i].contains(&c.name.as_str()) {
                return Err(CatalogProblem::CapabilityTwice(c.name.clone()));
            }
            for p in &c.prerequisites {
                if !names.contains(&p.as_str()) || p == &c.name {
                    return Err(CatalogProblem::UnknownPrerequisite {
                        capability: c.name.clone(),
                        prerequisite: p.clone(),
                    });
                }
            }
            check_sha256(&c.pin).map_err(|problem| CatalogProblem::Pin {
                owner: format!("capability {:?}", c.name),
                problem,
            })?;
        }
        for w in &self.workload {
            check_sha256(&w.pin).map_err(|problem| CatalogProblem::Pin {
                owner: format!("workload {:?}", w.name),
                problem,
            })?;
        }
        for (i, image) in self.image.iter().enumerate() {
            if self.image[..i].iter().any(|o| o.tagged() == image.tagged()) {
                return Err(CatalogProblem::ImageTwice(image.tagged()));
            }
            let hex = image.digest.strip_prefix("sha256:").unwrap_or_default();
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(CatalogProblem::ImageDigest {
                    image: image.tagged(),
                    digest: image.digest.clone(),
                });
            }
        }
        // Prerequisites must not loop: the install order is their topological order.
        self.install_order()?;
        Ok(())
    }

    pub fn capability(&self, name: &str) -> Option<&CapabilityEntry> {
        self.capability.iter().find(|c| c.name == name)
    }

    pub fn workload_for(&self, kind: &str) -> Option<&WorkloadEntry> {
        self.workload.iter().find(|w| w.kind == kind)
    }

    /// Capability names, prerequisites first (stable: catalog order otherwise).
    pub fn install_order(&self) -> Result<Vec<String>, CatalogProblem> {
        let mut order: Vec<String> = Vec::new();
        let mut remaining: Vec<&CapabilityEntry> = self.capability.iter().collect();
        while !remaining.is_empty() {
            let before = remaining.len();
            remaining.retain(|c| {
                if c.prerequisites.iter().all(|p| order.contains(p)) {
                    order.push(c.name.clone());
                    false
                } else {
                    true
                }
            });
            if remaining.len() == before {
                let names = remaining.iter().map(|c| c.name.clone()).collect();
                return Err(CatalogProblem::Cycle(names));
            }
        }
        Ok(order)
    }
}

fn check_sha256(p: &Pin) -> Result<(), PinProblem> {
    let hex64 = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex64(&p.sha256) {
        return Err(PinProblem::Sha256(p.sha256.clone()));
    }
    match p.digest.strip_prefix("sha256:") {
        Some(hex) if hex64(hex) => Ok(()),
        _ => Err(PinProblem::Digest(p.digest.clone())),
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

impl CapabilityEntry {
    /// The values we set, as the engine's values.
    pub fn chart_values(&self) -> crate::value::Map {
        toml_values(&self.values)
    }
}

pub fn toml_values(t: &toml::Table) -> crate::value::Map {
    let json = serde_json::to_value(t).unwrap_or(serde_json::Value::Null);
    crate::release::record::values_from_json(&json)
}

/// Chart tarballs `<chart>-<version>.tgz` in directories (searched in
/// order), checked against their pins before use.
#[derive(Clone, Debug)]
pub struct ChartStore {
    pub dirs: Vec<PathBuf>,
}

/// A chart as loaded, with the digest it was checked against.
pub struct PinnedChart {
    pub chart: Chart,
    pub sha256: String,
    pub path: PathBuf,
}

impl ChartStore {
    pub fn new(dir: impl Into<PathBuf>) -> ChartStore {
        ChartStore {
            dirs: vec![dir.into()],
        }
    }

    pub fn with_dirs(dirs: Vec<PathBuf>) -> ChartStore {
        ChartStore { dirs }
    }

    /// The first directory holding the tarball (else the first directory).
    pub fn path(&self, pin: &Pin) -> PathBuf {
        let file = format!("{}-{}.tgz", pin.chart, pin.version);
        self.dirs
            .iter()
            .map(|d| d.join(&file))
            .find(|p| p.exists())
            .unwrap_or_else(|| self.dirs.first().cloned().unwrap_or_default().join(&file))
    }

    /// The tarball's bytes and digest, refused unless the digest is the pin's.
    fn read_pinned(&self, pin: &Pin) -> Result<(PathBuf, Vec<u8>, String), CatalogError> {
        let path = self.path(pin);
        let data = std::fs::read(&path).map_err(|source| CatalogError::ChartUnreadable {
            chart: pin.chart.clone(),
            version: pin.version.clone(),
            path: path.display().to_string(),
            source,
        })?;
        let found = crate::digest::sha256_hex(&data);
        if !found.eq_ignore_ascii_case(&pin.sha256) {
            return Err(CatalogError::ChartDigest {
                chart: pin.chart.clone(),
                version: pin.version.clone(),
                path: path.display().to_string(),
                found,
                pinned: pin.sha256.clone(),
            });
        }
        Ok((path, data, found))
    }

    /// Reads the tarball, refuses it unless its SHA-256 is the pin's, loads it.
    pub fn load(&self, pin: &Pin) -> Result<PinnedChart, CatalogError> {
        let (path, data, sha256) = self.read_pinned(pin)?;
        let chart = crate::chart::load::load_archive(&data).map_err(|source| {
            CatalogError::ChartArchive {
                path: path.display().to_string(),
                source,
            }
        })?;
        Ok(PinnedChart {
            chart,
            sha256,
            path,
        })
    }

    /// Every pin checked, for a start-up that reports each unusable file.
    pub fn verify_all(&self, catalog: &Catalog) -> Vec<CatalogError> {
        catalog
            .capability
            .iter()
            .map(|c| &c.pin)
            .chain(catalog.workload.iter().map(|w| &w.pin))
            .filter_map(|pin| self.read_pinned(pin).err())
            .collect()
    }
}

/// The pins file with new digests: `resolved` by catalog name (chart
/// manifest digest and tarball sha256), `images` by `name:tag`. Only those
/// values change; comments, order and layout stay.
pub fn lock_text(
    text: &str,
    resolved: &BTreeMap<String, crate::oci::Resolved>,
    images: &BTreeMap<String, String>,
) -> Result<String, toml_edit::TomlError> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    for section in ["capability", "workload"] {
        let Some(tables) = doc
            .get_mut(section)
            .and_then(|t| t.as_array_of_tables_mut())
        else {
            continue;
        };
        for table in tables.iter_mut() {
            let name = table
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string();
            if let Some(r) = resolved.get(&name) {
                set_keeping_decor(table, "digest", &r.digest);
                set_keeping_decor(table, "sha256", &r.sha256);
            }
        }
    }
    if let Some(tables) = doc
        .get_mut("image")
        .and_then(|t| t.as_array_of_tables_mut())
    {
        for table in tables.iter_mut() {
            let field = |k: &str| {
                table
                    .get(k)
                    .and_then(|n| n.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let tagged = format!("{}:{}", field("name"), field("tag"));
            if let Some(d) = images.get(&tagged) {
                set_keeping_decor(table, "digest", d);
            }
        }
    }
    Ok(doc.to_string())
}

fn set_keeping_decor(table: &mut toml_edit::Table, key: &str, value: &str) {
    match table.get_mut(key).and_then(|i| i.as_value_mut()) {
        Some(v) => {
            let decor = v.decor().clone();
            *v = toml_edit::Value::from(value);
            *v.decor_mut() = decor;
        }
        None => {
            table.insert(key, toml_edit::value(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_catalog_has_every_row_of_the_contract() {
        let c = Catalog::built_in();
        let names: Vec<&str> = c.capability.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cert-manager",
                "cloudnative-pg",
                "clickhouse-operator",
                "altinity-clickhouse-operator",
                "litellm-operator",
                "external-secrets"
            ]
        );
        let order = c.install_order().unwrap();
        assert_eq!(order[0], "cert-manager");
        for cap in &c.capability[1..] {
            assert_eq!(cap.prerequisites, ["cert-manager"], "{}", cap.name);
        }
        let ch = c.capability("clickhouse-operator").unwrap();
        assert_eq!(
            crate::goyaml::emit::to_yaml(&crate::value::Value::map(ch.chart_values()))
                .unwrap_or_default(),
            "certManager:\n  install: false"
        );
        assert_eq!(
            c.workload_for("Observability").unwrap().pin.chart,
            "langfuse"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let text = BUILT_IN.replace("release = \"cloudnative-pg\"", "release = 3");
        let line = text.lines().position(|l| l == "release = 3").unwrap() + 1;
        let e = Catalog::parse(&text, "cat.toml").unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("cat.toml:{line}:11: ")),
            "{e}"
        );
        let unknown = BUILT_IN.replace("needed_by = []", "neded_by = []");
        let e = Catalog::parse(&unknown, "cat.toml").unwrap_err();
        assert!(e.to_string().contains("neded_by"), "{e}");
        let cycle = BUILT_IN.replace("prerequisites = []", "prerequisites = [\"cloudnative-pg\"]");
        let e = Catalog::parse(&cycle, "cat.toml").unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
    }

    #[test]
    fn a_tarball_that_differs_from_its_pin_is_refused_naming_both_digests() {
        let dir = std::env::temp_dir().join(format!("navique-pin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("demo-1.0.0.tgz"), b"not the pinned bytes").unwrap();
        let pin = Pin {
            chart: "demo".into(),
            version: "1.0.0".into(),
            oci: String::new(),
            digest: format!("sha256:{}", "0".repeat(64)),
            sha256: "0".repeat(64),
        };
        let err = ChartStore::new(&dir).load(&pin).err().expect("refused");
        let found = crate::digest::sha256_hex(b"not the pinned bytes");
        assert!(
            err.to_string().contains(&found) && err.to_string().contains(&"0".repeat(64)),
            "{err}"
        );
        assert!(err.to_string().contains("demo-1.0.0.tgz"), "{err}");
        let missing = ChartStore::new(dir.join("nowhere"))
            .load(&pin)
            .err()
            .unwrap();
        assert!(
            missing.to_string().contains("nowhere/demo-1.0.0.tgz"),
            "{missing}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
