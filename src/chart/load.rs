//! Loading a chart from a directory or a gzipped tarball, with Helm's
//! classification of files and its safety checks on archives.

use super::metadata::{parse_dependencies, Metadata, MetadataError};
use super::{Chart, File};
use crate::goyaml::parse::parse_first_document;

use std::path::{Path, PathBuf};

/// Helm's limit on the decompressed size of a chart archive.
pub const MAX_DECOMPRESSED_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// Helm's limit on one file inside an archive.
pub const MAX_DECOMPRESSED_FILE_SIZE: u64 = 5 * 1024 * 1024;

/// Why a chart could not be loaded, in Helm's words; a file system error,
/// a Chart.yaml error and a subchart's error stay reachable as sources.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The archive or the chart's layout is refused.
    #[error("{0}")]
    Invalid(String),
    /// A file or directory could not be read.
    #[error("{}: {}", .path.display(), io_msg(.source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Metadata(#[source] MetadataError),
    /// values.yaml does not parse.
    #[error("cannot load values.yaml: {0}")]
    Values(#[source] crate::goyaml::parse::ValuesError),
    #[error("error unpacking subchart {name} in {parent}: {source}")]
    Subchart {
        name: String,
        parent: String,
        #[source]
        source: Box<LoadError>,
    },
}

impl LoadError {
    fn io(path: &Path, source: std::io::Error) -> LoadError {
        LoadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError::Invalid(msg.into()))
}

/// Load a chart from a directory or a `.tgz` file.
pub fn load_chart(path: &Path) -> Result<Chart, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| LoadError::io(path, e))?;
    if meta.is_dir() {
        let files = read_dir_files(path)?;
        load_files(files)
    } else {
        let data = std::fs::read(path).map_err(|e| LoadError::io(path, e))?;
        ensure_archive(&path.display().to_string(), &data)?;
        load_archive(&data)
    }
}

/// Helm's archive.EnsureArchive: a file that does not start like a gzip
/// stream is refused by name, with what http.DetectContentType makes of its
/// first 512 bytes (zero-padded).
fn ensure_archive(name: &str, data: &[u8]) -> Result<(), LoadError> {
    if data.len() >= 3 && data[..3] == [0x1f, 0x8b, 0x08] {
        return Ok(());
    }
    if name.ends_with(".yml") || name.ends_with(".yaml") {
        return err(format!(
            "file '{name}' seems to be a YAML file, but expected a gzipped archive"
        ));
    }
    let mut buf = [0u8; 512];
    let n = data.len().min(512);
    buf[..n].copy_from_slice(&data[..n]);
    let binary = |b: u8| matches!(b, 0x00..=0x08 | 0x0B | 0x0E..=0x1A | 0x1C..=0x1F);
    let content_type = if buf.starts_with(b"PK\x03\x04") {
        "application/zip"
    } else if buf.starts_with(b"%PDF-") {
        "application/pdf"
    } else if buf.starts_with(b"\x89PNG\x0D\x0A\x1A\x0A") {
        "image/png"
    } else if buf.starts_with(b"BZh") {
        "application/x-bzip2"
    } else if !buf.iter().any(|b| binary(*b)) {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    err(format!(
        "file '{name}' does not appear to be a gzipped archive; got '{content_type}'"
    ))
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
            .map_err(|e| LoadError::io(dir, e))?
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
            let md = std::fs::metadata(&p).map_err(|e| LoadError::io(&p, e))?;
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
                let data = std::fs::read(&p).map_err(|e| LoadError::io(&p, e))?;
                out.push(File::new(rel, data));
            }
        }
        Ok(())
    }
    walk(root, root, &rules, &mut out)?;
    Ok(out)
}

/// Read the entries of a chart archive (gzip + tar, one top folder).
/// Text of a file: borrowed when it is valid UTF-8 (the fast validator),
/// lossy otherwise.
pub fn utf8_text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

pub fn archive_files(data: &[u8]) -> Result<Vec<File>, LoadError> {
    if data.len() < 2 || data[0] != 0x1f || data[1] != 0x8b {
        return err("file does not appear to be a gzipped archive; got 'application/octet-stream'");
    }
    // The files are slices of the decompressed archive itself: copied out,
    // every byte of the chart would be written and faulted in twice.
    let raw = match inflate_fast(data) {
        Ok(raw) => raw,
        Err(_) => gunzip(data)?,
    };
    tar_files(&bytes::Bytes::from(raw))
}

