//! `navique-operator template`: Helm's `helm template` on our engine.

use super::args::Args;
use crate::chart::manifest::{sort_manifests, source_pieces};
use crate::chart::render::{
    render_chart, Capabilities, KubeVersion, ReleaseOptions, RenderOptions,
};
use crate::chart::strvals::{parse_into, Mode};
use crate::chart::values::merge_maps;
use crate::value::{Map, Value};
use std::path::Path;

pub const USAGE: &str = "usage: navique-operator template [NAME] CHART [flags]";

/// Build the user values from -f, --set-json, --set, --set-string, --set-file, --set-literal.
pub fn user_values(a: &Args) -> Result<Map, String> {
    let mut base = Map::new();
    for f in a.all(&["-f", "--values"]) {
        // Go reads the bytes: go-yaml's reader words what is not UTF-8.
        let bytes = if f == "-" {
            let mut s = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut s).map_err(|e| e.to_string())?;
            s
        } else {
            std::fs::read(&f).map_err(|e| {
                format!(
                    "open {f}: {}",
                    match e.kind() {
                        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
                        _ => e.to_string(),
                    }
                )
            })?
        };
        let text = crate::value::gostr::from_vec(bytes);
        let m =
            crate::goyaml::load_values(&text).map_err(|e| format!("failed to parse {f}: {e}"))?;
        merge_maps(&mut base, m);
    }
    for s in a.all(&["--set-json"]) {
        // Helm v4: a value that is a JSON object is merged whole; anything
        // else is key=json. Neither error says more than the value.
        if s.trim().starts_with('{') {
            match crate::goyaml::json::decode(s.trim()) {
                Ok(Value::Map(m, _)) => {
                    let m = m.borrow().clone();
                    merge_maps(&mut base, m);
                }
                _ => return Err(format!("failed parsing --set-json data JSON: {s}")),
            }
        } else {
            parse_into(&s, &mut base, Mode::Json)
                .map_err(|_| format!("failed parsing --set-json data {s}"))?;
        }
    }
    for s in a.all(&["--set"]) {
        parse_into(&s, &mut base, Mode::Typed)
            .map_err(|e| format!("failed parsing --set data: {e}"))?;
    }
    for s in a.all(&["--set-string"]) {
        parse_into(&s, &mut base, Mode::String)
            .map_err(|e| format!("failed parsing --set-string data: {e}"))?;
    }
    for s in a.all(&["--set-file"]) {
        // key=path: the value is the file's content.
        let (k, p) = s
            .split_once('=')
            .ok_or_else(|| format!("failed parsing --set-file data: key {s:?} has no value"))?;
        let content = std::fs::read_to_string(p)
            .map_err(|e| format!("failed parsing --set-file data: open {p}: {e}"))?;
        let mut tmp = Map::new();
        parse_into(&format!("{k}=x"), &mut tmp, Mode::String)
            .map_err(|e| format!("failed parsing --set-file data: {e}"))?;
        set_leaf(&mut tmp, Value::string(content));
        merge_maps(&mut base, tmp);
    }
    for s in a.all(&["--set-literal"]) {
        parse_into(&s, &mut base, Mode::Literal)
            .map_err(|e| format!("failed parsing --set-literal data: {e}"))?;
    }
    Ok(base)
}

/// Puts `v` at the single path a one-key `--set-file` expression made.
fn set_leaf(m: &mut Map, v: Value) {
    let Some((_, val)) = m.iter_mut().next() else {
        return;
    };
    match val {
        Value::Map(inner, _) => {
            let mut i = inner.borrow().clone();
            set_leaf(&mut i, v);
            *val = Value::map(i);
        }
        other => *other = v,
    }
}

