//! Release storage in Secrets (Helm's default driver), with read support for
//! the ConfigMap driver.

use super::codec;
use super::model::{Release, Status};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::ByteString;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};
use std::collections::BTreeMap;

pub const SECRET_TYPE: &str = "helm.sh/release.v1";
/// Labels the drivers own; everything else on the object is the release's.
pub const SYSTEM_LABELS: &[&str] = &[
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];
/// Release objects per page when listing them as metadata.
const LIST_PAGE: u32 = 500;
/// What etcd and the API server accept for one object.
pub const MAX_OBJECT_BYTES: usize = 1 << 20;

#[derive(Debug)]
pub enum StorageError {
    Kube(kube::Error),
    Corrupt {
        object: String,
        reason: codec::DecodeError,
    },
    TooLarge {
        release: String,
        version: i64,
        bytes: usize,
    },
    NotFound(String),
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Kube(e) => write!(f, "{e}"),
            StorageError::Corrupt { object, reason } => write!(f, "release object {object}: {reason}"),
            StorageError::TooLarge { release, version, bytes } => write!(
                f,
                "release {release} v{version} is {bytes} bytes once encoded, more than a Secret can hold ({MAX_OBJECT_BYTES} bytes); nothing was applied"
            ),
            StorageError::NotFound(name) => write!(f, "release: not found: {name}"),
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StorageError::Kube(e) => Some(e),
            StorageError::Corrupt { reason, .. } => Some(reason),
            StorageError::TooLarge { .. } | StorageError::NotFound(_) => None,
        }
    }
}

impl From<kube::Error> for StorageError {
    fn from(e: kube::Error) -> Self {
        StorageError::Kube(e)
    }
}

pub fn key(name: &str, version: i64) -> String {
    format!("sh.helm.release.v1.{name}.v{version}")
}

fn custom_labels(labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels
        .iter()
        .filter(|(k, _)| !SYSTEM_LABELS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn from_payload(
    object: &str,
    labels: Option<&BTreeMap<String, String>>,
    payload: &str,
) -> Result<Release, StorageError> {
    let mut r = codec::decode(payload).map_err(|reason| StorageError::Corrupt {
        object: object.to_string(),
        reason,
    })?;
    if let Some(l) = labels {
        r.labels = custom_labels(l);
    }
    Ok(r)
}

pub fn release_from_secret(s: &Secret) -> Result<Release, StorageError> {
    let name = s.metadata.name.clone().unwrap_or_default();
    let data = s
        .data
        .as_ref()
        .and_then(|d| d.get("release"))
        .ok_or_else(|| StorageError::Corrupt {
            object: name.clone(),
            reason: codec::DecodeError::NoData,
        })?;
    let text = String::from_utf8_lossy(&data.0);
    from_payload(&name, s.metadata.labels.as_ref(), &text)
}

pub fn release_from_configmap(c: &ConfigMap) -> Result<Release, StorageError> {
    let name = c.metadata.name.clone().unwrap_or_default();
    let text = c
        .data
        .as_ref()
        .and_then(|d| d.get("release"))
        .ok_or_else(|| StorageError::Corrupt {
            object: name.clone(),
            reason: codec::DecodeError::NoData,
        })?;
    from_payload(&name, c.metadata.labels.as_ref(), text)
}

/// The Secret Helm writes for `r`; `created` picks the createdAt or
/// modifiedAt label as Helm's Create and Update do.
pub fn secret_for(
    r: &Release,
    created: bool,
    annotations: &BTreeMap<String, String>,
) -> Result<Secret, StorageError> {
    let payload = codec::encode(r);
    if payload.len() + 4096 > MAX_OBJECT_BYTES {
        return Err(StorageError::TooLarge {
            release: r.name.clone(),
            version: r.version,
            bytes: payload.len(),
        });
    }
    let mut labels = custom_labels(&r.labels);
    let now = chrono::Utc::now().timestamp().to_string();
    labels.insert(if created { "createdAt" } else { "modifiedAt" }.into(), now);
    labels.insert("name".into(), r.name.clone());
    labels.insert("owner".into(), "helm".into());
    labels.insert("status".into(), r.info.status.as_str().into());
    labels.insert("version".into(), r.version.to_string());
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(key(&r.name, r.version)),
            namespace: Some(r.namespace.clone()),
            labels: Some(labels),
            annotations: if annotations.is_empty() {
                None
            } else {
                Some(annotations.clone())
            },
            ..Default::default()
        },
        type_: Some(SECRET_TYPE.into()),
        data: Some([("release".to_string(), ByteString(payload.into_bytes()))].into()),
        ..Default::default()
    })
}

/// Releases of one namespace (or all), from Secrets and ConfigMaps.
pub struct Storage {
    client: kube::Client,
    namespace: String,
    /// Annotations put on every Secret this storage writes.
    pub annotations: BTreeMap<String, String>,
}

