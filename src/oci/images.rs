//! Container images in rendered objects: found (for `charts images`, the
//! OLM bundle's relatedImages) and, with `--registry-mirror`, rewritten to
//! the mirror and pinned by digest. The rewrite is a post-render step over
//! every pod template of every object the operator applies (whatever the
//! chart's values call the image), plus the image fields the operator
//! writes into upstream CRs.

use super::reference::{whole_image_name, Mirrors};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Keys whose arrays hold containers, wherever a pod spec sits.
const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

/// Image fields of upstream CRs the operator emits: (apiVersion group, kind, JSON pointer).
pub const CR_IMAGE_FIELDS: &[(&str, &str, &str)] = &[
    ("litellm.home-operations.com", "LiteLLMProxy", "/spec/image"),
    ("postgresql.cnpg.io", "Cluster", "/spec/imageName"),
];

/// An image reference split: `name` whole (registry host included), and
/// its tag and digest as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    pub name: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        let (rest, digest) = match image.split_once('@') {
            Some((r, d)) => (r, Some(d.to_string())),
            None => (image, None),
        };
        // A colon after the last slash is a tag; before it, a port.
        let slash = rest.rfind('/').map(|i| i + 1).unwrap_or(0);
        let (name, tag) = match rest[slash..].rfind(':') {
            Some(i) => (&rest[..slash + i], Some(rest[slash + i + 1..].to_string())),
            None => (rest, None),
        };
        ImageRef {
            name: whole_image_name(name),
            tag,
            digest,
        }
    }

    /// `name:tag` (tag `latest` when none), the key pins are found by.
    pub fn tagged(&self) -> String {
        format!("{}:{}", self.name, self.tag.as_deref().unwrap_or("latest"))
    }
}

/// Every image in pod specs anywhere in `obj` (containers, init and
/// ephemeral containers, at any depth: Deployments, StatefulSets,
/// DaemonSets, Jobs, CronJobs, Pods, and upstream CRs that embed pod
/// templates), and in the CR image fields.
pub fn images_in(obj: &Value, out: &mut BTreeSet<String>) {
    visit(&mut obj.clone(), &mut |image: &mut String| {
        out.insert(image.clone());
    });
    for (group, kind, pointer) in CR_IMAGE_FIELDS {
        if is_kind(obj, group, kind) {
            if let Some(image) = obj
                .pointer(pointer)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                out.insert(image.to_string());
            }
        }
    }
}

fn is_kind(obj: &Value, group: &str, kind: &str) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some(kind)
        && obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.split('/').next() == Some(group))
}

fn visit(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if CONTAINER_LISTS.contains(&k.as_str()) {
                    if let Value::Array(items) = child {
                        for c in items.iter_mut() {
                            if let Some(Value::String(image)) = c.get_mut("image") {
                                f(image);
                            }
                        }
                    }
                }
                visit(child, f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| visit(c, f)),
        _ => {}
    }
}

/// The rewrite `--registry-mirror` asks for: each image through the
/// mirrors, by the digest its pin gives (the image's own digest if it has
/// one; its tag when it is not pinned, which `charts images` reports).
#[derive(Clone, Debug, Default)]
pub struct ImageMap {
    pub mirrors: Mirrors,
    /// Pinned digests by `name:tag`.
    pub digests: BTreeMap<String, String>,
}

impl ImageMap {
    pub fn is_active(&self) -> bool {
        !self.mirrors.is_empty()
    }

    pub fn reference(&self, image: &str) -> String {
        let r = ImageRef::parse(image);
        let digest = r.digest.clone().or_else(|| {
            self.digests
                .get(&r.tagged())
                .cloned()
                .filter(|d| !d.is_empty())
        });
        let name = self.mirrors.map(&r.name);
        match (digest, &r.tag) {
            (Some(d), _) => format!("{name}@{d}"),
            (None, Some(t)) => format!("{name}:{t}"),
            (None, None) => name,
        }
    }

    /// Rewrites every image of `obj` in place; returns how many changed.
    pub fn rewrite(&self, obj: &mut Value) -> usize {
        if !self.is_active() {
            return 0;
        }
        let mut changed = 0;
        visit(obj, &mut |image: &mut String| {
            let new = self.reference(image);
            if *image != new {
                *image = new;
                changed += 1;
            }
        });
        for (group, kind, pointer) in CR_IMAGE_FIELDS {
            if is_kind(obj, group, kind) {
                if let Some(Value::String(image)) = obj.pointer_mut(pointer) {
                    if !image.is_empty() {
                        let new = self.reference(image);
                        if *image != new {
                            *image = new;
                            changed += 1;
                        }
                    }
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_split_into_name_tag_and_digest() {
        let r = ImageRef::parse("registry:5000/a/b:1.2@sha256:ab");
        assert_eq!(
            (r.name.as_str(), r.tag.as_deref(), r.digest.as_deref()),
            ("registry:5000/a/b", Some("1.2"), Some("sha256:ab"))
        );
        assert_eq!(ImageRef::parse("registry:5000/a/b").tag, None);
        assert_eq!(
            ImageRef::parse("busybox").tagged(),
            "docker.io/library/busybox:latest"
        );
    }

    #[test]
    fn every_pod_template_and_cr_image_field_is_rewritten_to_the_mirror_by_digest() {
        let map = ImageMap {
            mirrors: Mirrors::parse(&[
                "quay.io=m:5000/q".into(),
                "docker.io=m:5000/hub".into(),
                "ghcr.io=m:5000/g".into(),
            ])
            .unwrap(),
            digests: [(
                "quay.io/jetstack/cert-manager-controller:v1.21.1".to_string(),
                "sha256:cc".to_string(),
            )]
            .into(),
        };
        let mut cron = json!({"kind": "CronJob", "apiVersion": "batch/v1", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"image": "altinity/clickhouse-operator:0.25.6"}],
            "containers": [{"image": "quay.io/jetstack/cert-manager-controller:v1.21.1"}, {"image": "ghcr.io/x/y@sha256:dd"}]}}}}}});
        assert_eq!(map.rewrite(&mut cron), 3);
        let mut found = BTreeSet::new();
        images_in(&cron, &mut found);
        assert_eq!(
            found,
            [
                "m:5000/g/x/y@sha256:dd",
                "m:5000/hub/altinity/clickhouse-operator:0.25.6",
                "m:5000/q/jetstack/cert-manager-controller@sha256:cc"
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        );
        let mut proxy = json!({"kind": "LiteLLMProxy", "apiVersion": "litellm.home-operations.com/v1alpha1", "spec": {"image": "ghcr.io/berriai/litellm:main-stable"}});
        assert_eq!(map.rewrite(&mut proxy), 1);
        assert_eq!(
            proxy["spec"]["image"],
            "m:5000/g/berriai/litellm:main-stable"
        );
        assert_eq!(
            ImageMap::default().rewrite(&mut proxy),
            0,
            "no mirror, no rewrite"
        );
    }
}