pub fn run(a: &Args) -> Result<(), String> {
    crate::par::one_shot();
    let pos = &a.positional;
    if pos.is_empty() {
        return Err(format!(
            "\"navique-operator template\" requires at least 1 argument\n\n{USAGE}"
        ));
    }
    let (name, chart_path) = name_and_chart(a)?;
    let namespace = a
        .one(&["-n", "--namespace"])
        .unwrap_or_else(|| "default".into());
    // Helm's runInstall: locate the chart, merge the values, load, check
    // that it is installable and that its dependencies are present; the
    // release name is checked after all that (Install.availableName).
    if !Path::new(&chart_path).exists() {
        crate::chart::load_chart(Path::new(&chart_path)).map_err(|e| e.to_string())?;
    }
    let user = user_values(a)?;
    let chart = crate::chart::load_chart(Path::new(&chart_path)).map_err(|e| e.to_string())?;
    if chart.is_library() {
        return Err("library charts are not installable".into());
    }
    crate::chart::check_dependencies(&chart)
        .map_err(|e| crate::chart::DependencyError(e).to_string())?;
    crate::chart::validate_release_name(&name).map_err(|e| {
        format!(
            "release name check failed: release name {}: {e}",
            crate::gotmpl::format::quote_go(&name)
        )
    })?;
    let mut caps = Capabilities::default();
    if let Some(kv) = a.one(&["--kube-version"]) {
        caps.kube_version = KubeVersion::parse(&kv).map_err(|e| e.to_string())?;
    }
    for av in a.all(&["--api-versions", "-a"]) {
        for v in av.split(',') {
            let v = v.trim();
            if !v.is_empty() {
                caps.api_versions.push(v.to_string());
            }
        }
    }
    let is_upgrade = a.flag("--is-upgrade");
    let opts = RenderOptions {
        release: ReleaseOptions {
            name,
            namespace,
            revision: 1,
            is_install: !is_upgrade,
            is_upgrade,
        },
        capabilities: caps,
        lookup: None,
        strict: false,
        skip_schema_validation: a.flag("--skip-schema-validation"),
    };
    // Errors rendering resources come with a release holding what was
    // rendered: Helm's template command then points at --debug.
    const DEBUG_HINT: &str = "\n\nUse --debug flag to render out invalid YAML";
    let mut rendered = render_chart(&chart, &user, &opts).map_err(|e| {
        if !e.while_rendering_resources() {
            e.to_string()
        } else if a.flag("--debug") {
            // The release holds an empty manifest: --debug prints it.
            println!();
            e.to_string()
        } else {
            format!("{e}{DEBUG_HINT}")
        }
    })?;
    let debug = a.flag("--debug");
    let files = std::mem::take(&mut rendered.files);
    // With --debug Helm prints what was rendered before the error (every
    // file that is not blank; Go's map order, here the files' order).
    let blob = debug.then(|| {
        files
            .iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(name, text)| format!("---\n# Source: {name}\n{text}\n"))
            .collect::<String>()
    });
    let sorted = match sort_manifests(files, rendered.chart.name()) {
        Ok(sorted) => sorted,
        Err(e) => {
            if let Some(blob) = blob {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let text = format!("{}\n", blob.trim());
                out.write_all(&crate::value::gostr::to_bytes(&text))
                    .and_then(|_| out.flush())
                    .map_err(|e| e.to_string())?;
                return Err(e.to_string());
            }
            return Err(format!("{e}{DEBUG_HINT}"));
        }
    };
    let crds: Vec<(String, String)> = if a.flag("--include-crds") && !a.flag("--skip-crds") {
        crd_objects(&rendered.chart, None)
            .into_iter()
            .map(|(path, data)| (path, String::from_utf8_lossy(&data).into_owned()))
            .collect()
    } else {
        Vec::new()
    };
    // The output is written piece by piece as Helm's string would read: a
    // chart's manifest can be megabytes, and every whole copy of it costs.
    let mut pieces: Vec<&str> = Vec::new();
    for (path, text) in &crds {
        pieces.extend(source_pieces(path, text));
    }
    for m in &sorted.manifests {
        pieces.extend(source_pieces(&m.path, &m.content));
    }
    trim_pieces(&mut pieces);
    pieces.push("\n");
    let skip_tests = a.flag("--skip-tests");
    if !a.flag("--no-hooks") {
        for h in &sorted.hooks {
            if skip_tests && h.events.iter().any(|e| e == "test") {
                continue;
            }
            pieces.extend(source_pieces(&h.path, &h.manifest));
        }
    }
    let show_only = a.all(&["--show-only", "-s"]);
    let output_dir = a.one(&["--output-dir"]);
    if show_only.is_empty() && output_dir.is_none() {
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
        // The Go string's bytes: a byte that is not UTF-8 goes out as it
        // came (a manifest never read past `...` may hold one).
        for p in pieces {
            w.write_all(&crate::value::gostr::to_bytes(&p))
                .map_err(|e| e.to_string())?;
        }
        return w.flush().map_err(|e| e.to_string());
    }
    let mut out = pieces.concat();
    if !show_only.is_empty() {
        out = filter_show_only(&out, &show_only)?;
    }
    if let Some(dir) = output_dir {
        write_output_dir(&out, &dir)?;
        return Ok(());
    }
    use std::io::Write;
    std::io::stdout()
        .write_all(&crate::value::gostr::to_bytes(&out))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Helm's Install.NameAndChart for `helm template` (its ReleaseName is
