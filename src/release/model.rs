//! The release record as Helm v4.2.3 stores it (`release/v1`).

use super::gojson::{self, Obj};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Unknown,
    Deployed,
    Uninstalled,
    Superseded,
    Failed,
    Uninstalling,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
        }
    }

    pub fn parse(s: &str) -> Status {
        match s {
            "deployed" => Status::Deployed,
            "uninstalled" => Status::Uninstalled,
            "superseded" => Status::Superseded,
            "failed" => Status::Failed,
            "uninstalling" => Status::Uninstalling,
            "pending-install" => Status::PendingInstall,
            "pending-upgrade" => Status::PendingUpgrade,
            "pending-rollback" => Status::PendingRollback,
            _ => Status::Unknown,
        }
    }

    pub fn is_pending(self) -> bool {
        matches!(
            self,
            Status::PendingInstall | Status::PendingUpgrade | Status::PendingRollback
        )
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// Go time text (RFC 3339 with nanoseconds); empty for the zero time.
    pub first_deployed: String,
    pub last_deployed: String,
    pub deleted: String,
    pub description: String,
    pub status: Status,
    pub notes: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct HookExecution {
    pub started_at: String,
    pub completed_at: String,
    pub phase: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub manifest: String,
    pub events: Vec<String>,
    pub last_run: HookExecution,
    pub weight: i64,
    pub delete_policies: Vec<String>,
    pub output_log_policies: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub name: String,
    pub info: Info,
    /// The chart record (metadata, templates, values, schema, files) as JSON.
    pub chart: Value,
    /// User-supplied values; Null when none.
    pub config: Value,
    pub manifest: String,
    pub hooks: Vec<Hook>,
    pub version: i64,
    pub namespace: String,
    /// Custom labels, kept on the storage object (not in the payload).
    pub labels: BTreeMap<String, String>,
    pub apply_method: String,
}

/// About the length of `v` as JSON, a little over (strings are counted
/// with an eighth for escapes).
fn approx_json_len(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 24,
        Value::String(s) => s.len() + s.len() / 8 + 2,
        Value::Array(a) => a.iter().map(|x| approx_json_len(x) + 1).sum::<usize>() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, x)| k.len() + 4 + approx_json_len(x))
                .sum::<usize>()
                + 2
        }
    }
}

