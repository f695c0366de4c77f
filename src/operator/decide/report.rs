//! `navique-operator plan`: the operator's observe-and-decide path,
//! read-only. For each capability its provenance and evidence, who needs
//! it, and every action `run` would take now, in the order it would.

use crate::operator::decide::conditions::is_subset;
use crate::operator::decide::plan::{self, CapabilityPlan, Step};
use crate::operator::decide::provenance::Provenance;
use crate::operator::decide::realise;
use crate::operator::model::catalog::{Catalog, ChartStore};
use crate::operator::model::snapshot::Snapshot;
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct PlannedAction {
    /// install | upgrade | recover | adopt | emit | delete | uninstall | wait
    pub action: String,
    pub target: String,
    pub reason: String,
}

pub struct PlanReport {
    pub capabilities: Vec<CapabilityPlan>,
    pub bundled: Vec<(String, String)>,
    pub actions: Vec<PlannedAction>,
    pub chart_problems: Vec<String>,
}

fn act(action: &str, target: String, reason: String) -> PlannedAction {
    PlannedAction {
        action: action.into(),
        target,
        reason,
    }
}

/// The whole plan from a snapshot, in the order `run` would act: the
/// capabilities' installs and upgrades, each resource's objects, then the
/// uninstalls in reverse. Pure.
pub fn build(catalog: &Catalog, snap: &Snapshot) -> PlanReport {
    let caps = plan::capabilities(catalog, snap);
    let verdicts = snap
        .tier
        .as_ref()
        .map(|t| crate::operator::decide::verdict::judge(t, &snap.resources))
        .unwrap_or_default();
    let mut actions: Vec<PlannedAction> = caps
        .iter()
        .flat_map(|p| capability_actions(catalog, p))
        .collect();
    for r in snap
        .resources
        .iter()
        .filter(|r| r.kind.family() == crate::operator::api::Family::Emitting)
    {
        actions.extend(resource_actions(snap, &caps, verdicts.get(&r.uid), r));
    }
    actions.extend(caps.iter().rev().filter_map(uninstall_action));
    PlanReport {
        bundled: caps
            .iter()
            .map(|p| {
                let version = catalog.capability(&p.name).map(|e| e.pin.version.clone());
                (p.name.clone(), version.unwrap_or_default())
            })
            .collect(),
        capabilities: caps,
        actions,
        chart_problems: Vec::new(),
    }
}

/// What a capability's step does before any resource is looked at, and a
/// refused `spec.values`.
fn capability_actions(catalog: &Catalog, p: &CapabilityPlan) -> Vec<PlannedAction> {
    let entry = catalog
        .capability(&p.name)
        .expect("planned from the catalog");
    let target = format!(
        "{} ({} {} as release {} in {})",
        p.name, entry.pin.chart, entry.pin.version, entry.release, entry.namespace
    );
    let mut actions = Vec::new();
    match &p.step {
        Step::Install => actions.push(act("install", target, format!("needed by {}", consumers(p)))),
        Step::Upgrade { reason } => actions.push(act("upgrade", target, reason.clone())),
        Step::Recover { revision } => actions.push(act(
            "recover",
            target,
            format!("revision {revision} was left pending by an interrupted run: mark it failed, then upgrade"),
        )),
        Step::Adopt(e) => actions.push(act("adopt", p.name.clone(), e.to_string())),
        Step::Wait { reason } => actions.push(act("wait", p.name.clone(), reason.clone())),
        Step::Suspended => actions.push(act(
            "suspended",
            p.name.clone(),
            "spec.suspend is true: our release is left as it is".into(),
        )),
        _ => {}
    }
    if let crate::operator::decide::configure::Configuration::Refused(why) =
        &p.settings.configuration
    {
        actions.push(act("refuse", p.name.clone(), why.clone()));
    }
    actions
}