impl Storage {
    pub fn new(client: kube::Client, namespace: &str) -> Storage {
        Storage {
            client,
            namespace: namespace.to_string(),
            annotations: BTreeMap::new(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Every release matching `selector` (plus `owner=helm`).
    pub async fn query(
        &self,
        all_namespaces: bool,
        selector: &str,
    ) -> Result<Vec<Release>, StorageError> {
        let sel = if selector.is_empty() {
            "owner=helm".to_string()
        } else {
            format!("owner=helm,{selector}")
        };
        let lp = ListParams::default().labels(&sel);
        let (secrets, configmaps): (Api<Secret>, Api<ConfigMap>) = if all_namespaces {
            (Api::all(self.client.clone()), Api::all(self.client.clone()))
        } else {
            (
                self.secrets(),
                Api::namespaced(self.client.clone(), &self.namespace),
            )
        };
        // A release record that does not decode (written by someone else,
        // cut short, corrupted) is skipped with a warning, as Helm's drivers
        // skip it: one bad record must not hide every other release.
        let mut out = Vec::new();
        let mut keep = |r: Result<Release, StorageError>, ns: Option<String>| match r {
            Ok(r) => out.push(r),
            Err(e) => tracing::warn!(
                namespace = ns.unwrap_or_default(),
                "skipping a release record: {e}"
            ),
        };
        for s in secrets.list(&lp).await?.items {
            if s.type_.as_deref() == Some(SECRET_TYPE) {
                keep(release_from_secret(&s), s.metadata.namespace.clone());
            }
        }
        for c in configmaps.list(&lp).await?.items {
            keep(release_from_configmap(&c), c.metadata.namespace.clone());
        }
        out.sort_by(|a, b| {
            (a.namespace.as_str(), a.name.as_str(), a.version).cmp(&(
                b.namespace.as_str(),
                b.name.as_str(),
                b.version,
            ))
        });
        Ok(out)
    }

    /// The newest revision of every release, for `list`: release objects
    /// are listed as metadata only, in pages, and a body is read only for
    /// each release's newest revision (whose labels pass `shown`), decoded,
    /// stripped to what a listing shows and dropped: memory stays that of a
    /// few releases whatever their number. A record whose labels do not say
    /// its name and revision is read whole to find out; a newest revision
    /// that does not decode gives way to the one before it.
    pub async fn latest(
        &self,
        all_namespaces: bool,
        shown: impl Fn(&str) -> bool,
    ) -> Result<Vec<Release>, StorageError> {
        let (secrets, configmaps): (Api<Secret>, Api<ConfigMap>) = if all_namespaces {
            (Api::all(self.client.clone()), Api::all(self.client.clone()))
        } else {
            (
                self.secrets(),
                Api::namespaced(self.client.clone(), &self.namespace),
            )
        };
        // (namespace, release) -> its revisions: (revision, status label,
        // object name, in a Secret)
        let mut revisions: BTreeMap<(String, String), Vec<(i64, String, String, bool)>> =
            BTreeMap::new();
        let mut unlabelled: Vec<(String, String, bool)> = Vec::new();
        for secret_driver in [true, false] {
            let mut lp = ListParams::default().labels("owner=helm").limit(LIST_PAGE);
            loop {
                let (items, next) = if secret_driver {
                    let page = secrets.list_metadata(&lp).await?;
                    let items: Vec<ObjectMeta> =
                        page.items.into_iter().map(|i| i.metadata).collect();
                    (items, page.metadata.continue_)
                } else {
                    let page = configmaps.list_metadata(&lp).await?;
                    let items: Vec<ObjectMeta> =
                        page.items.into_iter().map(|i| i.metadata).collect();
                    (items, page.metadata.continue_)
                };
                for meta in &items {
                    let ns = meta.namespace.clone().unwrap_or_default();
                    let object = meta.name.clone().unwrap_or_default();
                    let label = |k: &str| meta.labels.as_ref().and_then(|l| l.get(k)).cloned();
                    match (
                        label("name"),
                        label("version").and_then(|v| v.parse::<i64>().ok()),
                    ) {
                        (Some(name), Some(version)) => {
                            let status = label("status").unwrap_or_default();
                            revisions.entry((ns, name)).or_default().push((
                                version,
                                status,
                                object,
                                secret_driver,
                            ));
                        }
                        _ => unlabelled.push((ns, object, secret_driver)),
                    }
                }
                match next.filter(|c| !c.is_empty()) {
                    Some(c) => lp = lp.continue_token(&c),
                    None => break,
                }
            }
        }
        let read = |ns: String, object: String, secret_driver: bool| {
            let (secrets, configmaps) = (
                Api::<Secret>::namespaced(self.client.clone(), &ns),
                Api::<ConfigMap>::namespaced(self.client.clone(), &ns),
            );
            async move {
                if secret_driver {
                    match secrets.get_opt(&object).await? {
                        Some(s) if s.type_.as_deref() == Some(SECRET_TYPE) => {
                            Ok(Some(release_from_secret(&s)))
                        }
                        _ => Ok(None),
                    }
                } else {
                    Ok::<_, StorageError>(
                        configmaps
                            .get_opt(&object)
                            .await?
                            .map(|c| release_from_configmap(&c)),
                    )
                }
            }
        };
        let mut out: BTreeMap<(String, String), Release> = BTreeMap::new();
        fn keep(
            out: &mut BTreeMap<(String, String), Release>,
            r: Result<Release, StorageError>,
            ns: &str,
        ) {
            match r {
                Ok(mut r) => {
                    r.strip_to_summary();
                    let k = (r.namespace.clone(), r.name.clone());
                    if out.get(&k).is_none_or(|x| x.version < r.version) {
                        out.insert(k, r);
                    }
                }
                Err(e) => tracing::warn!(namespace = ns, "skipping a release record: {e}"),
            }
        }
        for (ns, object, secret_driver) in unlabelled {
            if let Some(r) = read(ns.clone(), object, secret_driver).await? {
                keep(&mut out, r, &ns);
            }
        }

        for ((ns, name), mut revs) in revisions {
            let key = (ns.clone(), name.clone());
            revs.sort_by_key(|r| std::cmp::Reverse(r.0));
            // Newest first; a record that does not decode is skipped (as
            // Helm skips it) and the next older one stands for the release.
            for (version, status, object, secret_driver) in revs {
                if out.get(&key).is_some_and(|r| r.version > version) {
                    break;
                }
                if !shown(&status) {
                    // The state mask applies to the newest revision only.
                    out.remove(&key);
                    break;
                }
                match read(ns.clone(), object, secret_driver).await? {
                    Some(Ok(r)) => {
                        keep(&mut out, Ok(r), &ns);
                        break;
                    }
                    Some(Err(e)) => keep(&mut out, Err(e), &ns),
                    None => {}
                }
            }
        }
        out.retain(|_, r| shown(r.info.status.as_str()));
        Ok(out.into_values().collect())
    }

    /// All revisions of a release, oldest first.
    pub async fn history(&self, name: &str) -> Result<Vec<Release>, StorageError> {
        self.query(false, &format!("name={name}")).await
    }

    pub async fn get(&self, name: &str, version: i64) -> Result<Release, StorageError> {
        self.history(name)
            .await?
            .into_iter()
            .find(|r| r.version == version)
            .ok_or_else(|| StorageError::NotFound(format!("{name} revision {version}")))
    }

    pub async fn last(&self, name: &str) -> Result<Option<Release>, StorageError> {
        Ok(self
            .history(name)
            .await?
            .into_iter()
            .max_by_key(|r| r.version))
    }

    pub async fn deployed(&self, name: &str) -> Result<Option<Release>, StorageError> {
        Ok(self
            .history(name)
            .await?
            .into_iter()
            .filter(|r| r.info.status == Status::Deployed)
            .max_by_key(|r| r.version))
    }

    pub async fn create(&self, r: &Release) -> Result<(), StorageError> {
        let s = secret_for(r, true, &self.annotations)?;
        self.secrets().create(&PostParams::default(), &s).await?;
        Ok(())
    }

    /// Creates the Secret `secret_for(r, true, ..)` made (an action that
    /// encoded the record to check its size writes it as it is).
    pub async fn create_secret(&self, s: &Secret) -> Result<(), StorageError> {
        self.secrets().create(&PostParams::default(), s).await?;
        Ok(())
    }

    pub async fn update(&self, r: &Release) -> Result<(), StorageError> {
        let s = secret_for(r, false, &self.annotations)?;
        self.secrets()
            .replace(&key(&r.name, r.version), &PostParams::default(), &s)
            .await?;
        Ok(())
    }

    pub async fn delete(&self, name: &str, version: i64) -> Result<(), StorageError> {
        match self
            .secrets()
            .delete(&key(name, version), &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => {
                let cms: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
                cms.delete(&key(name, version), &DeleteParams::default())
                    .await?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Keeps at most `max` revisions (0: unbounded), deleting the oldest
    /// superseded ones first, as Helm's max-history does.
    pub async fn prune_history(&self, name: &str, max: usize) -> Result<(), StorageError> {
        if max == 0 {
            return Ok(());
        }
        let history = self.history(name).await?;
        if history.len() <= max {
            return Ok(());
        }
        let last_deployed = history
            .iter()
            .filter(|r| r.info.status == Status::Deployed)
            .map(|r| r.version)
            .max();
        let mut removable: Vec<&Release> = history
            .iter()
            .filter(|r| Some(r.version) != last_deployed)
            .collect();
        removable.sort_by_key(|r| r.version);
        for r in removable.into_iter().take(history.len() - max) {
            self.delete(&r.name, r.version).await?;
        }
        Ok(())
    }
}
