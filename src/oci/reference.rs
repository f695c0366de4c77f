//! Where a chart or image lives: `oci://` references, the tags Helm gives
//! chart versions, and `--registry-mirror SRC=DST` rules.

use oci_client::Reference;

/// Why a chart repository or reference is refused.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("{0:?} is not an oci:// reference")]
    NotOci(String),
    #[error("{0:?} names a registry but no repository")]
    NoRepository(String),
    #[error("{0:?} is not oci://HOST/REPOSITORY")]
    Malformed(String),
    /// `text` (without the scheme) does not parse as a tag or digest reference.
    #[error("oci://{text} is not a valid reference: {source}")]
    Invalid {
        text: String,
        #[source]
        source: oci_client::ParseError,
    },
}

/// Why a `--registry-mirror` rule is refused; each holds the flag's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    #[error("--registry-mirror {0:?}: expected SRC=DST, as quay.io=mirror.example:5000/quay")]
    NotARule(String),
    #[error("--registry-mirror {0:?}: SRC and DST must both be given")]
    Empty(String),
}

/// A chart repository as the catalog names it: `oci://host/path/name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// `host[:port]/path/name`, without the scheme.
    pub location: String,
}

impl Repository {
    pub fn parse(oci: &str) -> Result<Repository, ReferenceError> {
        let rest = oci
            .strip_prefix("oci://")
            .ok_or_else(|| ReferenceError::NotOci(oci.to_string()))?
            .trim_end_matches('/');
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| ReferenceError::NoRepository(oci.to_string()))?;
        if host.is_empty() || path.is_empty() || rest.contains('@') {
            return Err(ReferenceError::Malformed(oci.to_string()));
        }
        Ok(Repository {
            location: rest.to_string(),
        })
    }

    pub fn host(&self) -> &str {
        self.location.split('/').next().unwrap_or_default()
    }

    /// The reference of one chart version, by tag (Helm writes `+` as `_`
    /// in tags, since OCI tags cannot hold it).
    pub fn tagged(&self, version: &str) -> Result<Reference, ReferenceError> {
        parse_reference(format!("{}:{}", self.location, chart_tag(version)))
    }

    /// The reference of one manifest, by digest.
    pub fn by_digest(&self, digest: &str) -> Result<Reference, ReferenceError> {
        parse_reference(format!("{}@{}", self.location, digest))
    }
}

fn parse_reference(text: String) -> Result<Reference, ReferenceError> {
    text.parse()
        .map_err(|source| ReferenceError::Invalid { text, source })
}

impl std::fmt::Display for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "oci://{}", self.location)
    }
}

pub fn chart_tag(version: &str) -> String {
    version.replace('+', "_")
}

/// `--registry-mirror SRC=DST`: references under SRC (a registry host, or a
/// host and path prefix) are fetched from DST instead. The longest matching
/// SRC wins, so `quay.io=m/quay` and `quay.io/jetstack=m/js` can coexist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mirrors {
    rules: Vec<(String, String)>,
}

impl Mirrors {
    pub fn parse(flags: &[String]) -> Result<Mirrors, MirrorError> {
        let mut rules = Vec::new();
        for flag in flags {
            let (src, dst) = flag
                .split_once('=')
                .ok_or_else(|| MirrorError::NotARule(flag.clone()))?;
            let clean = |s: &str| {
                s.trim()
                    .trim_start_matches("oci://")
                    .trim_end_matches('/')
                    .to_string()
            };
            let (src, dst) = (clean(src), clean(dst));
            if src.is_empty() || dst.is_empty() {
                return Err(MirrorError::Empty(flag.clone()));
            }
            rules.push((src, dst));
        }
        rules.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
        Ok(Mirrors { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// `location` (`host/path...`, no scheme, no tag) as fetched through the
    /// mirrors; unchanged when no rule matches.
    pub fn map(&self, location: &str) -> String {
        for (src, dst) in &self.rules {
            if let Some(rest) = location.strip_prefix(src.as_str()) {
                if rest.is_empty() || rest.starts_with('/') {
                    return format!("{dst}{rest}");
                }
            }
        }
        location.to_string()
    }

    pub fn repository(&self, repo: &Repository) -> Repository {
        Repository {
            location: self.map(&repo.location),
        }
    }

    /// An image reference as a pod would pull it through the mirror. Docker
    /// Hub's short names (`altinity/clickhouse-operator`) are made whole
    /// first, so a rule for `docker.io` covers them.
    pub fn image(&self, image: &str) -> String {
        if self.rules.is_empty() {
            return image.to_string();
        }
        let whole = whole_image_name(image);
        let mapped = self.map(&whole);
        if mapped == whole {
            image.to_string()
        } else {
            mapped
        }
    }
}

/// `nginx` → `docker.io/library/nginx`, `a/b:1` → `docker.io/a/b:1`; names
/// with a registry host (a first part with a dot or a colon, or
/// `localhost`) stay as they are.
pub fn whole_image_name(image: &str) -> String {
    let first = image.split('/').next().unwrap_or_default();
    let has_host =
        image.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    if has_host {
        image.to_string()
    } else if image.contains('/') {
        format!("docker.io/{image}")
    } else {
        format!("docker.io/library/{image}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_parse_and_refuse() {
        let r = Repository::parse("oci://quay.io/jetstack/charts/cert-manager").unwrap();
        assert_eq!(r.host(), "quay.io");
        assert_eq!(
            r.tagged("v1.21.1").unwrap().whole(),
            "quay.io/jetstack/charts/cert-manager:v1.21.1"
        );
        assert_eq!(
            r.tagged("1.0.0+build.1").unwrap().tag(),
            Some("1.0.0_build.1")
        );
        assert!(Repository::parse("https://quay.io/x")
            .unwrap_err()
            .to_string()
            .contains("not an oci://"));
        assert!(Repository::parse("oci://quay.io")
            .unwrap_err()
            .to_string()
            .contains("no repository"));
    }

    #[test]
    fn the_longest_mirror_rule_wins_and_only_on_path_boundaries() {
        let m = Mirrors::parse(&[
            "quay.io=127.0.0.1:5000/quay".into(),
            "oci://quay.io/jetstack=127.0.0.1:5000/js/".into(),
            "docker.io=mirror:5000/hub".into(),
        ])
        .unwrap();
        assert_eq!(
            m.map("quay.io/jetstack/charts/cert-manager"),
            "127.0.0.1:5000/js/charts/cert-manager"
        );
        assert_eq!(m.map("quay.io/other/x"), "127.0.0.1:5000/quay/other/x");
        assert_eq!(m.map("quay.iox/other"), "quay.iox/other");
        assert_eq!(m.map("ghcr.io/a/b"), "ghcr.io/a/b");
        assert_eq!(
            m.image("altinity/clickhouse-operator:0.25.6"),
            "mirror:5000/hub/altinity/clickhouse-operator:0.25.6"
        );
        assert_eq!(m.image("busybox"), "mirror:5000/hub/library/busybox");
        assert!(Mirrors::parse(&["quay.io".into()])
            .unwrap_err()
            .to_string()
            .contains("SRC=DST"));
    }
}
