//! Template errors, in Go's text/template wording and in the reshaped form
//! Helm v4 prints.

use std::fmt;

#[derive(Debug, Clone)]
pub enum Error {
    Parse(super::parse::ParseError),
    Exec(ExecError),
}

#[derive(Debug, Clone)]
pub struct ExecError {
    /// `file:line:col`; `None` when Go had no current node.
    pub location: Option<String>,
    /// Name of the template being executed.
    pub name: String,
    /// The node text Go shows between `<` and `>`.
    pub context: String,
    pub detail: Detail,
}

#[derive(Debug, Clone)]
pub enum Detail {
    /// An error raised by the executor itself (type errors, nil pointers...).
    Msg(String),
    /// A function returned an error.
    Call { func: String, cause: Box<Cause> },
    /// `fail` / `required`: Helm reports only the message and its location.
    Fail(String),
}

#[derive(Debug, Clone)]
pub enum Cause {
    /// Error from a nested template execution (`include`), kept as a chain.
    Exec(ExecError),
    Plain(String),
    Fail(String),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(
                f,
                "template: {}: executing {} at <{}>: ",
                loc,
                super::format::quote_go(&self.name),
                self.context
            )?,
            None => write!(f, "template: {}: ", self.name)?,
        }
        match &self.detail {
            Detail::Msg(m) => write!(f, "{m}"),
            Detail::Fail(m) => write!(f, "{m}"),
            Detail::Call { func, cause } => {
                write!(f, "error calling {func}: ")?;
                match cause.as_ref() {
                    Cause::Exec(e) => write!(f, "{e}"),
                    Cause::Plain(m) | Cause::Fail(m) => write!(f, "{m}"),
                }
            }
        }
    }
}

impl fmt::Display for Error {
    /// Go's own wording.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(p) => write!(f, "{p}"),
            Error::Exec(e) => write!(f, "{e}"),
        }
    }
}

impl ExecError {
    fn fail_message(&self) -> Option<&str> {
        match &self.detail {
            Detail::Fail(m) => Some(m),
            Detail::Call { cause, .. } => match cause.as_ref() {
                Cause::Exec(e) => e.fail_message(),
                Cause::Fail(m) => Some(m),
                Cause::Plain(_) => None,
            },
            Detail::Msg(_) => None,
        }
    }

    /// Helm v4 reshapes an error into its traced form only when every
    /// function link in the chain is `include` and the chain ends in an
    /// executor error (or include's own lookup failure).
    fn ends_in_engine_error(&self) -> bool {
        match &self.detail {
            Detail::Msg(_) => true,
            Detail::Fail(_) => false,
            Detail::Call { func, cause } => {
                func == "include"
                    && match cause.as_ref() {
                        Cause::Exec(e) => e.ends_in_engine_error(),
                        // Helm keeps reading the chain only through text that
                        // looks like another template error.
                        Cause::Plain(m) => m.starts_with("template: "),
                        Cause::Fail(_) => false,
                    }
            }
        }
    }

    fn write_traced(&self, out: &mut String) {
        if let Some(loc) = &self.location {
            out.push_str(loc);
            out.push_str("\n  ");
        }
        out.push_str(&format!(
            "executing {} at <{}>:\n    ",
            super::format::quote_go(&self.name),
            self.context
        ));
        match &self.detail {
            Detail::Msg(m) => {
                out.push_str(m);
                out.push('\n');
            }
            Detail::Fail(m) => {
                out.push_str(m);
                out.push('\n');
            }
            Detail::Call { func, cause } => {
                out.push_str(&format!("error calling {func}:\n"));
                match cause.as_ref() {
                    Cause::Exec(e) => e.write_traced(out),
                    Cause::Plain(m) | Cause::Fail(m) => {
                        out.push_str(m);
                        out.push('\n');
                    }
                }
            }
        }
    }

    /// The message Helm v4 reports for this error.
    pub fn helm_message(&self) -> String {
        if let Some(msg) = self.fail_message() {
            let loc = self.location.clone().unwrap_or_else(|| self.name.clone());
            return format!("execution error at ({loc}): {msg}");
        }
        if self.location.is_some() && self.ends_in_engine_error() {
            let mut out = String::new();
            self.write_traced(&mut out);
            return out.trim_end_matches('\n').to_string();
        }
        self.to_string()
    }
}

impl Error {
    /// The message Helm v4 reports for this error.
    pub fn helm_message(&self) -> String {
        match self {
            Error::Parse(p) => {
                // Helm keeps the location and the last ": "-separated token.
                let full = p.to_string();
                let tokens: Vec<&str> = full.split(": ").collect();
                format!(
                    "parse error at ({}): {}",
                    tokens[1],
                    tokens[tokens.len() - 1]
                )
            }
            Error::Exec(e) => e.helm_message(),
        }
    }
}

impl std::error::Error for Error {}
