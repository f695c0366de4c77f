//! Who installed a capability operator: us (Owned), someone else (Adopted),
//! or nobody (Absent), with the evidence found. Decided before any install,
//! so Helm's "already owned by another release" never arises.

use crate::operator::model::catalog::CapabilityEntry;
use crate::operator::model::snapshot::{ReleaseInfo, Snapshot, Workload};

#[derive(Clone, Debug, PartialEq)]
pub enum Provenance {
    /// Our release of the expected name in the expected namespace.
    Owned(ReleaseInfo),
    Adopted(Evidence),
    Absent,
}

/// What made us call a capability adopted.
#[derive(Clone, Debug, PartialEq)]
pub enum Evidence {
    /// A Helm release without our marks: in the expected place, or the one
    /// that owns the capability's CRDs.
    Release { name: String, namespace: String },
    /// The controller runs (CRDs exist too), found by identity.
    Controller {
        kind: String,
        namespace: String,
        name: String,
        matched_by: Match,
        /// The Helm release that applied the workload, if any.
        release: Option<(String, String)>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Match {
    Labels,
    Image(String),
}

impl Provenance {
    pub fn as_str(&self) -> &'static str {
        match self {
            Provenance::Owned(_) => "owned",
            Provenance::Adopted(_) => "adopted",
            Provenance::Absent => "absent",
        }
    }

    /// The release (or workload) to report: `(name, namespace)`.
    pub fn location(&self, entry: &CapabilityEntry) -> Option<(String, String)> {
        match self {
            Provenance::Owned(_) => Some((entry.release.clone(), entry.namespace.clone())),
            Provenance::Adopted(Evidence::Release { name, namespace }) => {
                Some((name.clone(), namespace.clone()))
            }
            Provenance::Adopted(Evidence::Controller {
                release,
                namespace,
                name,
                ..
            }) => Some(release.clone().unwrap_or((name.clone(), namespace.clone()))),
            Provenance::Absent => None,
        }
    }

    /// The Helm release behind an adoption, whose chart version we can read.
    pub fn adopted_release(&self) -> Option<(String, String)> {
        match self {
            Provenance::Adopted(Evidence::Release { name, namespace }) => {
                Some((name.clone(), namespace.clone()))
            }
            Provenance::Adopted(Evidence::Controller { release, .. }) => release.clone(),
            _ => None,
        }
    }
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Evidence::Release { name, namespace } => {
                write!(f, "Helm release {name} in namespace {namespace}")
            }
            Evidence::Controller {
                kind,
                namespace,
                name,
                matched_by,
                release,
            } => {
                write!(f, "{kind} {namespace}/{name} runs its controller (")?;
                match matched_by {
                    Match::Labels => write!(f, "identity labels")?,
                    Match::Image(i) => write!(f, "image {i}")?,
                }
                write!(f, ")")?;
                if let Some((n, ns)) = release {
                    write!(f, ", applied by Helm release {n} in namespace {ns}")?;
                }
                Ok(())
            }
        }
    }
}

/// The seeds' rules, in order: the expected release; a live release that
/// owns the CRDs; CRDs plus a running controller found by identity; else
/// Absent (orphan CRDs alone do not count).
pub fn classify(entry: &CapabilityEntry, snap: &Snapshot) -> Provenance {
    if let Some(r) = snap.release(&entry.release, &entry.namespace) {
        if r.is_live() {
            return if r.ours {
                Provenance::Owned(r.clone())
            } else {
                Provenance::Adopted(Evidence::Release {
                    name: r.name.clone(),
                    namespace: r.namespace.clone(),
                })
            };
        }
    }
    for crd in &entry.crds {
        if let Some((name, namespace)) = snap.crds.get(crd).and_then(|c| c.release.clone()) {
            let live = snap.release(&name, &namespace).is_some_and(|r| {
                r.is_live() && !(name == entry.release && namespace == entry.namespace)
            });
            if live {
                return Provenance::Adopted(Evidence::Release { name, namespace });
            }
        }
    }
    let crds_exist = !entry.crds.is_empty() && entry.crds.iter().all(|c| snap.crds.contains_key(c));
    if crds_exist {
        if let Some((w, matched_by)) = snap
            .workloads
            .iter()
            .filter(|w| w.replicas > 0)
            .find_map(|w| identify(entry, w).map(|m| (w, m)))
        {
            return Provenance::Adopted(Evidence::Controller {
                kind: w.kind.clone(),
                namespace: w.namespace.clone(),
                name: w.name.clone(),
                matched_by,
                release: w.release.clone(),
            });
        }
    }
    Provenance::Absent
}