/// The uninstalls, which come last (a capability goes after what needed it).
fn uninstall_action(p: &CapabilityPlan) -> Option<PlannedAction> {
    match &p.step {
        Step::Uninstall => Some(act(
            "uninstall",
            p.name.clone(),
            "ours and no longer needed".into(),
        )),
        Step::HoldUninstall { reason } => Some(act(
            "wait",
            p.name.clone(),
            format!("before uninstalling: {reason}"),
        )),
        _ => None,
    }
}

/// What one emitting resource would have done: its objects emitted or
/// deleted, or why it waits or is rejected.
fn resource_actions(
    snap: &Snapshot,
    caps: &[CapabilityPlan],
    verdict: Option<&crate::operator::decide::verdict::Verdict>,
    r: &crate::operator::model::snapshot::Resource,
) -> Vec<PlannedAction> {
    let who = format!("{} {}/{}", r.kind, r.namespace, r.name);
    if r.deleting {
        return emitted_by(snap, &r.uid)
            .map(|o| act("delete", describe(o), format!("{who} is being deleted")))
            .collect();
    }
    if let (Some(v), Some(tier)) = (verdict, snap.tier.as_ref()) {
        if !v.is_licensed() {
            return vec![act("reject", who, v.message(tier))];
        }
    }
    let realised = match realise::realise(r, &plan_inputs(snap, r)) {
        Ok(x) => x,
        Err(e) => return vec![act("reject", who, e.to_string())],
    };
    if !realised.waiting_for.is_empty() {
        return vec![act("wait", who, realised.waiting_for.join("; "))];
    }
    let unready: Vec<&str> = realised
        .needs
        .iter()
        .filter(|n| !plan::capability(caps, n).is_some_and(|p| p.readiness.ready))
        .map(String::as_str)
        .collect();
    let mut actions: Vec<PlannedAction> = realised
        .emit
        .iter()
        .filter_map(|o| emit_action(snap, o, &unready, &who))
        .collect();
    actions.extend(
        emitted_by(snap, &r.uid)
            .filter(|o| !realised.emit.iter().any(|w| same_object(w, o)))
            .map(|o| {
                act(
                    "delete",
                    describe(o),
                    format!("{who} no longer asks for it"),
                )
            }),
    );
    actions
}

/// What realise is given in a plan, which is read-only: a password to be
/// kept or generated is not read, and Secret values are not in the snapshot
/// (nor should a plan print them), so a key to copy is taken as there;
/// what it would emit is compared by everything else.
fn plan_inputs(snap: &Snapshot, r: &crate::operator::model::snapshot::Resource) -> realise::Inputs {
    let references = realise::references(r)
        .into_iter()
        .filter_map(|(kind, name)| {
            snap.resources
                .iter()
                .find(|o| {
                    o.kind == kind
                        && o.name == name
                        && (o.namespace == r.namespace || o.namespace.is_empty())
                })
                .map(|o| ((kind, name), json!({"status": o.status})))
        })
        .collect();
    let copied = realise::workload::copied_keys(r)
        .into_iter()
        .map(|k| (k, String::new()))
        .collect();
    realise::Inputs {
        password: Some(String::new()),
        references,
        copied,
        ..Default::default()
    }
}

/// Whether one wanted object would be emitted now, or waits.
fn emit_action(snap: &Snapshot, o: &Value, unready: &[&str], who: &str) -> Option<PlannedAction> {
    if !unready.is_empty() {
        let why = format!("for {} to be Ready", unready.join(", "));
        return Some(act("wait", describe(o), why));
    }
    let changed = if o["kind"] == "Secret" {
        // A connection Secret's contents are not in the snapshot (nor
        // should a plan print them): emitted when it does not exist.
        let name = |field: &str| {
            o["metadata"][field]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        !snap
            .emitted_secrets
            .contains(&(name("namespace"), name("name")))
    } else {
        let current = snap.emitted.values().flatten().find(|e| same_object(e, o));
        !current.is_some_and(|c| is_subset(o, c))
    };
    changed.then(|| act("emit", describe(o), format!("for {who}")))
}

/// The objects a resource emitted, as the snapshot saw them.
fn emitted_by<'a>(snap: &'a Snapshot, uid: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    snap.emitted
        .values()
        .flatten()
        .filter(move |o| crate::operator::decide::gc::is_ours(o, uid))
}

