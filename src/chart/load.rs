//! Loading a chart from a directory or a gzipped tarball, with Helm's
//! classification of files and its safety checks on archives.

use super::metadata::{parse_dependencies, Metadata};
use super::{Chart, File};
use crate::goyaml::parse::parse_documents;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Helm's limit on the decompressed size of a chart archive.
pub const MAX_DECOMPRESSED_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// Helm's limit on one file inside an archive.
pub const MAX_DECOMPRESSED_FILE_SIZE: u64 = 5 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for LoadError {}

fn err<T>(msg: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError(msg.into()))
}

/// Load a chart from a directory or a `.tgz` file.
pub fn load_chart(path: &Path) -> Result<Chart, LoadError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| LoadError(format!("{}: {}", path.display(), io_msg(&e))))?;
    if meta.is_dir() {
        let files = read_dir_files(path)?;
        load_files(files)
    } else {
        let data = std::fs::read(path)
            .map_err(|e| LoadError(format!("{}: {}", path.display(), io_msg(&e))))?;
        load_archive(&data)
    }
}

fn io_msg(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        _ => e.to_string(),
    }
}

struct IgnoreRule {
    pattern: String,
    negate: bool,
    dir_only: bool,
    anchored: bool,
}

fn parse_helmignore(text: &str) -> Vec<IgnoreRule> {
    let mut rules = Vec::new();
    for line in text.lines() {
        let mut l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let negate = l.starts_with('!');
        if negate {
            l = &l[1..];
        }
        let dir_only = l.ends_with('/');
        let l = l.trim_end_matches('/');
        let anchored = l.starts_with('/');
        let l = l.trim_start_matches('/');
        rules.push(IgnoreRule {
            pattern: l.to_string(),
            negate,
            dir_only,
            anchored,
        });
    }
    rules
}

/// Go's filepath.Match.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn m(p: &[char], n: &[char]) -> bool {
        if p.is_empty() {
            return n.is_empty();
        }
        match p[0] {
            '*' => {
                for i in 0..=n.len() {
                    if i > 0 && n[i - 1] == '/' {
                        break;
                    }
                    if m(&p[1..], &n[i..]) {
                        return true;
                    }
                }
                false
            }
            '?' => !n.is_empty() && n[0] != '/' && m(&p[1..], &n[1..]),
            '[' => {
                if n.is_empty() {
                    return false;
                }
                let Some(end) = p.iter().skip(1).position(|&c| c == ']').map(|i| i + 1) else {
                    return false;
                };
                let class = &p[1..end];
                let (neg, class) = if class.first() == Some(&'^') {
                    (true, &class[1..])
                } else {
                    (false, class)
                };
                let mut ok = false;
                let mut i = 0;
                while i < class.len() {
                    if i + 2 < class.len() && class[i + 1] == '-' {
                        if class[i] <= n[0] && n[0] <= class[i + 2] {
                            ok = true;
                        }
                        i += 3;
                    } else {
                        if class[i] == n[0] {
                            ok = true;
                        }
                        i += 1;
                    }
                }
                ok != neg && m(&p[end + 1..], &n[1..])
            }
            '\\' if p.len() > 1 => !n.is_empty() && n[0] == p[1] && m(&p[2..], &n[1..]),
            c => !n.is_empty() && n[0] == c && m(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    m(&p, &n)
}

fn ignored(rules: &[IgnoreRule], rel: &str, is_dir: bool) -> bool {
    // Built-in: hidden entries directly inside templates/.
    if let Some(rest) = rel.strip_prefix("templates/") {
        if rest.starts_with('.') && !rest.contains('/') {
            return true;
        }
    }
    let base = rel.rsplit('/').next().unwrap_or(rel);
    let mut result = false;
    for r in rules {
        if r.dir_only && !is_dir {
            continue;
        }
        let hit = if r.pattern.contains('/') || r.anchored {
            glob_match(&r.pattern, rel)
        } else {
            glob_match(&r.pattern, base)
        };
        if hit {
            result = !r.negate;
        }
    }
    result
}

fn read_dir_files(root: &Path) -> Result<Vec<File>, LoadError> {
    let rules = match std::fs::read_to_string(root.join(".helmignore")) {
        Ok(t) => parse_helmignore(&t),
        Err(_) => Vec::new(),
    };
    let mut out = Vec::new();
    fn walk(
        root: &Path,
        dir: &Path,
        rules: &[IgnoreRule],
        out: &mut Vec<File>,
    ) -> Result<(), LoadError> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| LoadError(format!("{}: {}", dir.display(), io_msg(&e))))?
            .filter_map(|e| e.ok())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let md = std::fs::metadata(&p)
                .map_err(|e| LoadError(format!("{}: {}", p.display(), io_msg(&e))))?;
            if md.is_dir() {
                if ignored(rules, &rel, true) {
                    continue;
                }
                walk(root, &p, rules, out)?;
            } else {
                if ignored(rules, &rel, false) {
                    continue;
                }
                if !md.is_file() {
                    return err(format!(
                        "cannot load irregular file {} as it has file mode type bits set",
                        p.display()
                    ));
                }
                if md.len() > MAX_DECOMPRESSED_FILE_SIZE {
                    return err(format!(
                        "chart file {:?} is larger than the maximum file size {}",
                        rel, MAX_DECOMPRESSED_FILE_SIZE
                    ));
                }
                let data = std::fs::read(&p)
                    .map_err(|e| LoadError(format!("{}: {}", p.display(), io_msg(&e))))?;
                out.push(File { name: rel, data });
            }
        }
        Ok(())
    }
    walk(root, root, &rules, &mut out)?;
    Ok(out)
}

