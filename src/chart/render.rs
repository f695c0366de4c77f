//! Rendering a chart tree: the objects templates see (.Values, .Release,
//! .Chart, .Capabilities, .Files, .Subcharts, .Template) and Helm's engine
//! loop (parse every template into one set, execute each non-partial).

use super::files::Files;
use super::schema::SchemaError;
use super::values::{coalesce_values_for, process_dependencies, ValuesError};
use super::Chart;
use crate::gotmpl::exec::{Exec, LookupFn, Slot, TemplateSet};
use crate::gotmpl::format::quote_go;
use crate::gotmpl::source::Source;
use crate::value::{ListKind, Map, MapKind, MethodError, Object, Value};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Helm v4.2.3's offline API versions.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha2",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

#[derive(Debug, Clone)]
pub struct KubeVersion {
    /// As given, with a `v` in front when it had none (`1.29` -> `v1.29`).
    pub version: String,
    /// `v` and the numeric components only: what String() returns and
    /// what a chart's kubeVersion constraint is checked against.
    pub normalized: String,
    pub major: String,
    pub minor: String,
}

impl KubeVersion {
    /// Helm's common.ParseKubeVersion, on Kubernetes' version.ParseGeneric:
    /// `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`, at least two components, the
    /// first without a leading zero, anything after the numbers ignored.
    pub fn parse(s: &str) -> Result<KubeVersion, KubeVersionError> {
        let wrap = |reason: GenericVersionError| KubeVersionError {
            input: s.to_string(),
            reason,
        };
        let t = s.trim_start_matches(|c: char| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' '));
        let t = t.strip_prefix('v').unwrap_or(t);
        let bytes = t.as_bytes();
        let mut end = 0;
        // ([0-9]+(?:\.[0-9]+)*): a dot only counts when digits follow it.
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == 0 {
            return Err(wrap(GenericVersionError::Unparsable(s.to_string())));
        }
        loop {
            if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
                end += 1;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
            } else {
                break;
            }
        }
        // `(.*)*$` without (?s): the rest may not hold a newline.
        if t[end..].contains('\n') {
            return Err(wrap(GenericVersionError::Unparsable(s.to_string())));
        }
        let comps: Vec<&str> = t[..end].split('.').collect();
        if comps.len() < 2 {
            return Err(wrap(GenericVersionError::TooFewComponents(s.to_string())));
        }
        let mut nums = Vec::new();
        for (i, c) in comps.iter().enumerate() {
            if i == 0 && c.starts_with('0') && *c != "0" {
                return Err(wrap(GenericVersionError::ZeroPrefixed {
                    component: c.to_string(),
                    version: s.to_string(),
                }));
            }
            let n: u64 = c.parse().map_err(|_| {
                wrap(GenericVersionError::OutOfRange {
                    component: c.to_string(),
                    version: s.to_string(),
                })
            })?;
            nums.push(n.to_string());
        }
        let version = if s.starts_with('v') {
            s.to_string()
        } else {
            format!("v{s}")
        };
        Ok(KubeVersion {
            version,
            normalized: format!("v{}", nums.join(".")),
            major: nums[0].clone(),
            minor: nums[1].clone(),
        })
    }
}

/// Why `--kube-version` (or a cluster's version) is not a Kubernetes
/// version, as Helm's common.ParseKubeVersion says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid kube version '{input}': {reason}")]
pub struct KubeVersionError {
    pub input: String,
    #[source]
    pub reason: GenericVersionError,
}

/// Kubernetes' version.ParseGeneric errors; every text is Go-quoted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenericVersionError {
    #[error("could not parse {} as version", quote_go(.0))]
    Unparsable(String),
    #[error("illegal version string {}", quote_go(.0))]
    TooFewComponents(String),
    #[error("illegal zero-prefixed version component {} in {}", quote_go(.component), quote_go(.version))]
    ZeroPrefixed { component: String, version: String },
    /// A component that overflows a uint64, with strconv's own words.
    #[error(
        "illegal non-numeric version component {} in {}: strconv.ParseUint: parsing {}: value out of range",
        quote_go(.component),
        quote_go(.version),
        quote_go(.component)
    )]
    OutOfRange { component: String, version: String },
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion {
            version: "v1.36.0".into(),
            normalized: "v1.36.0".into(),
            major: "1".into(),
            minor: "36".into(),
        }
    }
}