/// "release-name"): two arguments are a name and a chart, one a chart named
/// by `--name-template` when given.
fn name_and_chart(a: &Args) -> Result<(String, String), String> {
    let pos = &a.positional;
    let name_template = a.one(&["--name-template"]).unwrap_or_default();
    if pos.len() > 2 {
        return Err(format!(
            "expected at most two arguments, unexpected arguments: {}",
            pos[2..].join(", ")
        ));
    }
    if pos.len() == 2 {
        if a.flag("--generate-name") || a.flag("-g") {
            return Err("cannot set --generate-name and also specify a name".into());
        }
        if !name_template.is_empty() {
            return Err("cannot set --name-template and also specify a name".into());
        }
        return Ok((pos[0].clone(), pos[1].clone()));
    }
    if !name_template.is_empty() {
        let name =
            crate::gotmpl::render_name_template(&name_template).map_err(|e| e.to_string())?;
        return Ok((name, pos[0].clone()));
    }
    Ok(("release-name".into(), pos[0].clone()))
}

/// Trims the text the pieces make up together, as `str::trim` trims it.
fn trim_pieces(pieces: &mut Vec<&str>) {
    while let Some(first) = pieces.first_mut() {
        *first = first.trim_start();
        if !first.is_empty() {
            break;
        }
        pieces.remove(0);
    }
    while let Some(last) = pieces.last_mut() {
        *last = last.trim_end();
        if !last.is_empty() {
            break;
        }
        pieces.pop();
    }
}

fn crd_objects(c: &crate::chart::Chart, parent: Option<&str>) -> Vec<(String, Vec<u8>)> {
    let full = match parent {
        None => c.name().to_string(),
        Some(p) => format!("{p}/charts/{}", c.name()),
    };
    let mut out: Vec<(String, Vec<u8>)> = c
        .crd_files()
        .into_iter()
        .map(|f| (format!("{full}/{}", f.name), f.data.to_vec()))
        .collect();
    for d in &c.dependencies {
        out.extend(crd_objects(d, Some(&full)));
    }
    out
}

fn split_sources(out: &str) -> Vec<(String, String)> {
    let mut docs = Vec::new();
    for part in out.split("---\n# Source: ").skip(1) {
        let (src, _) = part.split_once('\n').unwrap_or((part, ""));
        docs.push((src.to_string(), format!("---\n# Source: {part}")));
    }
    docs
}

/// What `# Source: [^/]+/(.+)` captures in a document (Go's leftmost
/// match: `[^/]+` crosses newlines, `.+` does not and needs a character).
fn show_only_name(doc: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(i) = doc[from..].find("# Source: ") {
        let start = from + i + "# Source: ".len();
        if let Some(slash) = doc[start..].find('/') {
            if slash > 0 {
                let rest = &doc[start + slash + 1..];
                let line = rest.split('\n').next().unwrap_or("");
                if !line.is_empty() {
                    return Some(line);
                }
            }
        }
        from = from + i + 1;
    }
    None
}

/// `--show-only`, as Helm's template command does it: the whole output is
/// split into documents again (SplitManifests: a `---` inside a document
/// splits it too), each document named by its first `# Source:` line
/// without the chart's name is matched with filepath.Match against each
/// pattern in turn, and every match is printed as `---\n<document>\n`.
fn filter_show_only(out: &str, show: &[String]) -> Result<String, String> {
    let docs = crate::chart::manifest::split_documents(out);
    let mut res = String::new();
    let mut chosen: Vec<&str> = Vec::new();
    for f in show {
        let mut missing = true;
        for d in &docs {
            let Some(name) = show_only_name(d) else {
                continue;
            };
            if !crate::chart::load::glob_match(f, name) {
                continue;
            }
            chosen.push(d);
            missing = false;
        }
        if missing {
            return Err(format!("could not find template {f} in chart"));
        }
    }
    for d in chosen {
        res.push_str("---\n");
        res.push_str(d);
        res.push('\n');
    }
    Ok(res)
}

fn write_output_dir(out: &str, dir: &str) -> Result<(), String> {
    let mut written = std::collections::HashSet::new();
    for (src, text) in split_sources(out) {
        let path = Path::new(dir).join(&src);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        use std::io::Write;
        let append = !written.insert(path.clone());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .map_err(|e| e.to_string())?;
        let body = text.splitn(3, '\n').nth(2).unwrap_or("");
        f.write_all(&crate::value::gostr::to_bytes(&format!(
            "---\n# Source: {src}\n{body}"
        )))
        .map_err(|e| e.to_string())?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::trim_pieces;

    #[test]
    fn trimming_pieces_is_trimming_what_they_make_together() {
        let cases: &[&[&str]] = &[
            &[" \n", "\t", " a ", "b", " \n"],
            &["---\n# Source: x\n", "kind: A", "\n", "", " \n"],
            &["  ", " "],
            &[],
            &["\u{a0}x\u{2003}", "\u{3000}"],
        ];
        for case in cases {
            let mut pieces = case.to_vec();
            trim_pieces(&mut pieces);
            assert_eq!(pieces.concat(), case.concat().trim(), "{case:?}");
        }
    }
}
