//! Provenance + needs + readiness -> what to do with each capability, in
//! install order. Pure: the controller carries a step out, `navique-operator
//! plan` prints them all, and unit tests drive them without a cluster.

use crate::operator::api::capability::Consumer;
use crate::operator::decide::configure::{self, Configuration, Settings};
use crate::operator::decide::needs::{self, Needs};
use crate::operator::decide::provenance::{classify, Evidence, Provenance};
use crate::operator::model::catalog::{CapabilityEntry, Catalog};
use crate::operator::model::snapshot::Snapshot;
use crate::release::Status;

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Nothing to do: absent and not needed, or ours and current.
    Nothing,
    /// Someone else's: record it (status, Event), never touch it.
    Adopt(Evidence),
    /// Install our release (taking over orphan CRDs).
    Install,
    /// Upgrade our release to the pin (chart or values changed, or the last
    /// revision failed).
    Upgrade { reason: String },
    /// An interrupted run of ours left this revision pending: mark it failed,
    /// then retry.
    Recover { revision: i64 },
    /// Needed, but a prerequisite is not Ready yet.
    Wait { reason: String },
    /// Ours and no longer needed.
    Uninstall,
    /// Ours and no longer needed, but something still depends on it.
    HoldUninstall { reason: String },
    /// `spec.suspend`: our release is left exactly as it is.
    Suspended,
}

impl Step {
    /// A step that writes to the cluster: decided again on a fresh read
    /// before it is taken.
    pub fn acts(&self) -> bool {
        matches!(
            self,
            Step::Install | Step::Upgrade { .. } | Step::Recover { .. } | Step::Uninstall
        )
    }