fn s(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Go's zero time is omitted (`omitzero`) or written as year 1.
fn time_field(v: &Value, k: &str) -> String {
    let t = s(v, k);
    if t.starts_with("0001-01-01T00:00:00") {
        String::new()
    } else {
        t
    }
}

/// A release record that is JSON but not an object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("release record is not a JSON object")]
pub struct NotAnObject;

impl Release {
    pub fn from_json(v: &Value) -> Result<Release, NotAnObject> {
        if !v.is_object() {
            return Err(NotAnObject);
        }
        let info = v.get("info").cloned().unwrap_or(Value::Null);
        let hooks = v
            .get("hooks")
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .map(|h| {
                        let lr = h.get("last_run").cloned().unwrap_or(Value::Null);
                        Hook {
                            name: s(h, "name"),
                            kind: s(h, "kind"),
                            path: s(h, "path"),
                            manifest: s(h, "manifest"),
                            events: strings(h, "events"),
                            last_run: HookExecution {
                                started_at: time_field(&lr, "started_at"),
                                completed_at: time_field(&lr, "completed_at"),
                                phase: s(&lr, "phase"),
                            },
                            weight: h.get("weight").and_then(Value::as_i64).unwrap_or(0),
                            delete_policies: strings(h, "delete_policies"),
                            output_log_policies: strings(h, "output_log_policies"),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Release {
            name: s(v, "name"),
            info: Info {
                first_deployed: time_field(&info, "first_deployed"),
                last_deployed: time_field(&info, "last_deployed"),
                deleted: time_field(&info, "deleted"),
                description: s(&info, "description"),
                status: Status::parse(&s(&info, "status")),
                notes: s(&info, "notes"),
            },
            chart: v.get("chart").cloned().unwrap_or(Value::Null),
            config: v.get("config").cloned().unwrap_or(Value::Null),
            manifest: s(v, "manifest"),
            hooks,
            version: v.get("version").and_then(Value::as_i64).unwrap_or(0),
            namespace: s(v, "namespace"),
            labels: BTreeMap::new(),
            apply_method: s(v, "apply_method"),
        })
    }

    /// The JSON Helm's storage drivers write (before gzip and base64).
    pub fn to_json(&self) -> String {
        // Sized once: megabytes of base64 chart files grown by doubling
        // held up to twice the record at the peak of an install.
        let hooks: usize = self.hooks.iter().map(|h| h.manifest.len() + 512).sum();
        let text = self.manifest.len() + hooks + self.info.notes.len();
        let cap = text + text / 8 + approx_json_len(&self.chart) + approx_json_len(&self.config);
        let mut out = String::with_capacity(cap + 4096);
        let mut o = Obj::new(&mut out);
        o.str_opt("name", &self.name);
        o.raw("info", |out| {
            let mut i = Obj::new(out);
            i.str_opt("first_deployed", &self.info.first_deployed);
            i.str_opt("last_deployed", &self.info.last_deployed);
            i.str_opt("deleted", &self.info.deleted);
            i.str_opt("description", &self.info.description);
            i.str("status", self.info.status.as_str());
            i.str_opt("notes", &self.info.notes);
            i.end();
        });
        if !self.chart.is_null() {
            o.raw("chart", |out| super::record::write_chart(out, &self.chart));
        }
        if self.config.as_object().is_some_and(|m| !m.is_empty()) {
            o.value("config", &self.config);
        }
        o.str_opt("manifest", &self.manifest);
        if !self.hooks.is_empty() {
            o.raw("hooks", |out| {
                out.push('[');
                for (n, h) in self.hooks.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    let mut ho = Obj::new(out);
                    ho.str_opt("name", &h.name);
                    ho.str_opt("kind", &h.kind);
                    ho.str_opt("path", &h.path);
                    ho.str_opt("manifest", &h.manifest);
                    if !h.events.is_empty() {
                        ho.raw("events", |out| gojson::strings(out, &h.events));
                    }
                    ho.raw("last_run", |out| {
                        let mut lr = Obj::new(out);
                        lr.str_opt("started_at", &h.last_run.started_at);
                        lr.str_opt("completed_at", &h.last_run.completed_at);
                        lr.str("phase", &h.last_run.phase);
                        lr.end();
                    });
                    if h.weight != 0 {
                        ho.int("weight", h.weight);
                    }
                    if !h.delete_policies.is_empty() {
                        ho.raw("delete_policies", |out| {
                            gojson::strings(out, &h.delete_policies)
                        });
                    }
                    if !h.output_log_policies.is_empty() {
                        ho.raw("output_log_policies", |out| {
                            gojson::strings(out, &h.output_log_policies)
                        });
                    }
                    ho.end();
                }
                out.push(']');
            });
        }
        if self.version != 0 {
            o.int("version", self.version);
        }
        o.str_opt("namespace", &self.namespace);
        o.str_opt("apply_method", &self.apply_method);
        o.end();
        out
    }

    /// Drops what a listing never shows (manifest, hooks, templates, files,
    /// values), keeping the chart's metadata and the release's info.
    pub fn strip_to_summary(&mut self) {
        self.manifest = String::new();
        self.hooks = Vec::new();
        self.config = Value::Null;
        let metadata = self.chart.get("metadata").cloned().unwrap_or(Value::Null);
        self.chart = serde_json::json!({ "metadata": metadata });
    }

    pub fn chart_name(&self) -> String {
        self.chart
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    pub fn chart_version(&self) -> String {
        self.chart
            .pointer("/metadata/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    pub fn app_version(&self) -> String {
        self.chart
            .pointer("/metadata/appVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }
}
