//! A Go `text/template` engine with Sprig's and Helm's functions, producing
//! the same bytes and errors as Helm v4.2.3. Pure: no I/O, no cluster.

pub mod error;
pub mod exec;
pub mod format;
pub mod funcs;
pub mod lex;
pub mod parse;
pub mod source;

pub use crate::value::{ListKind, Map, MapKind, Object, Value};
pub use error::Error;
pub use exec::{Exec, TemplateSet};

/// Parse one template text and execute it with `data`, Helm style
/// (`<no value>` erased). Convenience for tests and small uses.
pub fn render_str(name: &str, text: &str, data: Value) -> Result<String, Error> {
    let mut set = TemplateSet::new();
    set.parse(name, text)?;
    let mut exec = Exec::new(&set);
    let out = exec.execute(name, data)?;
    Ok(out.replace("<no value>", ""))
}
