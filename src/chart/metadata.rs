//! Chart.yaml, decoded as sigs.k8s.io/yaml decodes it into Helm's
//! Metadata struct (scalars in string fields become their text).

use crate::gotmpl::format::quote_go;
use crate::goyaml::parse::{parse_first_document, Node};
use crate::goyaml::resolve::Scalar;
use crate::value::{ListKind, Map, MapKind, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Debug, Clone, Default)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

#[derive(Debug, Clone, Default)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    pub import_values: Vec<Value>,
    pub alias: String,
}

impl Dependency {
    pub fn effective_name(&self) -> &str {
        if self.alias.is_empty() {
            &self.name
        } else {
            &self.alias
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Maintainer>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: BTreeMap<String, String>,
    /// Chart.yaml has an `annotations:` mapping (maybe empty); without one
    /// Go's map is nil, which `toJson .Chart` shows as `null`.
    pub annotations_given: bool,
    pub kube_version: String,
    pub dependencies: Vec<Dependency>,
    pub chart_type: String,
}

fn scalar_text(n: &Node) -> Option<String> {
    match n {
        Node::Scalar(s) => Some(match s {
            Scalar::Null => return None,
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Uint(u) => u.to_string(),
            Scalar::Float(f) => crate::value::float::format_float32_g(*f as f32),
            Scalar::Str(s) | Scalar::Timestamp(s) => s.clone(),
            Scalar::Merge => "<<".into(),
        }),
        _ => None,
    }
}

/// Helm's sanitizeString (pkg/chart/v2/metadata.go), which Metadata,
/// Maintainer and Dependency Validate apply to most of their strings on
/// load: strings.Map turning each unicode.IsSpace rune into a space and
/// dropping each rune unicode.IsPrint refuses.
fn sanitize(s: &str) -> String {
    use crate::value::gounicode as uni;
    s.chars()
        .filter_map(|c| {
            let c = uni::rune(c);
            if uni::is_space(c) {
                Some(' ')
            } else if uni::is_print(c) {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

fn pairs(n: &Node) -> Vec<(String, &Node)> {
    match n {
        Node::Map(p) => p
            .iter()
            .filter_map(|(k, v)| scalar_text(k).map(|k| (k, v)))
            .collect(),
        _ => Vec::new(),
    }
}

fn str_list(n: &Node) -> Vec<String> {
    match n {
        Node::Seq(items) => items
            .iter()
            .filter_map(scalar_text)
            .map(|s| sanitize(&s))
            .collect(),
        _ => Vec::new(),
    }
}

pub fn parse_dependencies(n: &Node) -> Vec<Dependency> {
    let Node::Seq(items) = n else {
        return Vec::new();
    };
    items
        .iter()
        .map(|it| {
            let mut d = Dependency::default();
            for (k, v) in pairs(it) {
                match k.as_str() {
                    "name" => d.name = sanitize(&scalar_text(v).unwrap_or_default()),
                    "version" => d.version = sanitize(&scalar_text(v).unwrap_or_default()),
                    "repository" => d.repository = sanitize(&scalar_text(v).unwrap_or_default()),
                    "condition" => d.condition = sanitize(&scalar_text(v).unwrap_or_default()),
                    "tags" => d.tags = str_list(v),
                    "enabled" => d.enabled = matches!(v, Node::Scalar(Scalar::Bool(true))),
                    // Not sanitized: Validate checks it against ^[a-zA-Z0-9_-]+$.
                    "alias" => d.alias = scalar_text(v).unwrap_or_default(),
                    "import-values" => {
                        if let Ok(Value::List(l, _)) = crate::goyaml::parse::to_json(v) {
                            d.import_values = l.as_ref().clone();
                        }
                    }
                    _ => {}
                }
            }
            d
        })
        .collect()
}

/// Why Chart.yaml could not be read or its metadata is refused, in the
/// words of Helm's loader and its Metadata.Validate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetadataError {
    #[error("cannot load Chart.yaml: error converting YAML to JSON: {0}")]
    Yaml(#[source] crate::goyaml::YamlError),
    #[error("validation: chart.metadata.name is required")]
    NameRequired,
    #[error("validation: chart.metadata.name {} is not allowed", quote_go(.0))]
    NameNotAllowed(String),
    /// A name that is not its own base name (it holds a '/').
    #[error("validation: chart.metadata.name {} is invalid", quote_go(.0))]
    NameInvalid(String),
    #[error("validation: chart.metadata.version is required")]
    VersionRequired,
    #[error("validation: chart.metadata.version {} is invalid", quote_go(.0))]
    VersionInvalid(String),
    #[error("validation: chart.metadata.type must be application or library")]
    TypeInvalid,
    #[error("validation: dependency {} has disallowed characters in the alias", quote_go(.0))]
    AliasDisallowed(String),
    #[error("validation: more than one dependency with name or alias {}", quote_go(.0))]
    DuplicateDependency(String),
}

impl Metadata {
    pub fn parse(text: &str) -> Result<Metadata, MetadataError> {
        let doc = parse_first_document(text).map_err(MetadataError::Yaml)?;
        let mut m = Metadata::default();
        let Some(doc) = doc else {
            return Ok(m);
        };
        for (k, v) in pairs(&doc) {
            let text = || sanitize(&scalar_text(v).unwrap_or_default());
            // Validate leaves version, apiVersion and type as they are.
            let raw = || scalar_text(v).unwrap_or_default();
            match k.as_str() {
                "name" => m.name = text(),
                "home" => m.home = text(),
                "sources" => m.sources = str_list(v),
                "version" => m.version = raw(),
                "description" => m.description = text(),
                "keywords" => m.keywords = str_list(v),
                "maintainers" => {
                    if let Node::Seq(items) = v {
                        for it in items {
                            let mut mt = Maintainer::default();
                            for (mk, mv) in pairs(it) {
                                let t = sanitize(&scalar_text(mv).unwrap_or_default());
                                match mk.as_str() {
                                    "name" => mt.name = t,
                                    "email" => mt.email = t,
                                    "url" => mt.url = t,
                                    _ => {}
                                }
                            }
                            m.maintainers.push(mt);
                        }
                    }
                }
                "icon" => m.icon = text(),
                "apiVersion" => m.api_version = raw(),
                "condition" => m.condition = text(),
                "tags" => m.tags = text(),
                "appVersion" => m.app_version = text(),
                "deprecated" => m.deprecated = matches!(v, Node::Scalar(Scalar::Bool(true))),
                "annotations" => {
                    // Helm's Validate sanitizes the other fields, never the
                    // annotations: a multi-line annotation stays multi-line
                    // in `.Chart.Annotations` and in an OCI push's config.
                    m.annotations_given = matches!(v, Node::Map(..));
                    for (ak, av) in pairs(v) {
                        m.annotations
                            .insert(ak, scalar_text(av).unwrap_or_default());
                    }
                }
                "kubeVersion" => m.kube_version = text(),
                "dependencies" => m.dependencies = parse_dependencies(v),
                "type" => m.chart_type = raw(),
                _ => {}
            }
        }
        Ok(m)
    }

    pub fn validate(&self) -> Result<(), MetadataError> {
        if self.api_version.is_empty() {
            // Missing apiVersion is treated as v1 by the loader.
        }
        if self.name.is_empty() {
            return Err(MetadataError::NameRequired);
        }
        if self.name == "." || self.name == ".." {
            return Err(MetadataError::NameNotAllowed(self.name.clone()));
        }
        // name != filepath.Base(name): on Linux only '/' separates.
        let base = {
            let t = self.name.trim_end_matches('/');
            if t.is_empty() {
                "/"
            } else {
                t.rsplit('/').next().unwrap_or(t)
            }
        };
        if base != self.name {
            return Err(MetadataError::NameInvalid(self.name.clone()));
        }
        if self.version.is_empty() {
            return Err(MetadataError::VersionRequired);
        }
        if crate::gotmpl::funcs::semver::Version::parse(&self.version).is_err() {
            return Err(MetadataError::VersionInvalid(self.version.clone()));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(MetadataError::TypeInvalid);
        }
        let mut seen = std::collections::HashSet::new();
        for d in &self.dependencies {
            if !d.alias.is_empty()
                && !d
                    .alias
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(MetadataError::AliasDisallowed(d.name.clone()));
            }
            if !seen.insert(d.effective_name().to_string()) {
                return Err(MetadataError::DuplicateDependency(
                    d.effective_name().to_string(),
                ));
            }
        }
        Ok(())
    }

    /// `.Chart` as Helm v4 exposes it: a map keyed by Go field names.
    pub fn to_value(&self, is_root: bool) -> Value {
        let s = |x: &str| Value::str(x);
        let sl = |v: &Vec<String>| {
            Value::List(
                Rc::new(v.iter().map(|x| Value::str(x)).collect()),
                ListKind::Any,
            )
        };
        let mut m = Map::new();
        m.insert("Name".into(), s(&self.name));
        m.insert("Home".into(), s(&self.home));
        m.insert("Sources".into(), sl(&self.sources));
        m.insert("Version".into(), s(&self.version));
        m.insert("Description".into(), s(&self.description));
        m.insert("Keywords".into(), sl(&self.keywords));
        m.insert(
            "Maintainers".into(),
            Value::list(
                self.maintainers
                    .iter()
                    .map(|mt| {
                        let mut mm = Map::new();
                        mm.insert("Name".into(), s(&mt.name));
                        mm.insert("Email".into(), s(&mt.email));
                        mm.insert("URL".into(), s(&mt.url));
                        Value::map(mm)
                    })
                    .collect(),
            ),
        );
        m.insert("Icon".into(), s(&self.icon));
        m.insert("APIVersion".into(), s(&self.api_version));
        m.insert("Condition".into(), s(&self.condition));
        m.insert("Tags".into(), s(&self.tags));
        m.insert("AppVersion".into(), s(&self.app_version));
        m.insert("Deprecated".into(), Value::Bool(self.deprecated));
        let ann: Map = self
            .annotations
            .iter()
            .map(|(k, v)| (k.clone(), Value::str(v)))
            .collect();
        // Chart.yaml without `annotations:` leaves Go's map nil.
        let kind = if self.annotations_given {
            MapKind::StrStr
        } else {
            MapKind::NilStrStr
        };
        m.insert(
            "Annotations".into(),
            Value::Map(Rc::new(RefCell::new(ann)), kind),
        );
        m.insert("KubeVersion".into(), s(&self.kube_version));
        m.insert(
            "Dependencies".into(),
            Value::list(
                self.dependencies
                    .iter()
                    .map(|d| {
                        let mut dm = Map::new();
                        dm.insert("Name".into(), s(&d.name));
                        dm.insert("Version".into(), s(&d.version));
                        dm.insert("Repository".into(), s(&d.repository));
                        dm.insert("Condition".into(), s(&d.condition));
                        dm.insert("Tags".into(), sl(&d.tags));
                        dm.insert("Enabled".into(), Value::Bool(d.enabled));
                        dm.insert("ImportValues".into(), Value::list(d.import_values.clone()));
                        dm.insert("Alias".into(), s(&d.alias));
                        Value::map(dm)
                    })
                    .collect(),
            ),
        );
        m.insert("Type".into(), s(&self.chart_type));
        m.insert("IsRoot".into(), Value::Bool(is_root));
        Value::map(m)
    }
}