fn same_object(a: &Value, b: &Value) -> bool {
    a["kind"] == b["kind"]
        && a["metadata"]["name"] == b["metadata"]["name"]
        && a["metadata"]["namespace"] == b["metadata"]["namespace"]
}

fn describe(o: &Value) -> String {
    format!(
        "{} {} {}/{}",
        o["apiVersion"].as_str().unwrap_or_default(),
        o["kind"].as_str().unwrap_or_default(),
        o["metadata"]["namespace"].as_str().unwrap_or_default(),
        o["metadata"]["name"].as_str().unwrap_or_default()
    )
}

fn consumers(p: &CapabilityPlan) -> String {
    p.consumers
        .iter()
        .map(|c| {
            if c.namespace.is_empty() {
                format!("{} {}", c.kind, c.name)
            } else {
                format!("{} {}/{}", c.kind, c.namespace, c.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn evidence(p: &CapabilityPlan) -> String {
    match &p.provenance {
        Provenance::Owned(r) => format!(
            "our release {} revision {} in {} ({})",
            r.name, r.revision, r.namespace, r.status
        ),
        Provenance::Adopted(e) => e.to_string(),
        Provenance::Absent => "nothing found".into(),
    }
}

impl PlanReport {
    pub fn to_json(&self) -> Value {
        json!({
            "capabilities": self.capabilities.iter().zip(&self.bundled).map(|(p, (_, bundled))| json!({
                "name": p.name,
                "provenance": p.provenance.as_str(),
                "evidence": evidence(p),
                "needed": p.needed,
                "consumers": p.consumers,
                "bundledVersion": bundled,
                "ready": p.readiness.ready,
                "readiness": p.readiness.reason,
                "step": p.step.verb(),
            })).collect::<Vec<_>>(),
            "actions": self.actions.iter().map(|a| json!({"action": a.action, "target": a.target, "reason": a.reason})).collect::<Vec<_>>(),
            "chartProblems": self.chart_problems,
        })
    }

    pub fn to_text(&self) -> String {
        let mut out = String::from("CAPABILITY                    PROVENANCE  NEEDED  READY  BUNDLED   EVIDENCE / CONSUMERS\n");
        for (p, (_, bundled)) in self.capabilities.iter().zip(&self.bundled) {
            out.push_str(&format!(
                "{:<29} {:<11} {:<7} {:<6} {:<9} {}\n",
                p.name,
                p.provenance.as_str(),
                if p.needed { "yes" } else { "no" },
                if p.readiness.ready { "yes" } else { "no" },
                bundled,
                evidence(p)
            ));
            if p.needed {
                out.push_str(&format!("{:<66}needed by {}\n", "", consumers(p)));
            }
        }
        out.push_str("\nACTIONS, in order:\n");
        if self.actions.is_empty() {
            out.push_str("  none: the cluster is where the operator wants it\n");
        }
        for (i, a) in self.actions.iter().enumerate() {
            out.push_str(&format!(
                "  {}. {} {}: {}\n",
                i + 1,
                a.action,
                a.target,
                a.reason
            ));
        }
        for p in &self.chart_problems {
            out.push_str(&format!("\nchart problem: {p}\n"));
        }
        out
    }
}

/// The report of `snap`, with what is wrong with the pinned chart archives
/// (`--charts-dir`), if given.
pub fn with_chart_problems(
    catalog: &Catalog,
    snap: &Snapshot,
    charts: Option<&ChartStore>,
) -> PlanReport {
    let mut report = build(catalog, snap);
    if let Some(c) = charts {
        report.chart_problems = c
            .verify_all(catalog)
            .into_iter()
            .map(|e| e.to_string())
            .collect();
    }
    report
}
