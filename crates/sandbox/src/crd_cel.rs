//! `x-kubernetes-validations`: CEL rules of a CRD schema, compiled once when
//! the CRD is written and evaluated on every write of its custom resources,
//! as apiextensions-apiserver does (`self`, `oldSelf` for transition rules,
//! `message`, `messageExpression`, `reason`, `fieldPath`).

use serde_json::Value;
use std::sync::Arc;

#[derive(Debug)]
pub struct Rule {
    pub rule: String,
    pub message: String,
    pub message_expression: Option<Arc<cel::Program>>,
    pub reason: Option<String>,
    /// `fieldPath` without its leading dot (`.a.b` -> `a.b`).
    pub field_path: String,
    pub program: Arc<cel::Program>,
    /// A transition rule: evaluated only when an old value exists.
    pub uses_old_self: bool,
    pub optional_old_self: bool,
}

// Rules live in the registry, shared by the server's threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Rule>();
};

/// Compiles one `x-kubernetes-validations` entry; `at` names it in errors.
pub fn compile(v: &Value, at: &str) -> Result<Rule, String> {
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let rule = s("rule");
    if rule.trim().is_empty() {
        return Err(format!("{at}.rule: Required value"));
    }
    let program = cel::Program::compile(&rule)
        .map_err(|e| format!("{at}.rule: Invalid value: {rule:?}: compilation failed: {e}"))?;
    let message_expression = match v.get("messageExpression").and_then(Value::as_str) {
        Some(m) if !m.trim().is_empty() => Some(Arc::new(cel::Program::compile(m).map_err(
            |e| format!("{at}.messageExpression: Invalid value: {m:?}: messageExpression compilation failed: {e}"),
        )?)),
        _ => None,
    };
    let uses_old_self = program.references().has_variable("oldSelf");
    let field_path = s("fieldPath");
    Ok(Rule {
        message: s("message"),
        message_expression,
        reason: v.get("reason").and_then(Value::as_str).map(str::to_string),
        field_path: field_path
            .strip_prefix('.')
            .unwrap_or(&field_path)
            .to_string(),
        uses_old_self,
        optional_old_self: v.get("optionalOldSelf").and_then(Value::as_bool) == Some(true),
        program: Arc::new(program),
        rule,
    })
}

pub enum Outcome {
    Pass,
    /// The rule held false; the detail its error carries.
    Fail(String),
    /// Evaluation failed (no such key, no such overload, ...): the detail.
    Error(String),
}

fn context(this: &Value, old: Option<&Value>) -> cel::Context<'static, 'static> {
    let mut ctx = cel::Context::default();
    let _ = ctx.add_variable("self", this.clone());
    if let Some(o) = old {
        let _ = ctx.add_variable("oldSelf", o.clone());
    }
    ctx
}

/// The rule's own text for messages: its message when it has one.
pub fn rule_error_string(r: &Rule) -> String {
    if r.message.trim().is_empty() {
        r.rule.trim().to_string()
    } else {
        r.message.trim().to_string()
    }
}

fn message_or_default(r: &Rule) -> String {
    if r.message.trim().is_empty() {
        format!("failed rule: {}", rule_error_string(r))
    } else {
        r.message.trim().to_string()
    }
}

pub fn evaluate(r: &Rule, this: &Value, old: Option<&Value>) -> Outcome {
    let ctx = context(this, old);
    match r.program.execute(&ctx) {
        Ok(cel::Value::Bool(true)) => Outcome::Pass,
        Ok(cel::Value::Bool(false)) => {
            let detail = r
                .message_expression
                .as_ref()
                .and_then(|m| match m.execute(&ctx) {
                    Ok(cel::Value::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| message_or_default(r));
            Outcome::Fail(detail)
        }
        // What cel-go would have refused at compile time or evaluates
        // otherwise (Kubernetes' library functions, heterogeneous numbers,
        // ...) cannot be judged here: the rule is skipped rather than
        // refusing an object a real server accepts.
        Ok(_) => Outcome::Pass,
        Err(cel::ExecutionError::NoSuchKey(k)) => Outcome::Error(format!(
            "no such key: {k} evaluating rule: {}",
            rule_error_string(r)
        )),
        Err(cel::ExecutionError::DivisionByZero(_)) => Outcome::Error(format!(
            "division by zero evaluating rule: {}",
            rule_error_string(r)
        )),
        Err(cel::ExecutionError::RemainderByZero(_)) => Outcome::Error(format!(
            "modulus by zero evaluating rule: {}",
            rule_error_string(r)
        )),
        Err(_) => Outcome::Pass,
    }
}