/// Read the entries of a chart archive (gzip + tar, one top folder).
pub fn archive_files(data: &[u8]) -> Result<Vec<File>, LoadError> {
    if data.len() < 2 || data[0] != 0x1f || data[1] != 0x8b {
        return err("file does not appear to be a gzipped archive; got 'application/octet-stream'");
    }
    let gz = flate2::read::GzDecoder::new(data);
    let mut limited = gz.take(MAX_DECOMPRESSED_CHART_SIZE + 1);
    let mut raw = Vec::new();
    limited
        .read_to_end(&mut raw)
        .map_err(|e| LoadError(format!("gzip: {}", gzip_msg(&e))))?;
    if raw.len() as u64 > MAX_DECOMPRESSED_CHART_SIZE {
        return err(format!(
            "decompressed chart is larger than the maximum size {}",
            MAX_DECOMPRESSED_CHART_SIZE
        ));
    }
    let mut ar = tar::Archive::new(&raw[..]);
    let mut files: Vec<File> = Vec::new();
    let entries = ar
        .entries()
        .map_err(|e| LoadError(format!("archive/tar: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| LoadError(format!("archive/tar: {e}")))?;
        let kind = entry.header().entry_type();
        let path_bytes = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&path_bytes).replace('\\', "/");
        if kind.is_dir() {
            continue;
        }
        if kind == tar::EntryType::XGlobalHeader || kind == tar::EntryType::XHeader {
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            return err(format!("chart contains a link: {name}"));
        }
        if !kind.is_file() {
            continue;
        }
        // Drop the top folder.
        let parts: Vec<&str> = name.splitn(2, '/').collect();
        if parts.len() < 2 {
            continue;
        }
        let rel = parts[1];
        if name.starts_with('/') || rel.starts_with('/') {
            return err(format!("chart illegally contains absolute paths"));
        }
        let clean = crate::gotmpl::funcs::strings::path_clean(rel);
        if clean.starts_with("../") || clean == ".." || rel.split('/').any(|s| s == "..") {
            return err(format!("chart illegally references parent directory"));
        }
        if entry.size() > MAX_DECOMPRESSED_FILE_SIZE {
            return err(format!(
                "decompressed chart file {:?} is larger than the maximum file size {}",
                rel, MAX_DECOMPRESSED_FILE_SIZE
            ));
        }
        let mut buf = Vec::new();
        entry
            .read_to_end(&mut buf)
            .map_err(|e| LoadError(format!("archive/tar: {e}")))?;
        if let Some(existing) = files.iter_mut().find(|f| f.name == clean) {
            existing.data = buf;
        } else {
            files.push(File {
                name: clean,
                data: buf,
            });
        }
    }
    if files.is_empty() {
        return err("no files in chart archive");
    }
    Ok(files)
}

fn gzip_msg(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "unexpected EOF".into(),
        _ => "invalid header".into(),
    }
}

pub fn load_archive(data: &[u8]) -> Result<Chart, LoadError> {
    load_files(archive_files(data)?)
}