/// Helm's archive.LoadArchiveFiles over the tar entries: every entry that
/// is not a directory is a file (a link, a device or a FIFO with no data);
/// the first path element is the chart's folder and is dropped; the rest is
/// cleaned and refused when absolute, outside the folder, above it or a
/// drive path; sizes are limited per file and for the whole chart.
fn tar_files(raw: &bytes::Bytes) -> Result<Vec<File>, LoadError> {
    let mut files: Vec<File> = Vec::new();
    let too_large = || {
        err(format!(
            "decompressed chart is larger than the maximum size {MAX_DECOMPRESSED_CHART_SIZE}"
        ))
    };
    let mut remaining = MAX_DECOMPRESSED_CHART_SIZE as i64;
    for entry in TarEntries::new(raw) {
        let entry = entry?;
        let name = crate::value::gostr::from_vec(entry.name.clone());
        // FileInfo().IsDir(): a directory entry, or a V7 file named with a
        // trailing slash.
        if entry.kind == b'5' || (entry.kind == 0 && name.ends_with('/')) {
            continue;
        }
        // Archives made on Windows separate with '\\'.
        let delimiter = if name.contains('\\') { '\\' } else { '/' };
        let parts: Vec<&str> = name.split(delimiter).collect();
        let n = parts[1..]
            .join(&delimiter.to_string())
            .replace(delimiter, "/");
        if n.starts_with('/') {
            return err("chart illegally contains absolute paths");
        }
        let n = crate::gotmpl::funcs::strings::path_clean(&n);
        if n == "." {
            return err(format!(
                "chart illegally contains content outside the base directory: {}",
                crate::gotmpl::format::quote_go(&name)
            ));
        }
        if n.starts_with("..") {
            return err("chart illegally references parent directory");
        }
        let b = n.as_bytes();
        if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/' {
            return err("chart contains illegally named files");
        }
        if parts[0] == "Chart.yaml" {
            return err("chart yaml not in base directory");
        }
        if entry.size > remaining {
            return too_large();
        }
        if entry.size > MAX_DECOMPRESSED_FILE_SIZE as i64 {
            return err(format!(
                "decompressed chart file {} is larger than the maximum file size {}",
                crate::gotmpl::format::quote_go(&name),
                MAX_DECOMPRESSED_FILE_SIZE
            ));
        }
        let written = entry.data.len().min(remaining.max(0) as usize);
        remaining -= written as i64;
        if (written as i64) < entry.size || remaining <= 0 {
            return too_large();
        }
        let buf = raw.slice_ref(&entry.data[..written]);
        if let Some(existing) = files.iter_mut().find(|f| f.name == n) {
            existing.data = buf;
        } else {
            files.push(File { name: n, data: buf });
        }
    }
    if files.is_empty() {
        return err("no files in chart archive");
    }
    Ok(files)
}

struct TarEntry<'a> {
    name: Vec<u8>,
    kind: u8,
    /// The size its header gives (a link's, a device's: no data follows).
    size: i64,
    data: &'a [u8],
}

/// A reader for the tar archives charts come in (ustar, with PAX and GNU
/// long names), over the decompressed bytes in memory.
struct TarEntries<'a> {
    raw: &'a [u8],
    pos: usize,
    long_name: Option<Vec<u8>>,
    done: bool,
}

impl<'a> TarEntries<'a> {
    fn new(raw: &'a [u8]) -> Self {
        TarEntries {
            raw,
            pos: 0,
            long_name: None,
            done: false,
        }
    }
}

fn octal(field: &[u8]) -> Option<u64> {
    // Base-256 for large sizes (GNU), else octal text.
    if field.first().map(|b| b & 0x80 != 0).unwrap_or(false) {
        let mut v: u64 = (field[0] & 0x7f) as u64;
        for &b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(b as u64)?;
        }
        return Some(v);
    }
    let t: String = field
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| b as char)
        .collect();
    let t = t.trim();
    if t.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(t, 8).ok()
}

fn cstr(field: &[u8]) -> &[u8] {
    let n = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..n]
}