    pub fn verb(&self) -> &'static str {
        match self {
            Step::Nothing => "none",
            Step::Adopt(_) => "adopt",
            Step::Install => "install",
            Step::Upgrade { .. } => "upgrade",
            Step::Recover { .. } => "recover",
            Step::Wait { .. } => "wait",
            Step::Uninstall => "uninstall",
            Step::HoldUninstall { .. } => "hold",
            Step::Suspended => "suspended",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Readiness {
    pub ready: bool,
    /// Why not, naming the CRD or workload.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CapabilityPlan {
    pub name: String,
    pub provenance: Provenance,
    pub needed: bool,
    pub consumers: Vec<Consumer>,
    pub readiness: Readiness,
    pub step: Step,
    /// What the admin's `Capability.spec` asks (values, suspend, drift).
    pub settings: Settings,
}

/// The digest of what our release is made from: the chart tarball and the
/// values we set (the catalog's, with the admin's accepted `spec.values`).
/// A release is upgraded when this changes, never by re-rendering and
/// diffing (charts with random or generated values would never compare equal).
pub fn inputs_digest(entry: &CapabilityEntry, settings: &Settings) -> String {
    let text = format!("{}\n{}", entry.pin.sha256, settings.values);
    with_pull_secrets(text, &settings.pull_secrets)
}

/// The digest of a release's inputs, `--image-pull-secret` among them: a
/// pull secret added later upgrades each release once, so its pods get it.
/// None adds nothing, so that releases made without any keep their digest.
pub fn with_pull_secrets(mut text: String, pull_secrets: &[String]) -> String {
    if !pull_secrets.is_empty() {
        text.push_str(&format!("\nimagePullSecrets {}", pull_secrets.join(",")));
    }
    format!("sha256:{}", crate::digest::sha256_hex(text.as_bytes()))
}

/// The admin's settings for `entry`, from its Capability's spec and the
/// values our release was last made with.
pub fn settings_of(entry: &CapabilityEntry, snap: &Snapshot) -> Settings {
    let last = snap
        .releases
        .iter()
        .find(|r| r.ours && r.name == entry.release && r.namespace == entry.namespace)
        .and_then(|r| r.configured.as_deref());
    let mut settings = configure::settings(entry, snap.capability_specs.get(&entry.name), last);
    settings.pull_secrets = snap.pull_secrets.clone();
    settings
}

/// Ready: every CRD Established, and every Deployment and StatefulSet of
/// the release (or, adopted by controller, the matching workloads) Ready.
pub fn readiness(entry: &CapabilityEntry, prov: &Provenance, snap: &Snapshot) -> Readiness {
    let not = |reason: String| Readiness {
        ready: false,
        reason,
    };
    if matches!(prov, Provenance::Absent) {
        return not("not installed".into());
    }
    // Our release finishes its hooks before it is deployed: until then its
    // workloads may be up, but the install is not done.
    if let Provenance::Owned(r) = prov {
        if r.status != Status::Deployed {
            return not(format!(
                "release {} revision {} is {}",
                r.name, r.revision, r.status
            ));
        }
    }
    for crd in &entry.crds {
        match snap.crds.get(crd) {
            None => return not(format!("CRD {crd} does not exist")),
            Some(c) if !c.established => return not(format!("CRD {crd} is not Established")),
            _ => {}
        }
    }
    let workloads: Vec<_> = match prov {
        Provenance::Adopted(Evidence::Controller { release: None, .. }) => snap
            .workloads
            .iter()
            .filter(|w| crate::operator::decide::provenance::identify(entry, w).is_some())
            .collect(),
        _ => {
            let Some(release) = prov.location(entry) else {
                return not("not installed".into());
            };
            snap.workloads
                .iter()
                .filter(|w| w.kind != "DaemonSet" && w.release.as_ref() == Some(&release))
                .collect()
        }
    };
    if workloads.is_empty() {
        return not("no Deployment or StatefulSet of it found yet".into());
    }
    if let Some(w) = workloads.iter().find(|w| !w.ready) {
        return not(format!(
            "{} {}/{} is not Ready: {}",
            w.kind, w.namespace, w.name, w.not_ready_reason
        ));
    }
    Readiness {
        ready: true,
        reason: String::new(),
    }
}

/// What was found of each capability, computed once per snapshot.
type Found = std::collections::BTreeMap<String, (Provenance, Readiness)>;

fn decide(
    entry: &CapabilityEntry,
    settings: &Settings,
    found: &Found,
    needed: bool,
    catalog: &Catalog,
    snap: &Snapshot,
    needs: &Needs,
) -> Step {
    let provenance = &found[&entry.name].0;
    // What is left of our release's objects may still run: that is our
    // release, not someone else's to adopt.
    let left_behind = match provenance {
        Provenance::Absent => true,
        Provenance::Adopted(e) => is_our_release(entry, e),
        _ => false,
    };
    let ours_or_absent = !matches!(provenance, Provenance::Adopted(e) if !is_our_release(entry, e));
    if settings.suspend && ours_or_absent {
        return Step::Suspended;
    }
    if uninstall_interrupted(entry, snap) && left_behind {
        return if needed {
            Step::Install
        } else {
            Step::Uninstall
        };
    }
    match provenance {
        Provenance::Adopted(e) => Step::Adopt(e.clone()),
        Provenance::Absent if !needed => Step::Nothing,
        Provenance::Absent => match unready_prerequisite(entry, found) {
            Some(reason) => Step::Wait { reason },
            None => Step::Install,
        },
        Provenance::Owned(r) if r.is_pending() => Step::Recover {
            revision: r.revision,
        },
        Provenance::Owned(r) if needed => keep_current(entry, settings, r),
        Provenance::Owned(_) => uninstall_unless_in_use(entry, found, catalog, snap, needs),
    }
}

/// Whether the evidence is our own release's (its objects, or a
/// controller it installed).
fn is_our_release(
    entry: &CapabilityEntry,
    e: &crate::operator::decide::provenance::Evidence,
) -> bool {
    match e {
        crate::operator::decide::provenance::Evidence::Release { name, namespace } => {
            name == &entry.release && namespace == &entry.namespace
        }
        crate::operator::decide::provenance::Evidence::Controller { release, .. } => {
            release.as_ref() == Some(&(entry.release.clone(), entry.namespace.clone()))
        }
    }
}

/// An uninstall of ours cut short (the process killed between marking the
/// release `uninstalling` and deleting its record): it is finished, or the
/// capability installed again when something needs it once more.
fn uninstall_interrupted(entry: &CapabilityEntry, snap: &Snapshot) -> bool {
    snap.releases.iter().any(|r| {
        r.ours
            && r.status == Status::Uninstalling
            && r.name == entry.release
            && r.namespace == entry.namespace
    })
}

/// Our needed release: upgraded when it failed or its inputs changed.
fn keep_current(
    entry: &CapabilityEntry,
    settings: &Settings,
    r: &crate::operator::model::snapshot::ReleaseInfo,
) -> Step {
    if r.status == Status::Failed {
        Step::Upgrade {
            reason: format!("revision {} failed", r.revision),
        }
    } else if r.inputs.as_deref() != Some(inputs_digest(entry, settings).as_str()) {
        Step::Upgrade {
            reason: upgrade_reason(entry, settings, r),
        }
    } else {
        Step::Nothing
    }
}

/// Our release nothing needs: uninstalled, unless objects we emitted that
/// it serves still exist, or a capability that needs it is still ours.
fn uninstall_unless_in_use(
    entry: &CapabilityEntry,
    found: &Found,
    catalog: &Catalog,
    snap: &Snapshot,
    needs: &Needs,
) -> Step {
    let emitted: usize = entry
        .crds
        .iter()
        .map(|c| snap.emitted.get(c).map_or(0, Vec::len))
        .sum();
    if emitted > 0 {
        return Step::HoldUninstall {
            reason: format!("{emitted} custom resources we emitted that it serves still exist"),
        };
    }
    let dependants: Vec<&str> = catalog
        .capability
        .iter()
        .filter(|c| c.prerequisites.contains(&entry.name))
        .filter(|c| {
            needs.is_needed(&c.name)
                || matches!(found.get(&c.name), Some((Provenance::Owned(_), _)))
        })
        .map(|c| c.name.as_str())
        .collect();
    if !dependants.is_empty() {
        return Step::HoldUninstall {
            reason: format!("{} still installed by us", dependants.join(", ")),
        };
    }
    Step::Uninstall
}

/// Why our release's inputs differ: the pin, or the admin's values.
fn upgrade_reason(
    entry: &CapabilityEntry,
    settings: &Settings,
    r: &crate::operator::model::snapshot::ReleaseInfo,
) -> String {
    let same_chart = r.chart_version.as_deref() == Some(entry.pin.version.as_str());
    if same_chart && r.configured != settings.configured {
        let what = match (&settings.configuration, &settings.configured) {
            (Configuration::Catalog, _) | (_, None) => "were removed",
            _ => "changed",
        };
        return format!("the Capability's spec.values {what}");
    }
    if same_chart {
        // Chart and values as recorded: what is left of the inputs.
        return "the operator's --image-pull-secret changed".to_string();
    }
    format!(
        "the pin is {} {}, the release has {}",
        entry.pin.chart,
        entry.pin.version,
        r.chart_version.as_deref().unwrap_or("other inputs")
    )
}

fn unready_prerequisite(entry: &CapabilityEntry, found: &Found) -> Option<String> {
    entry.prerequisites.iter().find_map(|p| {
        let (_, r) = found.get(p)?;
        (!r.ready).then(|| format!("prerequisite {p} is not Ready: {}", r.reason))
    })
}

/// Every capability of the catalog, prerequisites first.
pub fn capabilities(catalog: &Catalog, snap: &Snapshot) -> Vec<CapabilityPlan> {
    // A resource the license rejects needs nothing installed for it.
    let needs = needs::compute(
        catalog,
        &crate::operator::decide::verdict::licensed_resources(snap),
    );
    let order = catalog.install_order().unwrap_or_default();
    let entries: Vec<&CapabilityEntry> =
        order.iter().filter_map(|n| catalog.capability(n)).collect();
    let found: Found = entries
        .iter()
        .map(|e| {
            let provenance = classify(e, snap);
            let readiness = readiness(e, &provenance, snap);
            (e.name.clone(), (provenance, readiness))
        })
        .collect();
    entries
        .iter()
        .map(|entry| {
            let needed = needs.is_needed(&entry.name);
            let settings = settings_of(entry, snap);
            let step = decide(entry, &settings, &found, needed, catalog, snap, &needs);
            let (provenance, readiness) = found[&entry.name].clone();
            CapabilityPlan {
                name: entry.name.clone(),
                consumers: needs.consumers(&entry.name).to_vec(),
                provenance,
                needed,
                readiness,
                step,
                settings,
            }
        })
        .collect()
}

pub fn capability<'a>(plans: &'a [CapabilityPlan], name: &str) -> Option<&'a CapabilityPlan> {
    plans.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::model::snapshot::{CrdInfo, ReleaseInfo, Resource, Workload};
    use serde_json::json;