/// Whether a workload is this capability's controller: all identity labels
/// on its pod template, else one of its images from the identity repository
/// (behind any registry host or mirror prefix).
pub fn identify(entry: &CapabilityEntry, w: &Workload) -> Option<Match> {
    let labels = &entry.identity.labels;
    if !labels.is_empty() && labels.iter().all(|(k, v)| w.pod_labels.get(k) == Some(v)) {
        return Some(Match::Labels);
    }
    for image in &w.images {
        if entry
            .identity
            .images
            .iter()
            .any(|repo| same_repository(image, repo))
        {
            return Some(Match::Image(image.clone()));
        }
    }
    None
}

/// The repository path without registry host, tag or digest:
/// `quay.io/jetstack/cert-manager-controller:v1.21.1` -> `jetstack/cert-manager-controller`.
pub fn repository_path(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    // A tag follows the last colon after the last slash (a port does not).
    let no_tag = match (no_digest.rfind(':'), no_digest.rfind('/')) {
        (Some(c), Some(s)) if c > s => &no_digest[..c],
        (Some(c), None) => &no_digest[..c],
        _ => no_digest,
    };
    match no_tag.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            rest
        }
        _ => no_tag,
    }
}

/// Same repository whatever registry is in front: the image's path equals
/// the repository's, or ends with it after a mirror's path prefix.
pub fn same_repository(image: &str, repo: &str) -> bool {
    let image = repository_path(image);
    let repo = repository_path(repo);
    let image = image.strip_prefix("library/").unwrap_or(image);
    image == repo || image.ends_with(&format!("/{repo}"))
}

