//! Helm charts: loading (directory or .tgz), dependency processing, values
//! coalescing, rendering and manifest assembly, as Helm v4.2.3 does them.

pub mod files;
pub mod load;
pub mod manifest;
pub mod metadata;
pub mod render;
pub mod schema;
pub mod strvals;
pub mod values;

pub use load::{load_chart, LoadError};
pub use metadata::Metadata;

use crate::value::Map;

/// A file of a chart. The bytes are shared: rendering clones charts and
/// file sets freely without copying contents, and a template's text is
/// these very bytes (`chart::render`), not a second copy.
#[derive(Debug, Clone)]
pub struct File {
    pub name: String,
    pub data: bytes::Bytes,
}

impl File {
    pub fn new(name: impl Into<String>, data: Vec<u8>) -> File {
        File {
            name: name.into(),
            data: data.into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub metadata: Metadata,
    /// Default values (values.yaml).
    pub values: Map,
    pub schema: Option<bytes::Bytes>,
    /// Files under templates/, with paths relative to the chart root.
    pub templates: Vec<File>,
    /// Every other file (README, crds/, files/...).
    pub files: Vec<File>,
    /// Subcharts found under charts/.
    pub dependencies: Vec<Chart>,
    /// Chart.lock / requirements.lock contents, raw.
    pub lock: Option<Vec<u8>>,
}

/// Helm's chartutil.ValidateReleaseName: at most 53 bytes matching
/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`;
/// the error is Helm's text.
pub fn validate_release_name(name: &str) -> Result<(), ReleaseNameError> {
    if name.is_empty() {
        return Err(ReleaseNameError::Empty);
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let an = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty() && an(&b[0]) && an(&b[b.len() - 1]) && b.iter().all(|c| an(c) || *c == b'-')
    };
    if name.len() > 53 || !name.split('.').all(label_ok) {
        return Err(ReleaseNameError::Invalid);
    }
    Ok(())
}

/// Why a release name is refused, in Helm's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReleaseNameError {
    #[error("no name provided")]
    Empty,
    #[error("invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53")]
    Invalid,
}

/// The dependencies Chart.yaml names that charts/ lacks, by name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("found in Chart.yaml, but missing in charts/ directory: {}", .0.join(", "))]
pub struct MissingDependencies(pub Vec<String>);

/// How `helm template`, `install` and `upgrade` report what
/// [`check_dependencies`] found missing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: {0}")]
pub struct DependencyError(#[source] pub MissingDependencies);

/// Helm's action.CheckDependencies, which `helm template`, `install` and
/// `upgrade` run before rendering: every dependency Chart.yaml names (by
/// name, whatever its alias, condition or tags) must be a chart under charts/.
pub fn check_dependencies(c: &Chart) -> Result<(), MissingDependencies> {
    let missing: Vec<String> = c
        .metadata
        .dependencies
        .iter()
        .filter(|d| !c.dependencies.iter().any(|s| s.name() == d.name))
        .map(|d| d.name.clone())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(MissingDependencies(missing))
}

impl Chart {
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    pub fn is_library(&self) -> bool {
        self.metadata.chart_type == "library"
    }

    /// Files under crds/ with a .yaml, .yml or .json extension.
    pub fn crd_files(&self) -> Vec<&File> {
        self.files
            .iter()
            .filter(|f| {
                f.name.starts_with("crds/") && {
                    let l = f.name.to_lowercase();
                    l.ends_with(".yaml") || l.ends_with(".yml") || l.ends_with(".json")
                }
            })
            .collect()
    }
}
