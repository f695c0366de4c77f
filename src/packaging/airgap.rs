//! What an air-gapped cluster needs mirrored: every container image the
//! bundled charts can deploy (rendered with the values the operator sets),
//! and the images the operator writes into upstream CRs; and the rewrite
//! `--registry-mirror` applies, built from the catalog's image pins.

use super::PackagingError;
use crate::oci::images::{images_in, ImageRef};
use crate::operator::model::catalog::{Catalog, ChartStore, Pin};
use std::collections::{BTreeMap, BTreeSet};

/// Images by `name:tag` (or as written, when pinned by digest in the
/// chart), each with the charts (or `operator: Kind`) that use it.
pub type Images = BTreeMap<String, BTreeSet<String>>;

/// Every object of every pinned chart as the operator installs it:
/// capability charts with the catalog's values, workload charts with their
/// defaults (the widest set: a workload's spec.values can only narrow it
/// to what the chart's own values allow), hooks included; by chart name.
pub fn rendered_objects(
    catalog: &Catalog,
    store: &ChartStore,
) -> Result<Vec<(String, Vec<serde_json::Value>)>, PackagingError> {
    let mut out = Vec::new();
    // The capability charts' CRDs are served by the time a workload chart
    // installs (charts such as Langfuse check for them).
    let mut capabilities = crate::chart::render::Capabilities::default();
    let render = |name: &str,
                  pin: &Pin,
                  values: crate::value::Map,
                  namespace: &str,
                  capabilities: &mut crate::chart::render::Capabilities|
     -> Result<Vec<serde_json::Value>, PackagingError> {
        let loaded = store.load(pin).map_err(PackagingError::Chart)?;
        let rendered = crate::action::render::render(crate::action::render::Request {
            chart: &loaded.chart,
            values: &values,
            name,
            namespace,
            revision: 1,
            is_upgrade: false,
            capabilities: capabilities.clone(),
        })
        .map_err(|source| PackagingError::Render {
            release: name.to_string(),
            source,
        })?;
        let templated = rendered
            .objects
            .iter()
            .filter(|o| o.kind == "CustomResourceDefinition");
        for crd in rendered.crds.iter().chain(templated) {
            let group = crd
                .body
                .pointer("/spec/group")
                .and_then(|g| g.as_str())
                .unwrap_or_default();
            let kind = crd
                .body
                .pointer("/spec/names/kind")
                .and_then(|k| k.as_str())
                .unwrap_or_default();
            for v in crd
                .body
                .pointer("/spec/versions")
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                let version = v.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                capabilities.api_versions.push(format!("{group}/{version}"));
                capabilities
                    .api_versions
                    .push(format!("{group}/{version}/{kind}"));
            }
        }
        let mut objects: Vec<serde_json::Value> =
            rendered.crds.into_iter().map(|o| o.body).collect();
        objects.extend(rendered.objects.into_iter().map(|o| o.body));
        for hook in &rendered.hooks {
            let parsed = crate::apply::objects::parse_manifest(&hook.manifest, namespace).map_err(
                |source| PackagingError::Hook {
                    release: name.to_string(),
                    path: hook.path.clone(),
                    source,
                },
            )?;
            objects.extend(parsed.into_iter().map(|o| o.body));
        }
        Ok(objects)
    };
    for c in &catalog.capability {
        let objects = render(
            &c.release,
            &c.pin,
            c.chart_values(),
            &c.namespace,
            &mut capabilities,
        )?;
        out.push((c.pin.chart.clone(), objects));
    }
    for w in &catalog.workload {
        let objects = render(
            &w.release_prefix,
            &w.pin,
            Default::default(),
            "default",
            &mut capabilities,
        )?;
        out.push((w.pin.chart.clone(), objects));
    }
    Ok(out)
}

/// Every image the bundled charts deploy, and those the operator sets.
pub fn rendered_images(catalog: &Catalog, store: &ChartStore) -> Result<Images, PackagingError> {
    let mut found = Images::new();
    for (chart, objects) in rendered_objects(catalog, store)? {
        for obj in &objects {
            let mut images = BTreeSet::new();
            images_in(obj, &mut images);
            for image in images {
                let key = match ImageRef::parse(&image) {
                    r if r.digest.is_some() => image.clone(),
                    r => r.tagged(),
                };
                found
                    .entry(key)
                    .or_default()
                    .insert(format!("chart {chart}"));
            }
        }
    }
    for image in &catalog.image {
        if let Some(by) = &image.set_by {
            found
                .entry(image.tagged())
                .or_default()
                .insert(format!("operator: {by}"));
        }
    }
    Ok(found)
}

/// Rendered images that have no pin, and pins no chart uses.
pub fn pin_drift(catalog: &Catalog, rendered: &Images) -> (Vec<String>, Vec<String>) {
    let pinned: BTreeSet<String> = catalog.image.iter().map(|i| i.tagged()).collect();
    let unpinned = rendered
        .keys()
        .filter(|k| !pinned.contains(*k))
        .cloned()
        .collect();
    let unused = pinned
        .iter()
        .filter(|k| !rendered.contains_key(*k))
        .cloned()
        .collect();
    (unpinned, unused)
}
