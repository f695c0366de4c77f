//! A Helm chart as an OCI artifact, byte for byte as Helm v4 pushes it: the
//! config blob is Chart.yaml's metadata in Go's JSON (struct field order,
//! `omitempty`, HTML escaping), the one layer is the tarball, and the
//! manifest's annotations are Helm's OCI annotations. Pushing the same
//! tarball with the same modification time gives the digest Helm gives,
//! which is what lets a mirror we seed keep the pins' manifest digests.

use crate::chart::metadata::Metadata;
use crate::goyaml::json;
use crate::value::Value;
use std::collections::BTreeMap;

pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
pub const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

fn go_string(s: &str) -> String {
    json::encode(
        &Value::string(s.to_string()),
        json::Opts {
            escape_html: true,
            indent: None,
        },
    )
    .unwrap_or_default()
}

/// Go's JSON object writer: fields appended in order, empty ones left out
/// by the caller, as `omitempty` does.
struct Object(Vec<String>);

impl Object {
    fn new() -> Object {
        Object(Vec::new())
    }
    fn raw(&mut self, key: &str, json: String) {
        self.0.push(format!("{}:{json}", go_string(key)));
    }
    fn str(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.raw(key, go_string(value));
        }
    }
    fn strs(&mut self, key: &str, values: &[String]) {
        if !values.is_empty() {
            self.raw(key, list(values.iter().map(|v| go_string(v))));
        }
    }
    fn map(&mut self, key: &str, values: &BTreeMap<String, String>) {
        if !values.is_empty() {
            let mut o = Object::new();
            for (k, v) in values {
                o.raw(k, go_string(v));
            }
            self.raw(key, o.done());
        }
    }
    fn done(self) -> String {
        format!("{{{}}}", self.0.join(","))
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(","))
}

/// The config blob: `json.Marshal(chart.Metadata)`.
pub fn config_json(m: &Metadata) -> String {
    let mut o = Object::new();
    o.str("name", &m.name);
    o.str("home", &m.home);
    o.strs("sources", &m.sources);
    o.str("version", &m.version);
    o.str("description", &m.description);
    o.strs("keywords", &m.keywords);
    if !m.maintainers.is_empty() {
        o.raw(
            "maintainers",
            list(m.maintainers.iter().map(|mt| {
                let mut p = Object::new();
                p.str("name", &mt.name);
                p.str("email", &mt.email);
                p.str("url", &mt.url);
                p.done()
            })),
        );
    }
    o.str("icon", &m.icon);
    o.str("apiVersion", &m.api_version);
    o.str("condition", &m.condition);
    o.str("tags", &m.tags);
    o.str("appVersion", &m.app_version);
    if m.deprecated {
        o.raw("deprecated", "true".into());
    }
    o.map("annotations", &m.annotations);
    o.str("kubeVersion", &m.kube_version);
    if !m.dependencies.is_empty() {
        o.raw(
            "dependencies",
            list(m.dependencies.iter().map(|d| {
                let mut p = Object::new();
                p.raw("name", go_string(&d.name));
                p.str("version", &d.version);
                p.raw("repository", go_string(&d.repository));
                p.str("condition", &d.condition);
                p.strs("tags", &d.tags);
                if d.enabled {
                    p.raw("enabled", "true".into());
                }
                if !d.import_values.is_empty() {
                    let values = Value::list(d.import_values.clone());
                    let opts = json::Opts {
                        escape_html: true,
                        indent: None,
                    };
                    p.raw(
                        "import-values",
                        json::encode(&values, opts).unwrap_or_default(),
                    );
                }
                p.str("alias", &d.alias);
                p.done()
            })),
        );
    }
    o.str("type", &m.chart_type);
    o.done()
}

/// Helm's manifest annotations: the OCI ones from the metadata, then the
/// chart's own (which may not replace the title or the version).
pub fn annotations(m: &Metadata, created: &str) -> BTreeMap<String, String> {
    let mut a = BTreeMap::new();
    let mut put = |k: &str, v: &str| {
        if !v.is_empty() {
            a.insert(k.to_string(), v.to_string());
        }
    };
    put("org.opencontainers.image.description", &m.description);
    put("org.opencontainers.image.title", &m.name);
    put("org.opencontainers.image.version", &m.version);
    put("org.opencontainers.image.url", &m.home);
    put("org.opencontainers.image.created", created);
    if let Some(source) = m.sources.first() {
        put("org.opencontainers.image.source", source);
    }
    let authors = m
        .maintainers
        .iter()
        .map(|mt| {
            let mut s = mt.name.clone();
            if !mt.email.is_empty() {
                s.push_str(&format!(" ({})", mt.email));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ");
    put("org.opencontainers.image.authors", &authors);
    for (k, v) in &m.annotations {
        if k != "org.opencontainers.image.title" && k != "org.opencontainers.image.version" {
            a.insert(k.clone(), v.clone());
        }
    }
    a
}

pub struct Descriptor<'a> {
    pub media_type: &'a str,
    pub digest: String,
    pub size: usize,
}

fn descriptor(d: &Descriptor) -> String {
    let mut o = Object::new();
    o.str("mediaType", d.media_type);
    o.str("digest", &d.digest);
    o.raw("size", d.size.to_string());
    o.done()
}

/// The image manifest Helm writes (`ocispec.Manifest`, no mediaType field).
pub fn manifest_json(
    config: &Descriptor,
    layer: &Descriptor,
    annotations: &BTreeMap<String, String>,
) -> String {
    let mut o = Object::new();
    o.raw("schemaVersion", "2".into());
    o.raw("config", descriptor(config));
    o.raw("layers", format!("[{}]", descriptor(layer)));
    o.map("annotations", annotations);
    o.done()
}

/// RFC 3339 in UTC to the second, as Go's `time.RFC3339` prints it.
pub fn created_from(mtime: std::time::SystemTime) -> String {
    let t: chrono::DateTime<chrono::Utc> = mtime.into();
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}