impl<'a> Iterator for TarEntries<'a> {
    type Item = Result<TarEntry<'a>, LoadError>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            let Some(h) = self.raw.get(self.pos..self.pos + 512) else {
                self.done = true;
                if self.pos >= self.raw.len() {
                    return None;
                }
                return Some(err("unexpected EOF"));
            };
            if h.iter().all(|&b| b == 0) {
                self.done = true;
                return None;
            }
            let Some(size) = octal(&h[124..136]) else {
                self.done = true;
                return Some(err("archive/tar: invalid tar header"));
            };
            let kind = h[156];
            let start = self.pos + 512;
            // archive/tar: header-only types carry no data, whatever their
            // size says.
            let stored = if matches!(kind, b'1' | b'2' | b'3' | b'4' | b'5' | b'6') {
                0
            } else {
                size as usize
            };
            let Some(data) = self.raw.get(start..start + stored) else {
                self.done = true;
                return Some(err("unexpected EOF"));
            };
            self.pos = start + stored.div_ceil(512) * 512;
            let mut name = cstr(&h[0..100]).to_vec();
            if &h[257..262] == b"ustar" {
                let prefix = cstr(&h[345..500]);
                if !prefix.is_empty() {
                    let mut full = prefix.to_vec();
                    full.push(b'/');
                    full.extend_from_slice(&name);
                    name = full;
                }
            }
            match kind {
                b'L' => {
                    self.long_name = Some(cstr(data).to_vec());
                    continue;
                }
                b'x' => {
                    // PAX records: "len key=value\n"
                    let mut rest = data;
                    while !rest.is_empty() {
                        let sp = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
                        let len: usize = std::str::from_utf8(&rest[..sp])
                            .ok()
                            .and_then(|x| x.parse().ok())
                            .unwrap_or(rest.len());
                        let rec = &rest[..len.min(rest.len())];
                        if let Some(kv) = rec.get(sp + 1..rec.len().saturating_sub(1)) {
                            if let Some(stripped) = kv.strip_prefix(b"path=") {
                                self.long_name = Some(stripped.to_vec());
                            }
                        }
                        rest = &rest[len.min(rest.len())..];
                        if len == 0 {
                            break;
                        }
                    }
                    continue;
                }
                // Global PAX headers and GNU long link names: read by
                // archive/tar itself, never entries.
                b'g' | b'K' => continue,
                _ => {}
            }
            if let Some(n) = self.long_name.take() {
                name = n;
            }
            return Some(Ok(TarEntry {
                name,
                kind,
                size: size.min(i64::MAX as u64) as i64,
                data,
            }));
        }
    }
}

/// One-shot libdeflate decompression sized by the gzip trailer; any failure
/// (truncation, a trailer that lies) falls back to the streaming decoder,
/// which produces Go's error texts.
fn inflate_fast(data: &[u8]) -> Result<Vec<u8>, LoadError> {
    let n = data.len();
    if n < 18 {
        return err("gzip: invalid header");
    }
    let size = u32::from_le_bytes([data[n - 4], data[n - 3], data[n - 2], data[n - 1]]) as usize;
    if size as u64 > MAX_DECOMPRESSED_CHART_SIZE {
        return err("too large");
    }
    let mut out = vec![0; size];
    let mut d = libdeflater::Decompressor::new();
    match d.gzip_decompress(data, &mut out) {
        Ok(written) if written == size => Ok(out),
        _ => err("fall back"),
    }
}

/// Decompress a gzip member into a buffer sized from its trailer, enforcing
/// Helm's size limit and checking the CRC.
fn gunzip(data: &[u8]) -> Result<Vec<u8>, LoadError> {
    let bad = || LoadError::Invalid("gzip: invalid header".into());
    if data.len() < 18 || data[2] != 8 {
        return Err(bad());
    }
    let flags = data[3];
    let mut i = 10;
    if flags & 4 != 0 {
        let xlen = u16::from_le_bytes([
            *data.get(i).ok_or_else(bad)?,
            *data.get(i + 1).ok_or_else(bad)?,
        ]) as usize;
        i += 2 + xlen;
    }
    for bit in [8u8, 16] {
        if flags & bit != 0 {
            while *data.get(i).ok_or_else(bad)? != 0 {
                i += 1;
            }
            i += 1;
        }
    }
    if flags & 2 != 0 {
        i += 2;
    }
    if i >= data.len() {
        return Err(bad());
    }
    let n = data.len();
    let isize = u32::from_le_bytes([data[n - 4], data[n - 3], data[n - 2], data[n - 1]]) as usize;
    let limit = MAX_DECOMPRESSED_CHART_SIZE as usize;
    let mut out = Vec::with_capacity(isize.min(limit) + 1);
    let mut d = flate2::Decompress::new(false);
    loop {
        if out.len() == out.capacity() {
            if out.len() > limit {
                return err(format!(
                    "decompressed chart is larger than the maximum size {}",
                    MAX_DECOMPRESSED_CHART_SIZE
                ));
            }
            out.reserve(out.len().max(64 * 1024));
        }
        let before_in = d.total_in();
        let before_out = d.total_out();
        let status = d
            .decompress_vec(
                &data[i + d.total_in() as usize..],
                &mut out,
                flate2::FlushDecompress::None,
            )
            .map_err(|_| LoadError::Invalid("gzip: invalid header".into()))?;
        if out.len() > limit {
            return err(format!(
                "decompressed chart is larger than the maximum size {}",
                MAX_DECOMPRESSED_CHART_SIZE
            ));
        }
        match status {
            flate2::Status::StreamEnd => break,
            _ => {
                if d.total_in() == before_in
                    && d.total_out() == before_out
                    && out.len() < out.capacity()
                {
                    return err("unexpected EOF");
                }
            }
        }
    }
    let end = i + d.total_in() as usize;
    let trailer = data
        .get(end..end + 8)
        .ok_or_else(|| LoadError::Invalid("unexpected EOF".into()))?;
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let mut h = crc32fast::Hasher::new();
    h.update(&out);
    if h.finalize() != crc {
        return err("gzip: invalid checksum");
    }
    Ok(out)
}