    fn pg(name: &str, mode: &str) -> Resource {
        Resource::for_test("PostgresCluster", name, name, json!({"mode": mode}))
    }

    fn ours(entry: &CapabilityEntry) -> ReleaseInfo {
        ReleaseInfo {
            name: entry.release.clone(),
            namespace: entry.namespace.clone(),
            revision: 1,
            status: Status::Deployed,
            ours: true,
            chart_version: Some(entry.pin.version.clone()),
            inputs: Some(inputs_digest(
                entry,
                &configure::settings(entry, None, None),
            )),
            configured: None,
        }
    }

    /// The cluster after our install of `entry`, Ready or not.
    fn installed(snap: &mut Snapshot, entry: &CapabilityEntry, ready: bool) {
        snap.releases.push(ours(entry));
        for c in &entry.crds {
            snap.crds.insert(
                c.clone(),
                CrdInfo {
                    established: true,
                    release: Some((entry.release.clone(), entry.namespace.clone())),
                },
            );
        }
        snap.workloads.push(Workload {
            kind: "Deployment".into(),
            namespace: entry.namespace.clone(),
            name: entry.name.clone(),
            pod_labels: entry.identity.labels.clone(),
            images: vec![],
            replicas: 1,
            ready,
            not_ready_reason: if ready {
                String::new()
            } else {
                "0/1 replicas ready".into()
            },
            release: Some((entry.release.clone(), entry.namespace.clone())),
        });
    }