/// A CRD left by a release that no longer exists (and so may be taken over).
pub fn is_orphan(owner: Option<&(String, String)>, snap: &Snapshot) -> bool {
    match owner {
        None => false,
        Some((name, namespace)) => !snap
            .release(name, namespace)
            .is_some_and(ReleaseInfo::is_live),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::model::catalog::Catalog;
    use crate::operator::model::snapshot::CrdInfo;
    use std::collections::BTreeMap;

    fn cnpg() -> CapabilityEntry {
        Catalog::built_in()
            .capability("cloudnative-pg")
            .unwrap()
            .clone()
    }

    fn release(name: &str, ns: &str, ours: bool) -> ReleaseInfo {
        ReleaseInfo {
            name: name.into(),
            namespace: ns.into(),
            revision: 1,
            status: crate::release::Status::Deployed,
            ours,
            chart_version: None,
            inputs: None,
            configured: None,
        }
    }

    fn workload(ns: &str, labels: &[(&str, &str)], image: &str) -> Workload {
        Workload {
            kind: "Deployment".into(),
            namespace: ns.into(),
            name: "ctrl".into(),
            pod_labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            images: vec![image.into()],
            replicas: 1,
            ready: true,
            not_ready_reason: String::new(),
            release: None,
        }
    }

    fn crds(owner: Option<(&str, &str)>) -> BTreeMap<String, CrdInfo> {
        [(
            "clusters.postgresql.cnpg.io".to_string(),
            CrdInfo {
                established: true,
                release: owner.map(|(a, b)| (a.into(), b.into())),
            },
        )]
        .into()
    }

    #[test]
    fn our_release_is_owned_and_anyone_elses_in_its_place_adopted() {
        let mut s = Snapshot::default();
        s.releases
            .push(release("cloudnative-pg", "cnpg-system", true));
        assert!(matches!(classify(&cnpg(), &s), Provenance::Owned(_)));
        s.releases[0].ours = false;
        assert_eq!(
            classify(&cnpg(), &s),
            Provenance::Adopted(Evidence::Release {
                name: "cloudnative-pg".into(),
                namespace: "cnpg-system".into()
            })
        );
        s.releases[0].status = crate::release::Status::Uninstalled;
        assert_eq!(classify(&cnpg(), &s), Provenance::Absent);
    }

    #[test]
    fn a_controller_anywhere_with_the_crds_is_adopted_by_labels_or_image() {
        let mut s = Snapshot {
            crds: crds(None),
            ..Default::default()
        };
        s.workloads.push(workload(
            "postgres-operator",
            &[("app.kubernetes.io/name", "cloudnative-pg")],
            "ghcr.io/cloudnative-pg/cloudnative-pg:1.27.0",
        ));
        assert!(matches!(
            classify(&cnpg(), &s),
            Provenance::Adopted(Evidence::Controller {
                matched_by: Match::Labels,
                ..
            })
        ));
        s.workloads[0].pod_labels.clear();
        s.workloads[0].images =
            vec!["registry.local:5000/mirror/cloudnative-pg/cloudnative-pg@sha256:abcd".into()];
        assert!(matches!(
            classify(&cnpg(), &s),
            Provenance::Adopted(Evidence::Controller {
                matched_by: Match::Image(_),
                ..
            })
        ));
        // Scaled to zero: not running.
        s.workloads[0].replicas = 0;
        assert_eq!(classify(&cnpg(), &s), Provenance::Absent);
    }

    #[test]
    fn crds_alone_or_an_unrelated_workload_in_the_namespace_are_absent() {
        let mut s = Snapshot {
            crds: crds(Some(("gone", "old-ns"))),
            ..Default::default()
        };
        assert_eq!(classify(&cnpg(), &s), Provenance::Absent);
        s.workloads
            .push(workload("cnpg-system", &[("app", "nginx")], "nginx:1.27"));
        assert_eq!(classify(&cnpg(), &s), Provenance::Absent);
        // The controller without its CRDs is not adopted either.
        let s = Snapshot {
            workloads: vec![workload(
                "x",
                &[("app.kubernetes.io/name", "cloudnative-pg")],
                "a/b",
            )],
            ..Default::default()
        };
        assert_eq!(classify(&cnpg(), &s), Provenance::Absent);
    }

    #[test]
    fn crds_owned_by_a_live_release_of_someone_else_mean_that_release_is_present() {
        let mut s = Snapshot {
            crds: crds(Some(("my-cnpg", "postgres-operator"))),
            ..Default::default()
        };
        assert!(is_orphan(
            Some(&("my-cnpg".into(), "postgres-operator".into())),
            &s
        ));
        s.releases
            .push(release("my-cnpg", "postgres-operator", false));
        assert!(!is_orphan(
            Some(&("my-cnpg".into(), "postgres-operator".into())),
            &s
        ));
        assert_eq!(
            classify(&cnpg(), &s),
            Provenance::Adopted(Evidence::Release {
                name: "my-cnpg".into(),
                namespace: "postgres-operator".into()
            })
        );
    }

    #[test]
    fn repositories_match_behind_any_registry_or_mirror() {
        assert!(same_repository(
            "quay.io/jetstack/cert-manager-controller:v1.21.1",
            "quay.io/jetstack/cert-manager-controller"
        ));
        assert!(same_repository(
            "registry.local/jetstack/cert-manager-controller",
            "quay.io/jetstack/cert-manager-controller"
        ));
        assert!(same_repository(
            "docker.io/altinity/clickhouse-operator:0.25.6",
            "altinity/clickhouse-operator"
        ));
        assert!(same_repository(
            "altinity/clickhouse-operator@sha256:00",
            "altinity/clickhouse-operator"
        ));
        assert!(same_repository(
            "localhost:5000/m/altinity/clickhouse-operator",
            "altinity/clickhouse-operator"
        ));
        assert!(!same_repository(
            "quay.io/jetstack/cert-manager-webhook:v1",
            "quay.io/jetstack/cert-manager-controller"
        ));
        assert!(!same_repository(
            "quay.io/other/xjetstack/cert-manager-controller",
            "jetstack/cert-manager-controllerx"
        ));
    }
}
