//! The OLM bundle's ClusterServiceVersion and annotations, from the same
//! pieces as the other install paths (shipping.rs).

use super::PackagingError;
use crate::operator::model::catalog::Catalog;
use crate::packaging::shipping::{self, NAME};
use serde_json::{json, Value};

pub const CHANNEL: &str = "alpha";
pub const MIN_KUBE_VERSION: &str = "1.28.0";

pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `bundle/metadata/annotations.yaml`, and the same as bundle.Dockerfile labels.
pub fn bundle_annotations() -> Value {
    json!({
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": NAME,
        "operators.operatorframework.io.bundle.channels.v1": CHANNEL,
        "operators.operatorframework.io.bundle.channel.default.v1": CHANNEL,
    })
}

/// One example per kind a user creates, as `alm-examples` shows them.
pub fn examples() -> Vec<Value> {
    let g = format!("{}/v1alpha1", crate::operator::api::GROUP);
    let ex = |kind: &str, name: &str, namespaced: bool, spec: Value| {
        let mut metadata = json!({"name": name});
        if namespaced {
            metadata["namespace"] = json!("team-a");
        }
        json!({"apiVersion": g, "kind": kind, "metadata": metadata, "spec": spec})
    };
    vec![
        ex(
            "PostgresCluster",
            "app-db",
            true,
            json!({"mode": "managed", "managed": {"instances": 1, "storage": {"size": "1Gi"}, "database": "app", "owner": "app"}}),
        ),
        ex(
            "ClickHouseCluster",
            "analytics",
            true,
            json!({"type": "clickhouse", "mode": "managed", "managed": {"shards": 1, "replicas": 1, "storage": {"size": "10Gi"}, "keeper": {"replicas": 1}}}),
        ),
        ex(
            "Gateway",
            "team-gw",
            true,
            json!({"postgresClusterRef": {"name": "app-db"}, "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}, "replicas": 1,
            "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}}]}),
        ),
        ex(
            "ChatUI",
            "web",
            true,
            json!({"gatewayRef": {"name": "team-gw"}, "replicas": 1}),
        ),
        ex(
            "MeilisearchInstance",
            "search",
            true,
            json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}, "persistence": {"size": "10Gi"}}),
        ),
        ex(
            "Observability",
            "traces",
            true,
            json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"}}),
        ),
        ex(
            "SecretsManagement",
            "vault",
            false,
            json!({"vault": {"server": "https://vault.example:8200", "path": "secret", "version": "v2",
            "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}}),
        ),
    ]
}

pub fn csv(catalog: &Catalog, cluster_role: &Value, image: &str) -> Result<Value, PackagingError> {
    let crds = shipping::crds();
    let mut owned = Vec::new();
    for (name, crd) in &crds {
        let kind = crd
            .pointer("/spec/names/kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = crd
            .pointer("/spec/versions/0/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let facts = crate::operator::api::Kind::parse(kind)
            .ok_or_else(|| PackagingError::UnknownCrdKind(kind.to_string()))?
            .facts();
        let (display, description) = (facts.display_name, facts.description);
        owned.push(json!({"name": name, "version": version, "kind": kind, "displayName": display, "description": description}));
    }
    let mut related: Vec<Value> = shipping::related_images(catalog)
        .into_iter()
        .map(|(n, r)| json!({"name": n.rsplit('/').next().unwrap_or(&n).replace('.', "-"), "image": r}))
        .collect();
    related.insert(0, json!({"name": NAME, "image": image}));
    let deployment = shipping::deployment(image, shipping::NAMESPACE, catalog);
    let features = [
        ("disconnected", "true"),
        ("fips-compliant", "false"),
        ("proxy-aware", "false"),
        ("tls-profiles", "false"),
        ("token-auth-aws", "false"),
        ("token-auth-azure", "false"),
        ("token-auth-gcp", "false"),
        ("cnf", "false"),
        ("cni", "false"),
        ("csi", "false"),
    ];
    let mut annotations = json!({
        "alm-examples": serde_json::to_string_pretty(&examples()).unwrap(),
        "capabilities": "Basic Install",
        "categories": "AI/Machine Learning, Database",
        "containerImage": image,
        "description": "Installs and runs an AI platform's building blocks from pinned Helm charts, without Helm.",
        "operatorframework.io/suggested-namespace": shipping::NAMESPACE,
        "repository": "https://github.com/scigility/navique-ai-core-operator",
        "support": "Navique",
    });
    for (k, v) in features {
        annotations[format!("features.operators.openshift.io/{k}")] = json!(v);
    }
    Ok(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": format!("{NAME}.v{}", version()), "namespace": "placeholder", "annotations": annotations},
        "spec": {
            "displayName": "Navique AI Core Operator",
            "description": "The Navique AI Core Operator installs the capability operators an AI platform needs (cert-manager, CloudNativePG, the ClickHouse operators, the LiteLLM operator, external-secrets) when a resource needs them, adopts those already installed, and runs chat-ui, Meilisearch and Langfuse, all from charts pinned by digest in the operator, without Helm. Releases it makes are Helm releases: `helm list` shows them.\n\nFor disconnected clusters every image it can deploy is listed in relatedImages by digest. A private, authenticated mirror: name its pull secrets (type kubernetes.io/dockerconfigjson, in the operator's namespace) in the Subscription's spec.config.env as NAVIQUE_IMAGE_PULL_SECRETS (comma-separated); the operator copies them wherever it deploys and adds them to every pod it deploys.",
            "version": version(),
            "minKubeVersion": MIN_KUBE_VERSION,
            "maturity": CHANNEL,
            "provider": {"name": "Navique"},
            "maintainers": [{"name": "Navique", "email": "support@navique.invalid"}],
            "links": [{"name": "Documentation", "url": "https://github.com/scigility/navique-ai-core-operator/tree/main/docs"}],
            "keywords": ["ai", "llm", "postgresql", "clickhouse", "helm"],
            "installModes": [
                {"type": "OwnNamespace", "supported": true},
                {"type": "SingleNamespace", "supported": true},
                {"type": "MultiNamespace", "supported": false},
                {"type": "AllNamespaces", "supported": true},
            ],
            "customresourcedefinitions": {"owned": owned},
            "install": {"strategy": "deployment", "spec": {
                "clusterPermissions": [{"serviceAccountName": NAME, "rules": cluster_role["rules"]}],
                "permissions": [{"serviceAccountName": NAME, "rules": [
                    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "get", "list", "patch", "update", "watch"]},
                    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
                ]}],
                "deployments": [{"name": NAME, "label": shipping::labels(), "spec": deployment["spec"]}],
            }},
            "relatedImages": related,
        },
    }))
}