    #[test]
    fn an_uninstall_cut_short_is_finished_when_nothing_needs_it() {
        let c = Catalog::built_in();
        let mut s = Snapshot::default();
        installed(&mut s, c.capability("cloudnative-pg").unwrap(), true);
        s.releases[0].status = Status::Uninstalling;
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cloudnative-pg").unwrap().step,
            Step::Uninstall
        );
        s.releases[0].ours = false;
        let p = capabilities(&c, &s);
        assert!(
            matches!(
                capability(&p, "cloudnative-pg").unwrap().step,
                Step::Adopt(_)
            ),
            "not ours: someone else's, never touched"
        );
    }

    #[test]
    fn absent_and_needed_installs_prerequisites_first_then_waits_for_them() {
        let c = Catalog::built_in();
        let mut s = Snapshot {
            resources: vec![pg("a", "managed")],
            ..Default::default()
        };
        let p = capabilities(&c, &s);
        assert_eq!(capability(&p, "cert-manager").unwrap().step, Step::Install);
        assert!(
            matches!(&capability(&p, "cloudnative-pg").unwrap().step, Step::Wait { reason } if reason.contains("cert-manager"))
        );
        assert_eq!(
            capability(&p, "litellm-operator").unwrap().step,
            Step::Nothing
        );
        installed(&mut s, c.capability("cert-manager").unwrap(), true);
        s.releases[0].status = Status::PendingInstall;
        let p = capabilities(&c, &s);
        assert!(
            matches!(&capability(&p, "cloudnative-pg").unwrap().step, Step::Wait { reason } if reason.contains("pending-install"))
        );
        s.releases[0].status = Status::Deployed;
        s.workloads[0].ready = false;
        s.workloads[0].not_ready_reason = "0/1 replicas ready".into();
        let p = capabilities(&c, &s);
        assert_eq!(capability(&p, "cert-manager").unwrap().step, Step::Nothing);
        assert!(
            matches!(&capability(&p, "cloudnative-pg").unwrap().step, Step::Wait { reason } if reason.contains("0/1 replicas ready"))
        );
        s.workloads[0].ready = true;
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cloudnative-pg").unwrap().step,
            Step::Install
        );
    }

    #[test]
    fn adopted_is_recorded_and_never_installed_or_uninstalled() {
        let c = Catalog::built_in();
        let cm = c.capability("cert-manager").unwrap();
        let mut s = Snapshot::default();
        installed(&mut s, cm, true);
        s.releases[0].ours = false;
        for needed in [vec![pg("a", "managed")], vec![]] {
            s.resources = needed;
            let p = capabilities(&c, &s);
            assert!(matches!(
                capability(&p, "cert-manager").unwrap().step,
                Step::Adopt(_)
            ));
        }
    }

    #[test]
    fn owned_upgrades_when_its_inputs_change_and_only_then() {
        let c = Catalog::built_in();
        let mut s = Snapshot {
            resources: vec![pg("a", "managed")],
            ..Default::default()
        };
        installed(&mut s, c.capability("cert-manager").unwrap(), true);
        assert_eq!(
            capability(&capabilities(&c, &s), "cert-manager")
                .unwrap()
                .step,
            Step::Nothing
        );
        s.releases[0].inputs = Some("sha256:older".into());
        s.releases[0].chart_version = Some("v1.19.2".into());
        assert!(
            matches!(&capability(&capabilities(&c, &s), "cert-manager").unwrap().step, Step::Upgrade { reason } if reason.contains("v1.19.2"))
        );
        s.releases[0].status = Status::PendingUpgrade;
        assert_eq!(
            capability(&capabilities(&c, &s), "cert-manager")
                .unwrap()
                .step,
            Step::Recover { revision: 1 }
        );
    }

    #[test]
    fn uninstall_waits_for_emitted_resources_and_dependants() {
        let c = Catalog::built_in();
        let mut s = Snapshot::default();
        installed(&mut s, c.capability("cert-manager").unwrap(), true);
        installed(&mut s, c.capability("cloudnative-pg").unwrap(), true);
        s.emitted
            .insert("clusters.postgresql.cnpg.io".into(), vec![json!({})]);
        let p = capabilities(&c, &s);
        assert!(
            matches!(&capability(&p, "cloudnative-pg").unwrap().step, Step::HoldUninstall { reason } if reason.contains("custom resources"))
        );
        assert!(
            matches!(&capability(&p, "cert-manager").unwrap().step, Step::HoldUninstall { reason } if reason.contains("cloudnative-pg"))
        );
        s.emitted.clear();
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cloudnative-pg").unwrap().step,
            Step::Uninstall
        );
        s.releases.retain(|r| r.name != "cloudnative-pg");
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Uninstall
        );
    }

    #[test]
    fn inputs_digest_follows_chart_and_values() {
        let c = Catalog::built_in();
        let mut e = c.capability("cert-manager").unwrap().clone();
        let digest = |e: &CapabilityEntry, spec: Option<&serde_json::Value>| {
            inputs_digest(e, &configure::settings(e, spec, None))
        };
        let d = digest(&e, None);
        assert_eq!(d, digest(&e.clone(), None));
        let spec = json!({"values": {"replicaCount": 2}});
        assert_ne!(d, digest(&e, Some(&spec)));
        e.values
            .insert("replicaCount".into(), toml::Value::Integer(2));
        assert_ne!(d, digest(&e, None));
    }

    #[test]
    fn spec_values_upgrade_our_release_once_and_never_an_adopted_one() {
        let c = Catalog::built_in();
        let cm = c.capability("cert-manager").unwrap();
        let mut s = Snapshot::default();
        installed(&mut s, cm, true);
        s.resources.push(pg("db", "managed"));
        let spec = json!({"values": {"replicaCount": 2}});
        s.capability_specs
            .insert("cert-manager".into(), spec.clone());
        let p = capabilities(&c, &s);
        let p = capability(&p, "cert-manager").unwrap();
        assert!(
            matches!(&p.step, Step::Upgrade { reason } if reason.contains("spec.values changed")),
            "{:?}",
            p.step
        );
        // After the upgrade our release carries the digest and the values.
        let r = s
            .releases
            .iter_mut()
            .find(|r| r.name == "cert-manager")
            .unwrap();
        r.inputs = Some(inputs_digest(cm, &p.settings));
        r.configured = p.settings.configured.clone();
        let p = capabilities(&c, &s);
        assert_eq!(capability(&p, "cert-manager").unwrap().step, Step::Nothing);
        // A refused spec keeps the last accepted values: nothing to do.
        s.capability_specs.insert(
            "cert-manager".into(),
            json!({"values": {"replicaCount": 5, "crds": {"enabled": false}}}),
        );
        let p = capabilities(&c, &s);
        let p = capability(&p, "cert-manager").unwrap();
        assert_eq!(p.step, Step::Nothing);
        assert!(
            matches!(&p.settings.configuration, Configuration::Refused(w) if w.contains("crds.enabled"))
        );
        // Someone else's cert-manager: the spec has no effect on it.
        let mut s = Snapshot::default();
        s.releases.push(ReleaseInfo {
            ours: false,
            ..ours(cm)
        });
        s.capability_specs.insert("cert-manager".into(), spec);
        let p = capabilities(&c, &s);
        assert!(matches!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Adopt(_)
        ));
    }

    #[test]
    fn a_pull_secret_given_later_upgrades_our_release_once_and_none_keeps_the_digest() {
        let c = Catalog::built_in();
        let cm = c.capability("cert-manager").unwrap();
        let mut s = Snapshot::default();
        installed(&mut s, cm, true);
        s.resources.push(pg("db", "managed"));
        let p = capabilities(&c, &s);
        assert_eq!(capability(&p, "cert-manager").unwrap().step, Step::Nothing);
        s.pull_secrets = vec!["mirror-credentials".into()];
        let p = capabilities(&c, &s);
        let p = capability(&p, "cert-manager").unwrap();
        assert!(
            matches!(&p.step, Step::Upgrade { reason } if reason.contains("--image-pull-secret")),
            "{:?}",
            p.step
        );
        let r = s
            .releases
            .iter_mut()
            .find(|r| r.name == "cert-manager")
            .unwrap();
        r.inputs = Some(inputs_digest(cm, &p.settings));
        let p = capabilities(&c, &s);
        assert_eq!(capability(&p, "cert-manager").unwrap().step, Step::Nothing);
    }

    #[test]
    fn suspend_stops_install_upgrade_and_uninstall_of_ours_only() {
        let c = Catalog::built_in();
        let cm = c.capability("cert-manager").unwrap();
        let suspended = json!({"suspend": true});
        // Needed and absent: not installed while suspended.
        let mut s = Snapshot::default();
        s.resources.push(pg("db", "managed"));
        s.capability_specs
            .insert("cert-manager".into(), suspended.clone());
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Suspended
        );
        // Ours and no longer needed: not uninstalled; a new pin: not upgraded.
        let mut s = Snapshot::default();
        installed(&mut s, cm, true);
        s.releases[0].inputs = Some("sha256:an-older-pin".into());
        s.capability_specs
            .insert("cert-manager".into(), suspended.clone());
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Suspended
        );
        s.resources.push(pg("db", "managed"));
        let p = capabilities(&c, &s);
        assert_eq!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Suspended
        );
        // Resumed: the upgrade happens.
        s.capability_specs
            .insert("cert-manager".into(), json!({"suspend": false}));
        let p = capabilities(&c, &s);
        assert!(matches!(
            capability(&p, "cert-manager").unwrap().step,
            Step::Upgrade { .. }
        ));
    }
}