impl Object for KubeVersion {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::str(&self.version)),
            "Major" => Some(Value::str(&self.major)),
            "Minor" => Some(Value::str(&self.minor)),
            _ => None,
        }
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "String" | "GitVersion")
    }
    fn method_sig(
        &self,
        _name: &str,
    ) -> Option<(
        &'static [crate::gotmpl::funcs::P],
        Option<crate::gotmpl::funcs::P>,
    )> {
        Some((&[], None))
    }
    fn call_method(&self, name: &str, args: Vec<Value>) -> Result<Value, MethodError> {
        if !args.is_empty() {
            return Err(MethodError::ArgCount {
                want: 0,
                got: args.len(),
            });
        }
        Ok(Value::str(if name == "String" {
            &self.normalized
        } else {
            &self.version
        }))
    }
    fn format(&self) -> String {
        self.normalized.clone()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        let mut m = Map::new();
        m.insert("Version".into(), Value::str(&self.version));
        m.insert("Major".into(), Value::str(&self.major));
        m.insert("Minor".into(), Value::str(&self.minor));
        Value::map(m)
    }
    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        Some(vec![
            ("Version", Value::str(&self.version)),
            ("Major", Value::str(&self.major)),
            ("Minor", Value::str(&self.minor)),
        ])
    }
}

#[derive(Debug, Clone)]
pub struct ApiVersions(pub Vec<String>);

impl Object for ApiVersions {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }
    fn kind_name(&self) -> &'static str {
        "slice"
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        name == "Has"
    }
    fn method_sig(
        &self,
        _name: &str,
    ) -> Option<(
        &'static [crate::gotmpl::funcs::P],
        Option<crate::gotmpl::funcs::P>,
    )> {
        Some((&[crate::gotmpl::funcs::P::Str], None))
    }
    fn call_method(&self, _name: &str, args: Vec<Value>) -> Result<Value, MethodError> {
        match args.as_slice() {
            [Value::Str(s)] => Ok(Value::Bool(self.0.iter().any(|v| v.as_str() == &**s))),
            [other] => Err(MethodError::WrongType {
                expected: "string",
                got: other.type_name(),
            }),
            _ => Err(MethodError::ArgCountOf {
                method: "Has".to_string(),
                want: 1,
                got: args.len(),
            }),
        }
    }
    fn format(&self) -> String {
        format!("[{}]", self.0.join(" "))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        Value::List(
            Rc::new(self.0.iter().map(Value::str).collect()),
            ListKind::Str,
        )
    }
}

#[derive(Debug, Clone)]
struct HelmVersion;

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => "v4.2",
            "GitCommit" => "",
            "GitTreeState" => "",
            "GoVersion" => "go1.26.6",
            "KubeClientVersion" => "v1.36",
            _ => return None,
        }))
    }
    fn format(&self) -> String {
        "{v4.2   go1.26.6 v1.36}".into()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> Value {
        let mut m = Map::new();
        m.insert("version".into(), Value::str("v4.2"));
        m.insert("go_version".into(), Value::str("go1.26.6"));
        m.insert("kube_client_version".into(), Value::str("v1.36"));
        Value::map(m)
    }
}