pub fn load_archive(data: &[u8]) -> Result<Chart, LoadError> {
    load_files(archive_files(data)?)
}

fn strip_bom(data: bytes::Bytes) -> bytes::Bytes {
    if data.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return data.slice(3..);
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
            // The bytes as Go has them: go-yaml's reader refuses what is
            // not UTF-8 when its buffer reaches it.
            let text = crate::value::gostr::from_bytes(&f.data);
            chart.metadata = Metadata::parse(&text).map_err(LoadError::Metadata)?;
            if chart.metadata.api_version.is_empty() {
                chart.metadata.api_version = "v1".into();
            }
        } else if name == "values.yaml" {
            let text = crate::value::gostr::from_bytes(&f.data);
            chart.values = crate::goyaml::load_values(&text).map_err(LoadError::Values)?;
        } else if name == "values.schema.json" {
            chart.schema = Some(f.data);
        } else if name == "Chart.lock" {
            chart.lock = Some(f.data.to_vec());
        } else if name == "requirements.yaml" {
            requirements = Some(f.data.to_vec());
            chart.files.push(f);
        } else if name == "requirements.lock" {
            if chart.lock.is_none() {
                chart.lock = Some(f.data.to_vec());
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
                    sub_archives.push((rest.to_string(), f.data.to_vec()));
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
            if let Ok(doc) = parse_first_document(&text) {
                if let Some(crate::goyaml::parse::Node::Map(p)) = doc.as_ref() {
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
    chart.metadata.validate().map_err(LoadError::Metadata)?;
    let in_subchart = |name: String, e: LoadError| LoadError::Subchart {
        name,
        parent: chart.metadata.name.clone(),
        source: Box::new(e),
    };
    for (dir, files) in subcharts {
        let sub = load_files(files).map_err(|e| in_subchart(dir, e))?;
        chart.dependencies.push(sub);
    }
    for (file, data) in sub_archives {
        let sub = load_archive(&data).map_err(|e| in_subchart(file, e))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_load_error_keeps_helms_words_and_its_cause() {
        let missing = Path::new("/nonexistent/navique-chart");
        let e = load_chart(missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/nonexistent/navique-chart: no such file or directory"
        );
        let cause = e.source().expect("the I/O error is kept");
        let io = cause
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);

        // A subchart's refused Chart.yaml: parent's words, then the
        // subchart's, with each link reachable.
        let files = vec![
            File::new(
                "Chart.yaml",
                b"apiVersion: v2\nname: parent\nversion: 1.0.0\n".to_vec(),
            ),
            File::new(
                "charts/sub/Chart.yaml",
                b"apiVersion: v2\nname: sub\n".to_vec(),
            ),
        ];
        let e = load_files(files).unwrap_err();
        assert_eq!(
            e.to_string(),
            "error unpacking subchart sub in parent: validation: chart.metadata.version is required"
        );
        let mut chain = Vec::new();
        let mut link = e.source();
        while let Some(cause) = link {
            chain.push(cause.to_string());
            link = cause.source();
            if link.is_none() {
                assert_eq!(
                    cause.downcast_ref::<MetadataError>(),
                    Some(&MetadataError::VersionRequired),
                    "the chain ends in the metadata error"
                );
            }
        }
        // The subchart's own error (boxed), then the metadata error.
        assert_eq!(chain.len(), 2, "{chain:?}");
        assert_eq!(chain[0], "validation: chart.metadata.version is required");
    }
}