fn strip_bom(mut data: Vec<u8>) -> Vec<u8> {
    if data.starts_with(&[0xEF, 0xBB, 0xBF]) {
        data.drain(..3);
    }
    data
}

/// Build a chart from its files (paths relative to the chart root).
pub fn load_files(files: Vec<File>) -> Result<Chart, LoadError> {
    let mut chart = Chart {
        metadata: Metadata::default(),
        values: Default::default(),
        schema: None,
        templates: Vec::new(),
        files: Vec::new(),
        dependencies: Vec::new(),
        lock: None,
    };
    let mut have_chart_yaml = false;
    let mut subcharts: std::collections::BTreeMap<String, Vec<File>> = Default::default();
    let mut sub_archives: Vec<(String, Vec<u8>)> = Vec::new();
    let mut requirements: Option<Vec<u8>> = None;
    for f in files {
        let f = File {
            name: f.name,
            data: strip_bom(f.data),
        };
        let name = f.name.as_str();
        if name == "Chart.yaml" {
            have_chart_yaml = true;
            let text = String::from_utf8_lossy(&f.data);
            chart.metadata = Metadata::parse(&text).map_err(LoadError)?;
            if chart.metadata.api_version.is_empty() {
                chart.metadata.api_version = "v1".into();
            }
        } else if name == "values.yaml" {
            let text = String::from_utf8_lossy(&f.data);
            chart.values = crate::goyaml::parse_values(&text).map_err(|e| {
                LoadError(format!(
                    "cannot load values.yaml: cannot unmarshal yaml document: {}",
                    e.msg
                ))
            })?;
        } else if name == "values.schema.json" {
            chart.schema = Some(f.data);
        } else if name == "Chart.lock" {
            chart.lock = Some(f.data);
        } else if name == "requirements.yaml" {
            requirements = Some(f.data.clone());
            chart.files.push(f);
        } else if name == "requirements.lock" {
            if chart.lock.is_none() {
                chart.lock = Some(f.data.clone());
            }
            chart.files.push(f);
        } else if name.starts_with("templates/") {
            chart.templates.push(f);
        } else if let Some(rest) = name.strip_prefix("charts/") {
            if rest.ends_with(".prov") && !rest.contains('/') {
                chart.files.push(f);
                continue;
            }
            let first = rest.split('/').next().unwrap_or("");
            if first.starts_with('_') || first.starts_with('.') {
                continue;
            }
            if !rest.contains('/') {
                if rest.ends_with(".tgz") || rest.ends_with(".tar.gz") {
                    sub_archives.push((rest.to_string(), f.data));
                }
                continue;
            }
            let (dir, inner) = rest.split_once('/').unwrap();
            subcharts.entry(dir.to_string()).or_default().push(File {
                name: inner.to_string(),
                data: f.data,
            });
        } else {
            chart.files.push(f);
        }
    }
    if !have_chart_yaml {
        return err("Chart.yaml file is missing");
    }
    if let Some(req) = requirements {
        if chart.metadata.api_version == "v1" {
            let text = String::from_utf8_lossy(&req);
            if let Ok(docs) = parse_documents(&text) {
                if let Some(crate::goyaml::parse::Node::Map(p)) = docs.first() {
                    for (k, v) in p {
                        if let crate::goyaml::parse::Node::Scalar(
                            crate::goyaml::resolve::Scalar::Str(k),
                        ) = k
                        {
                            if k == "dependencies" {
                                chart.metadata.dependencies = parse_dependencies(v);
                            }
                        }
                    }
                }
            }
        }
    }
    chart.metadata.validate().map_err(LoadError)?;
    for (dir, files) in subcharts {
        let sub = load_files(files).map_err(|e| {
            LoadError(format!(
                "error unpacking subchart {dir} in {}: {}",
                chart.metadata.name, e.0
            ))
        })?;
        chart.dependencies.push(sub);
    }
    for (file, data) in sub_archives {
        let sub = load_archive(&data).map_err(|e| {
            LoadError(format!(
                "error unpacking subchart {file} in {}: {}",
                chart.metadata.name, e.0
            ))
        })?;
        chart.dependencies.push(sub);
    }
    if chart.is_library() {
        chart.templates.retain(|t| {
            t.name
                .rsplit('/')
                .next()
                .map(|b| b.starts_with('_'))
                .unwrap_or(false)
        });
    }
    Ok(chart)
}
