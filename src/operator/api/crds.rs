//! The CRDs of every kind, generated from the Rust types: what the operator
//! applies on start, and what `navique-operator crds` writes into `crds/`
//! (`crate::packaging::crds`).

use crate::operator::api;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

pub fn all() -> Vec<CustomResourceDefinition> {
    api::Kind::ALL
        .into_iter()
        .map(api::Kind::generated_crd)
        .map(without_mode_branch_defaults)
        .map(capability_spec_optional)
        .collect()
}

/// A Capability needs no spec: the operator creates it without one (the
/// spec is the admin's, and a `spec: {}` applied by the operator would be
/// a field of ours in it).
fn capability_spec_optional(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    if crd.spec.names.kind != api::Kind::Capability.as_str() {
        return crd;
    }
    for version in &mut crd.spec.versions {
        let schema = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut());
        if let Some(schema) = schema {
            let required = schema.required.take().unwrap_or_default();
            let left: Vec<String> = required.into_iter().filter(|r| r != "spec").collect();
            schema.required = (!left.is_empty()).then_some(left);
        }
    }
    crd
}

/// The members of the mode union (`managed`, `adopt`, `external`) without
/// schema defaults: an API server stores a default as nobody's field, so a
/// server-side apply that switches `mode` and drops the old branch would
/// leave it holding its defaults, and the union's rule would refuse the
/// switch. The operator applies the same defaults when it reads a spec.
fn without_mode_branch_defaults(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("default");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(&crd).expect("a CRD serialises");
    for version in v["spec"]["versions"].as_array_mut().into_iter().flatten() {
        let spec = &mut version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        for branch in api::MODE_BRANCHES {
            if let Some(b) = spec.pointer_mut(&format!("/properties/{branch}")) {
                strip(b);
            }
        }
    }
    serde_json::from_value(v).expect("the CRD it was")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_the_navique_category_with_a_status_subresource() {
        for crd in all() {
            let names = &crd.spec.names;
            assert_eq!(
                names.categories.as_deref(),
                Some(&["navique".to_string()][..])
            );
            assert!(names.short_names.as_ref().is_some_and(|s| !s.is_empty()));
            let v = &crd.spec.versions[0];
            assert!(v
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some());
        }
    }

    #[test]
    fn no_default_inside_a_mode_branch() {
        for crd in all() {
            let v = serde_json::to_value(&crd).unwrap();
            let spec = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
            for branch in api::MODE_BRANCHES {
                let text = spec["properties"][branch].to_string();
                assert!(!text.contains("\"default\""), "{branch}: {text}");
            }
        }
    }

    #[test]
    fn short_names_clash_with_no_bundled_operator() {
        // ClickHouse Inc. uses chc/chk, Altinity chi/chit/chk/chop, Gateway API gtw.
        let taken = [
            "chc", "chk", "chi", "chit", "chop", "gtw", "cert", "certs", "cr", "crs",
        ];
        for crd in all() {
            for s in crd.spec.names.short_names.unwrap_or_default() {
                assert!(!taken.contains(&s.as_str()), "{s}");
            }
        }
    }
}