#[derive(Debug, Clone)]
pub struct Capabilities {
    pub kube_version: KubeVersion,
    pub api_versions: Vec<String>,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            kube_version: KubeVersion::default(),
            api_versions: DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl Object for Capabilities {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }
    fn kind_name(&self) -> &'static str {
        "ptr"
    }
    fn is_pointer(&self) -> bool {
        true
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(Rc::new(self.kube_version.clone()))),
            "APIVersions" => Some(Value::Object(Rc::new(ApiVersions(
                self.api_versions.clone(),
            )))),
            "HelmVersion" => Some(Value::Object(Rc::new(HelmVersion))),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!(
            "&{{{} [{}] {}}}",
            self.kube_version.version,
            self.api_versions.join(" "),
            HelmVersion.format()
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Release facts for `.Release`.
#[derive(Debug, Clone)]
pub struct ReleaseOptions {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub is_install: bool,
    pub is_upgrade: bool,
}

impl Default for ReleaseOptions {
    fn default() -> Self {
        ReleaseOptions {
            name: "release-name".into(),
            namespace: "default".into(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        }
    }
}

/// Why a chart did not render, in Helm's words.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{0}")]
    Values(#[source] ValuesError),
    #[error("{0}")]
    Schema(#[source] SchemaError),
    #[error("chart requires kubeVersion: {constraint} which is incompatible with Kubernetes {kube_version}")]
    KubeVersion {
        constraint: String,
        kube_version: String,
    },
    /// A template failed to parse or execute; `message` is the form Helm v4
    /// prints, which reshapes Go's (the source).
    #[error("{message}")]
    Template {
        message: String,
        #[source]
        source: crate::gotmpl::Error,
    },
}

impl RenderError {
    /// Whether Helm fails this while rendering resources (templates, the
    /// chart's kubeVersion), after the release exists: `helm template` then
    /// adds its hint about --debug. Values, dependency and schema errors
    /// come before.
    pub fn while_rendering_resources(&self) -> bool {
        matches!(
            self,
            RenderError::KubeVersion { .. } | RenderError::Template { .. }
        )
    }

    fn template(source: crate::gotmpl::Error) -> RenderError {
        RenderError::Template {
            message: source.helm_message(),
            source,
        }
    }
}

/// The outcome of rendering: template path to text, plus the processed
/// chart tree and final values. A text is a Go string: bytes a template
/// printed that are not UTF-8 are carried as gotmpl::gostr markers
/// (`gostr::to_bytes` gives the exact bytes, `gostr::lossy` what Go's
/// encoders would show).
pub struct Rendered {
    pub files: BTreeMap<String, String>,
    pub chart: Chart,
    pub values: Map,
}

struct Renderable {
    text: Source,
    vals: Value,
    base_path: String,
}

fn collect(
    c: &Chart,
    parent_path: Option<&str>,
    top: &Map,
    parent_vals: &Value,
    out: &mut BTreeMap<String, Renderable>,
    is_root: bool,
) -> Value {
    let full_path = match parent_path {
        None => c.name().to_string(),
        Some(p) => format!("{p}/charts/{}", c.name()),
    };
    let values = if is_root {
        parent_vals.clone()
    } else {
        match parent_vals {
            Value::Map(m, _) => match m.borrow().get(c.name()) {
                Some(Value::Map(sub, _)) => Value::Map(sub.clone(), MapKind::Values),
                _ => Value::values_map(Map::new()),
            },
            _ => Value::values_map(Map::new()),
        }
    };
    let subcharts = Value::map(Map::new());
    let mut next = Map::new();
    // (the per-chart top map is a common.Values, as `typeOf .` shows)
    next.insert("Chart".into(), c.metadata.to_value(is_root));
    next.insert("Files".into(), Value::Object(Rc::new(Files::new(&c.files))));
    next.insert(
        "Release".into(),
        top.get("Release").cloned().unwrap_or(Value::Nil),
    );
    next.insert(
        "Capabilities".into(),
        top.get("Capabilities").cloned().unwrap_or(Value::Nil),
    );
    next.insert("Values".into(), values.clone());
    next.insert("Subcharts".into(), subcharts.clone());
    let next = Value::values_map(next);
    for child in &c.dependencies {
        let v = collect(child, Some(&full_path), top, &values, out, false);
        if let Value::Map(m, _) = &subcharts {
            m.borrow_mut().insert(child.name().to_string(), v);
        }
    }
    for t in &c.templates {
        if c.is_library()
            && !t
                .name
                .rsplit('/')
                .next()
                .map(|b| b.starts_with('_'))
                .unwrap_or(false)
        {
            continue;
        }
        out.insert(
            format!("{full_path}/{}", t.name),
            Renderable {
                text: utf8(&t.data),
                vals: next.clone(),
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    next
}

/// A template's text: the file's own bytes when they are UTF-8 (a chart's
/// templates are most of its size), otherwise a copy keeping the bytes
/// that are not UTF-8 as gostr markers (Go copies text bytes as they are).
fn utf8(b: &bytes::Bytes) -> Source {
    Source::from_utf8(b.clone())
        .unwrap_or_else(|b| Source::from(crate::value::gostr::from_vec(b.to_vec())))
}

/// Helm's sortTemplates: deeper paths first, then reverse lexical order.
fn parse_order(keys: &[String]) -> Vec<String> {
    let mut k = keys.to_vec();
    k.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
    k
}

pub struct RenderOptions<'a> {
    pub release: ReleaseOptions,
    pub capabilities: Capabilities,
    pub lookup: Option<&'a LookupFn>,
    pub strict: bool,
    pub skip_schema_validation: bool,
}

impl Default for RenderOptions<'_> {
    fn default() -> Self {
        RenderOptions {
            release: ReleaseOptions::default(),
            capabilities: Capabilities::default(),
            lookup: None,
            strict: false,
            skip_schema_validation: false,
        }
    }
}

/// Render a chart with user values, as `helm template` / install do.
pub fn render_chart(
    chart: &Chart,
    user: &Map,
    opts: &RenderOptions,
) -> Result<Rendered, RenderError> {
    let processed = process_dependencies(chart, user).map_err(RenderError::Values)?;
    let values = coalesce_values_for(&processed, user).map_err(RenderError::Values)?;
    // Schema checks run beside template execution (after parsing, so they
    // do not compete with the parser's two threads); their error comes
    // first, as in Helm, which validates before rendering.
    let pending = if opts.skip_schema_validation {
        None
    } else {
        Some(super::schema::PendingValidation::collect(
            &processed, &values,
        ))
    };
    // Helm checks the chart's kubeVersion in renderResources, after
    // ToRenderValuesWithSchemaValidation: a schema error comes first.
    if let Err(e) = check_kube_version(chart, opts) {
        if let Some(p) = pending.filter(|p| !p.is_empty()) {
            p.run().map_err(RenderError::Schema)?;
        }
        return Err(e);
    }
    let files = render_checked(&processed, values.clone(), opts, pending)?;
    Ok(Rendered {
        files,
        chart: processed,
        values,
    })
}

/// renderResources' check of the chart's kubeVersion constraint, with
/// chartutil.IsCompatibleRange: a constraint or version that does not
/// parse is incompatible too.
fn check_kube_version(chart: &Chart, opts: &RenderOptions) -> Result<(), RenderError> {
    let want = &chart.metadata.kube_version;
    if want.is_empty() {
        return Ok(());
    }
    use crate::gotmpl::funcs::semver::{Constraint, Version};
    let kv = Version::parse(&opts.capabilities.kube_version.normalized);
    let ok = match (kv, Constraint::parse(want)) {
        (Ok(kv), Ok(c)) => c.check(&kv),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(RenderError::KubeVersion {
        constraint: want.clone(),
        kube_version: opts.capabilities.kube_version.version.clone(),
    })
}

/// Execute every template of an already processed chart tree.
pub fn render_with_values(
    chart: &Chart,
    values: Map,
    opts: &RenderOptions,
) -> Result<BTreeMap<String, String>, RenderError> {
    render_checked(chart, values, opts, None)
}

/// `render_with_values`, with schema validation run on a second thread
/// while templates execute; a validation error wins over a render error.
fn render_checked(
    chart: &Chart,
    values: Map,
    opts: &RenderOptions,
    pending: Option<super::schema::PendingValidation>,
) -> Result<BTreeMap<String, String>, RenderError> {
    let mut release = Map::new();
    release.insert("Name".into(), Value::str(&opts.release.name));
    release.insert("Namespace".into(), Value::str(&opts.release.namespace));
    release.insert("IsUpgrade".into(), Value::Bool(opts.release.is_upgrade));
    release.insert("IsInstall".into(), Value::Bool(opts.release.is_install));
    release.insert("Revision".into(), Value::Int(opts.release.revision));
    release.insert("Service".into(), Value::str("Helm"));
    let mut top = Map::new();
    top.insert("Release".into(), Value::map(release));
    top.insert(
        "Capabilities".into(),
        Value::Object(Rc::new(opts.capabilities.clone())),
    );
    let vals = Value::values_map(values);
    let mut tpls = BTreeMap::new();
    collect(chart, None, &top, &vals, &mut tpls, true);

    let keys: Vec<String> = tpls.keys().cloned().collect();
    let order = parse_order(&keys);
    let mut set = TemplateSet::new();
    let sources: Vec<(&str, Source)> = order
        .iter()
        .map(|n| (n.as_str(), tpls[n].text.clone()))
        .collect();
    let parsed = set.parse_shared_files(&sources);
    let pending = pending.filter(|p| !p.is_empty());
    let run_checks = move || pending.map(|p| p.run());
    let (checked, rendered) = crate::par::beside(run_checks, || {
        parsed
            .map_err(RenderError::template)
            .and_then(|_| execute(&set, &order, &tpls, opts))
    });
    if let Some(check) = checked {
        check.map_err(RenderError::Schema)?;
    }
    rendered
}

fn execute(
    set: &TemplateSet,
    order: &[String],
    tpls: &BTreeMap<String, Renderable>,
    opts: &RenderOptions,
) -> Result<BTreeMap<String, String>, RenderError> {
    let mut exec = Exec::new(set);
    exec.lookup = opts.lookup;
    exec.options.strict = opts.strict;
    let mut out = BTreeMap::new();
    for name in order {
        if name
            .rsplit('/')
            .next()
            .map(|b| b.starts_with('_'))
            .unwrap_or(false)
        {
            continue;
        }
        let r = &tpls[name];
        if let Value::Map(m, _) = &r.vals {
            let mut t = Map::new();
            t.insert("Name".into(), Value::str(name));
            t.insert("BasePath".into(), Value::str(&r.base_path));
            m.borrow_mut()
                .insert("Template".into(), Value::values_map(t));
        }
        // Most of a template's text usually reaches its output.
        let mut buf = String::with_capacity(r.text.len() + 256);
        exec.exec_named(name, Slot::concrete(r.vals.clone()), &mut buf)
            .map_err(|e| RenderError::template(crate::gotmpl::Error::Exec(e)))?;
        // Helm erases every "<no value>"; most outputs have none to erase.
        if memchr::memmem::find(buf.as_bytes(), b"<no value>").is_some() {
            buf = buf.replace("<no value>", "");
        }
        out.insert(name.clone(), buf);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::utf8;
    use bytes::Bytes;

    #[test]
    fn a_templates_text_is_its_files_bytes_unless_they_are_not_utf8() {
        let archive = Bytes::from("name: {{ .Release.Name }} ü\n".as_bytes().to_vec());
        let file = archive.slice(6..);
        let text = utf8(&file);
        assert_eq!(&*text, "{{ .Release.Name }} ü\n");
        assert_eq!(
            text.as_ptr(),
            archive[6..].as_ptr(),
            "no copy of valid UTF-8"
        );

        let bad = Bytes::from_static(b"a\xffb");
        let text = utf8(&bad);
        assert_eq!(&*text, "a\u{10ffff}b");
        assert_ne!(text.as_ptr(), bad.as_ptr());
    }
}
