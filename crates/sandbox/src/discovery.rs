//! Discovery documents and the part of OpenAPI v3 that kubectl reads to learn
//! which query parameters (fieldValidation, dryRun) the server supports.

use crate::registry::{api_resource, Registry, ResourceType};
use serde_json::{json, Value};

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.0+navique-sandbox",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

pub fn core_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}]
    })
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs[0],
    })
}

pub fn group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg
        .groups()
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_doc(&g, &vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(reg: &Registry, name: &str) -> Option<Value> {
    let (_, vs) = reg.groups().into_iter().find(|(g, _)| g == name)?;
    let mut d = group_doc(name, &vs);
    d["kind"] = json!("APIGroup");
    d["apiVersion"] = json!("v1");
    Some(d)
}

pub fn resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = reg.types_in(group, version);
    if types.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let resources: Vec<Value> = types.iter().flat_map(|t| api_resource(t)).collect();
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

pub fn openapi_v3_index(reg: &Registry, generation: u64) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, vs) in reg.groups() {
        for v in vs {
            let p = gv_path(&g, &v);
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={generation:016X}")}),
            );
        }
    }
    json!({"paths": paths})
}

fn schema_name(t: &ResourceType, version: &str) -> String {
    let g = if t.group.is_empty() {
        "core".to_string()
    } else {
        t.group.clone()
    };
    format!("io.navique.sandbox.{g}.{version}.{}", t.kind)
}

/// A GroupVersion document: PATCH operations declaring the query parameters
/// the server honours, and an open schema per kind (no field validation).
pub fn openapi_v3_group(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = reg.types_in(group, version);
    if types.is_empty() {
        return None;
    }
    let base = gv_path(group, version);
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    let params = json!([
        {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
        {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
        {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
        {"name": "force", "in": "query", "schema": {"type": "boolean"}},
    ]);
    for t in types {
        let gvk = json!({"group": t.group, "version": version, "kind": t.kind});
        let name = schema_name(t, version);
        let path = if t.namespaced {
            format!("/{base}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
        } else {
            format!("/{base}/{}/{{name}}", t.plural)
        };
        let op = |verb: &str| {
            json!({
                "operationId": format!("{verb}{}", t.kind),
                "x-kubernetes-action": verb,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": params,
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}}}
            })
        };
        paths.insert(
            path,
            json!({
                "get": op("get"),
                "put": op("put"),
                "delete": op("delete"),
                "patch": op("patch"),
            }),
        );
        schemas.insert(
            name,
            json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [gvk],
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }
            }),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas}
    }))
}
