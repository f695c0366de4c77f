//! Rendering for a release: cluster capabilities, manifests in install
//! order, hooks, notes, CRDs, and the chart record.

use super::ActionError;
use crate::apply::objects::{parse_manifest, Object};
use crate::chart::manifest::{manifest_string, sort_manifests, Hook};
use crate::chart::render::{
    render_chart, Capabilities, KubeVersion, ReleaseOptions, RenderOptions,
};
use crate::chart::Chart;
use crate::value::Map;

pub struct Rendered {
    pub manifest: String,
    pub objects: Vec<Object>,
    pub hooks: Vec<Hook>,
    pub notes: String,
    pub crds: Vec<Object>,
    pub chart_record: serde_json::Value,
}

/// `.Capabilities` from the server: its version and every group/version
/// and group/version/kind it serves.
pub async fn capabilities(client: &kube::Client) -> Result<Capabilities, ActionError> {
    let mut caps = Capabilities::default();
    let info = client.apiserver_version().await.map_err(|e| {
        ActionError::Invalid(format!("could not get server version from Kubernetes: {e}"))
    })?;
    caps.kube_version = KubeVersion::parse(&info.git_version).unwrap_or_default();
    let discovery = kube::discovery::Discovery::new(client.clone())
        .run()
        .await
        .map_err(|e| {
            ActionError::Invalid(format!("could not get apiVersions from Kubernetes: {e}"))
        })?;
    let mut versions = Vec::new();
    for group in discovery.groups() {
        for v in group.versions() {
            let gv = if group.name().is_empty() {
                v.to_string()
            } else {
                format!("{}/{v}", group.name())
            };
            versions.push(gv.clone());
            for (ar, _) in group.versioned_resources(v) {
                versions.push(format!("{gv}/{}", ar.kind));
            }
        }
    }
    versions.sort();
    versions.dedup();
    caps.api_versions = versions;
    Ok(caps)
}

fn crd_sources(c: &Chart, parent: Option<&str>, out: &mut Vec<(String, String)>) {
    let full = match parent {
        None => c.name().to_string(),
        Some(p) => format!("{p}/charts/{}", c.name()),
    };
    for f in c.crd_files() {
        out.push((
            format!("{full}/{}", f.name),
            String::from_utf8_lossy(&f.data).into_owned(),
        ));
    }
    for d in &c.dependencies {
        crd_sources(d, Some(&full), out);
    }
}

pub struct Request<'a> {
    pub chart: &'a Chart,
    pub values: &'a Map,
    pub name: &'a str,
    pub namespace: &'a str,
    pub revision: i64,
    pub is_upgrade: bool,
    pub capabilities: Capabilities,
}

pub fn render(req: Request) -> Result<Rendered, ActionError> {
    let _heavy = crate::memory::heavy();
    if req.chart.is_library() {
        return Err(ActionError::Invalid(
            "library charts are not installable".into(),
        ));
    }
    let opts = RenderOptions {
        release: ReleaseOptions {
            name: req.name.to_string(),
            namespace: req.namespace.to_string(),
            revision: req.revision,
            is_install: !req.is_upgrade,
            is_upgrade: req.is_upgrade,
        },
        capabilities: req.capabilities,
        lookup: None,
        strict: false,
        skip_schema_validation: false,
    };
    let mut rendered = render_chart(req.chart, req.values, &opts)?;
    let sorted = sort_manifests(std::mem::take(&mut rendered.files), rendered.chart.name())?;
    let manifest = manifest_string(&sorted.manifests);
    let objects = parse_manifest(&manifest, req.namespace)?;
    let mut crd_src = Vec::new();
    crd_sources(&rendered.chart, None, &mut crd_src);
    let mut crds = Vec::new();
    for (_, text) in crd_src {
        crds.extend(parse_manifest(&text, "")?);
    }
    Ok(Rendered {
        manifest,
        objects,
        hooks: sorted.hooks,
        notes: sorted.notes,
        crds,
        chart_record: crate::release::record::chart_record(&rendered.chart),
    })
}

/// A revision about to be applied, recorded before anything is.
pub struct Pending<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub revision: i64,
    pub values: &'a Map,
    pub status: crate::release::Status,
    pub description: &'a str,
    /// None on a first install: first and last deployment are the same instant.
    pub first_deployed: Option<String>,
    pub labels: std::collections::BTreeMap<String, String>,
}

impl Rendered {
    /// The release record, taking the chart record and the manifest (the
    /// largest parts: an install held them twice until it ended).
    pub fn pending_release(&mut self, p: Pending) -> crate::release::Release {
        let now = super::now_text();
        crate::release::Release {
            name: p.name.to_string(),
            info: crate::release::Info {
                first_deployed: p.first_deployed.unwrap_or_else(|| now.clone()),
                last_deployed: now,
                deleted: String::new(),
                description: p.description.to_string(),
                status: p.status,
                notes: self.notes.clone(),
            },
            chart: std::mem::take(&mut self.chart_record),
            config: crate::release::record::values_to_json(p.values),
            manifest: std::mem::take(&mut self.manifest),
            hooks: super::hooks::records(&self.hooks),
            version: p.revision,
            namespace: p.namespace.to_string(),
            labels: p.labels,
            apply_method: "ssa".into(),
        }
    }
}
