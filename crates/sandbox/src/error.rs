//! API errors as Kubernetes' `Status` objects.

use crate::registry::ResourceType;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

fn details(t: &ResourceType, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": t.plural});
    if !t.group.is_empty() {
        d["group"] = json!(t.group);
    }
    d
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    pub fn not_found(t: &ResourceType, name: &str) -> ApiError {
        ApiError {
            details: Some(details(t, name)),
            ..ApiError::new(
                404,
                "NotFound",
                format!("{} {:?} not found", t.qualified(), name),
            )
        }
    }

    pub fn namespace_not_found(ns: &str) -> ApiError {
        ApiError {
            details: Some(json!({"name": ns, "kind": "namespaces"})),
            ..ApiError::new(404, "NotFound", format!("namespaces {ns:?} not found"))
        }
    }

    pub fn already_exists(t: &ResourceType, name: &str) -> ApiError {
        ApiError {
            details: Some(details(t, name)),
            ..ApiError::new(
                409,
                "AlreadyExists",
                format!("{} {:?} already exists", t.qualified(), name),
            )
        }
    }

    pub fn conflict(t: &ResourceType, name: &str, why: &str) -> ApiError {
        ApiError {
            details: Some(details(t, name)),
            ..ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} {:?}: {}",
                    t.qualified(),
                    name,
                    why
                ),
            )
        }
    }

    pub fn stale(t: &ResourceType, name: &str) -> ApiError {
        ApiError::conflict(t, name, "the object has been modified; please apply your changes to the latest version and try again")
    }

    /// apierrors.NewInvalid with one error: `Kind.group "name" is invalid:
    /// field: body`, details naming the kind (not the resource).
    pub fn invalid(t: &ResourceType, name: &str, why: &str) -> ApiError {
        let (field, body) = why.split_once(": ").unwrap_or(("", why));
        let cause = if body.starts_with("Required value") {
            "FieldValueRequired"
        } else {
            "FieldValueInvalid"
        };
        crate::admission::invalid(
            t,
            name,
            &[crate::admission::FieldError {
                cause,
                field: field.into(),
                body: body.into(),
            }],
        )
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(403, "Forbidden", message)
    }

    /// apierrors.NewForbidden: `pods "x" is forbidden: why`, details name,
    /// group and kind (the resource); admission names an object being
    /// created by its generateName when it has no name yet.
    pub fn forbidden_object(t: &ResourceType, name: &str, why: &str) -> ApiError {
        let message = if name.is_empty() {
            format!("{} is forbidden: {why}", t.qualified())
        } else {
            format!("{} {:?} is forbidden: {why}", t.qualified(), name)
        };
        ApiError {
            details: Some(details(t, name)),
            ..ApiError::forbidden(message)
        }
    }

    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // Errors that are not a Status reach clients without a reason.
        if self.reason.is_empty() {
            s.as_object_mut().expect("object").remove("reason");
        }
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}
