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

/// Helm's action.TemplateName (`--name-template`): the text parsed as template
/// "name-template" with Sprig's functions only (`env` and `expandenv`
/// included, Helm's own not) and executed with nil data, `<no value>` kept.
pub fn render_name_template(text: &str) -> Result<String, Error> {
    const NAME: &str = "name-template";
    let trees = parse::parse(NAME, NAME, text, &funcs::exists_in_sprig).map_err(Error::Parse)?;
    let mut set = TemplateSet::new();
    for t in trees {
        set.add(t);
    }
    let mut exec = Exec::new(&set);
    exec.execute(NAME, Value::Nil)
}