/// What a workload resource's release needs, from the newest revision of
/// the release of its name and the digest of the inputs wanted now.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadStep {
    /// A live release of that name is someone else's: never touched.
    NotOurs(String),
    /// Ours, deployed, made from these very inputs.
    UpToDate,
    Install,
    Upgrade,
}

pub fn workload_step(
    current: Option<&crate::operator::model::snapshot::ReleaseInfo>,
    digest: &str,
) -> WorkloadStep {
    match current.filter(|c| c.is_live()) {
        None => WorkloadStep::Install,
        Some(c) if !c.ours => WorkloadStep::NotOurs(format!(
            "release {} in namespace {} exists and is not ours: it is never touched",
            c.name, c.namespace
        )),
        Some(c) if c.inputs.as_deref() == Some(digest) && c.status == Status::Deployed => {
            WorkloadStep::UpToDate
        }
        Some(_) => WorkloadStep::Upgrade,
    }
}

#[cfg(test)]
mod workload_step_tests {
    use super::*;
    use crate::operator::model::snapshot::ReleaseInfo;

    fn release(ours: bool, status: &str, inputs: &str) -> ReleaseInfo {
        ReleaseInfo {
            name: "chat-ui-web".into(),
            namespace: "team-a".into(),
            revision: 1,
            status: Status::parse(status),
            ours,
            chart_version: None,
            inputs: Some(inputs.into()),
            configured: None,
        }
    }

    #[test]
    fn a_workload_release_is_installed_upgraded_or_left_alone() {
        assert_eq!(workload_step(None, "d1"), WorkloadStep::Install);
        assert_eq!(
            workload_step(Some(&release(true, "uninstalled", "d1")), "d1"),
            WorkloadStep::Install
        );
        assert_eq!(
            workload_step(Some(&release(true, "deployed", "d1")), "d1"),
            WorkloadStep::UpToDate
        );
        assert_eq!(
            workload_step(Some(&release(true, "deployed", "d0")), "d1"),
            WorkloadStep::Upgrade
        );
        assert_eq!(
            workload_step(Some(&release(true, "failed", "d1")), "d1"),
            WorkloadStep::Upgrade
        );
        assert!(matches!(
            workload_step(Some(&release(false, "deployed", "d1")), "d1"),
            WorkloadStep::NotOurs(_)
        ));
    }
}
