//! A tool's directory: `toolhost.json` (the manifest: the create body's fields), the handler
//! (`handler.js` or `handler.ts`), the files the manifest lists for `ctx.files`, and a local
//! `.env` for `toolhost dev`. `init` writes one; `load` reads one into the bodies of create
//! and PATCH; `fingerprint` tells `dev` when to reload.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Map, Value};

use super::output::Out;
use super::{Failure, Outcome};

pub(super) const MANIFEST: &str = "toolhost.json";
const DOTENV: &str = ".env";
const TYPES: &str = "toolhost.d.ts";
const JS_HANDLER: &str = "handler.js";
const TS_HANDLER: &str = "handler.ts";
/// The `sourceLanguage` of each handler file.
const JAVASCRIPT: &str = "javascript";
const TYPESCRIPT: &str = "typescript";

/// The manifest's keys: the create body's fields, less `source` (the handler file is the
/// source) and the admin's `limits`. `files` is a list of paths in the directory, uploaded
/// under the same paths.
const MANIFEST_FIELDS: &[&str] = &[
    "slug",
    "title",
    "description",
    "priceUsd",
    "pricingMode",
    "inputSchema",
    "outputSchema",
    "exampleInput",
    "tags",
    "capabilities",
    "env",
    "files",
    "allowedHosts",
    "safetyAttestation",
];

/// A tool as read from its directory.
pub(super) struct Project {
    pub(super) slug: String,
    manifest: Map<String, Value>,
    source: String,
    /// `sourceLanguage` as the server names it: `typescript` for a handler.ts.
    language: &'static str,
    /// `ctx.files`: path -> content.
    files: BTreeMap<String, String>,
    /// `.env`: what `dev` gives the handler as secrets (so logs redact them as production does).
    pub(super) dotenv: BTreeMap<String, String>,
}

fn bad(dir: &Path, message: impl std::fmt::Display) -> Failure {
    Failure::Usage(format!("{}: {message}", dir.join(MANIFEST).display()))
}

impl Project {
    /// What a deploy uploads, for the progress line: the handler and file count, and bytes.
    pub(super) fn upload_summary(&self) -> String {
        let bytes = self.source.len() + self.files.values().map(String::len).sum::<usize>();
        let handler = if self.language == "typescript" {
            "handler.ts"
        } else {
            "handler.js"
        };
        match self.files.len() {
            0 => format!("{handler}, {bytes} bytes"),
            1 => format!("{handler} and 1 file, {bytes} bytes"),
            n => format!("{handler} and {n} files, {bytes} bytes"),
        }
    }

    pub(super) fn load(dir: &Path) -> Result<Project, Failure> {
        let manifest_path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&manifest_path).map_err(|e| {
            Failure::Usage(format!(
                "cannot read {} ({e}); `toolhost init` writes one",
                manifest_path.display()
            ))
        })?;
        let manifest: Map<String, Value> = match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(bad(dir, "must be a JSON object")),
            Err(e) => return Err(bad(dir, format!("not JSON: {e}"))),
        };
        if let Some(unknown) = manifest
            .keys()
            .find(|k| !MANIFEST_FIELDS.contains(&k.as_str()))
        {
            let hint = if unknown == "source" {
                format!(" (the handler is {JS_HANDLER} or {TS_HANDLER} beside it)")
            } else {
                String::new()
            };
            return Err(bad(
                dir,
                format!(
                    "unknown field {unknown:?}{hint}; the fields are {}",
                    MANIFEST_FIELDS.join(", ")
                ),
            ));
        }
        let slug = manifest
            .get("slug")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(dir, "needs a \"slug\" (a string)"))?
            .to_string();
        let (source, language) = read_handler(dir)?;
        let mut files = BTreeMap::new();
        match manifest.get("files") {
            None => {}
            Some(Value::Array(paths)) => {
                for path in paths {
                    let path = path
                        .as_str()
                        .ok_or_else(|| bad(dir, "\"files\" lists paths (strings)"))?;
                    let content = read_listed(dir, path)?;
                    files.insert(path.to_string(), content);
                }
            }
            Some(_) => {
                return Err(bad(
                    dir,
                    "\"files\" is a list of paths in the tool's directory",
                ))
            }
        }
        let dotenv = read_dotenv(&dir.join(DOTENV))?;
        Ok(Project {
            slug,
            manifest,
            source,
            language,
            files,
            dotenv,
        })
    }

    /// A digest of what a deploy uploads (the manifest, the handler and the listed files), to
    /// tell whether the directory changed since it was last deployed or pulled.
    pub(super) fn digest(&self) -> String {
        let uploaded = json!({
            "manifest": self.manifest, "source": self.source,
            "language": self.language, "files": self.files,
        });
        let bytes = serde_json::to_vec(&uploaded).unwrap_or_default();
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes))
    }

    /// The local manifest's safety attestation, which a pull keeps.
    pub(super) fn attestation(&self) -> Option<&Value> {
        self.manifest.get("safetyAttestation")
    }

    /// The project as `dev` serves it: free, so calls need no payment.
    pub(super) fn free(mut self) -> Project {
        self.manifest.insert("priceUsd".into(), json!(0));
        self.manifest.remove("pricingMode");
        self
    }

    /// The body of `POST /ai/endpoints/create`.
    pub(super) fn create_body(&self) -> Value {
        let mut body = self.manifest.clone();
        body.insert("source".into(), json!(self.source));
        body.insert("sourceLanguage".into(), json!(self.language));
        body.insert("files".into(), json!(self.files));
        Value::Object(body)
    }

    /// The body of `PATCH /ai/endpoints/{slug}` that makes the endpoint (its record and
    /// `manage` view, as `GET /ai/endpoints/{slug}` shows its owner) what the directory says:
    /// only the fields that differ, so a deploy that changes nothing changes nothing (content
    /// safety rescans only changed fields; a source change withdraws grants). Env names and
    /// files the manifest no longer has are deleted. Files are always sent: the server shows
    /// their sizes, not their contents.
    pub(super) fn patch_body(&self, endpoint: &Value, manage: &Value) -> Map<String, Value> {
        let wanted =
            |field: &str, default: Value| self.manifest.get(field).cloned().unwrap_or(default);
        let mut body = Map::new();
        let mut set_if_changed = |field: &str, want: Value, have: &Value| {
            if &want != have {
                body.insert(field.to_string(), want);
            }
        };
        set_if_changed("title", wanted("title", Value::Null), &endpoint["title"]);
        set_if_changed(
            "description",
            wanted("description", json!("")),
            &endpoint["description"],
        );
        set_if_changed(
            "inputSchema",
            wanted("inputSchema", json!({"type": "object"})),
            &endpoint["inputSchema"],
        );
        set_if_changed(
            "outputSchema",
            wanted("outputSchema", json!({})),
            &endpoint["outputSchema"],
        );
        set_if_changed(
            "exampleInput",
            wanted("exampleInput", Value::Null),
            &manage["exampleInput"],
        );
        set_if_changed("tags", wanted("tags", json!([])), &endpoint["tags"]);
        set_if_changed(
            "capabilities",
            capabilities(&wanted("capabilities", json!({}))),
            &capabilities(&manage["requestedCapabilities"]),
        );
        let hosts = wanted("allowedHosts", json!([]));
        let current_hosts = match &manage["allowedHosts"] {
            Value::Null => json!([]),
            other => other.clone(),
        };
        set_if_changed("allowedHosts", hosts, &current_hosts);
        set_if_changed("source", json!(self.source), &manage["source"]);
        let language = match &manage["sourceLanguage"] {
            Value::Null => json!(JAVASCRIPT),
            stored => stored.clone(),
        };
        set_if_changed("sourceLanguage", json!(self.language), &language);
        let price = wanted("priceUsd", json!(0));
        if price.as_f64() != endpoint["priceUsd"].as_f64() {
            body.insert("priceUsd".into(), price);
        }
        if let Some(mode) = self.manifest.get("pricingMode") {
            if mode != &endpoint["pricingMode"] {
                body.insert("pricingMode".into(), mode.clone());
            }
        }
        let env = wanted("env", json!({}));
        let mut env_patch = Map::new();
        if let Some(current) = manage["env"].as_object() {
            for (name, value) in current {
                match env.get(name) {
                    None => {
                        env_patch.insert(name.clone(), Value::Null);
                    }
                    Some(want) if want != value => {
                        env_patch.insert(name.clone(), want.clone());
                    }
                    Some(_) => {}
                }
            }
        }
        for (name, value) in env.as_object().into_iter().flatten() {
            if manage["env"].get(name).is_none() {
                env_patch.insert(name.clone(), value.clone());
            }
        }
        if !env_patch.is_empty() {
            body.insert("env".into(), Value::Object(env_patch));
        }
        let mut files: Map<String, Value> = self
            .files
            .iter()
            .map(|(path, content)| (path.clone(), json!(content)))
            .collect();
        for stored in manage["files"].as_array().into_iter().flatten() {
            if let Some(path) = stored["path"].as_str() {
                files.entry(path.to_string()).or_insert(Value::Null);
            }
        }
        if !files.is_empty() {
            body.insert("files".into(), Value::Object(files));
        }
        body
    }
}

/// What `pull` writes into a directory: the manifest of the endpoint its owner's view shows
/// (`endpoint`, `manage`), listing `files`, with `attestation` (the local manifest's, else the
/// one the endpoint was created with), and its handler.
pub(super) fn write_pulled(
    dir: &Path,
    endpoint: &Value,
    manage: &Value,
    files: &[String],
    attestation: Option<Value>,
) -> Result<Vec<String>, Failure> {
    let mut manifest = Map::new();
    for field in [
        "slug",
        "title",
        "description",
        "priceUsd",
        "inputSchema",
        "outputSchema",
        "tags",
    ] {
        manifest.insert(field.into(), endpoint[field].clone());
    }
    if !manage["exampleInput"].is_null() {
        manifest.insert("exampleInput".into(), manage["exampleInput"].clone());
    }
    let requested: Map<String, Value> = manage["requestedCapabilities"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, on)| on.as_bool() == Some(true))
        .map(|(name, on)| (name.clone(), on.clone()))
        .collect();
    manifest.insert("capabilities".into(), Value::Object(requested));
    manifest.insert("env".into(), manage["env"].clone());
    if !manage["allowedHosts"].is_null() {
        manifest.insert("allowedHosts".into(), manage["allowedHosts"].clone());
    }
    manifest.insert("files".into(), json!(files));
    manifest.insert(
        "safetyAttestation".into(),
        attestation.unwrap_or_else(|| json!({"accepted": true})),
    );
    let (handler, other) = if manage["sourceLanguage"] == TYPESCRIPT {
        (TS_HANDLER, JS_HANDLER)
    } else {
        (JS_HANDLER, TS_HANDLER)
    };
    let local = |e: std::io::Error, path: &Path| {
        Failure::Local(format!("cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| local(e, dir))?;
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    let written = [
        (MANIFEST, text),
        (
            handler,
            manage["source"].as_str().unwrap_or_default().to_string(),
        ),
    ];
    for (name, content) in &written {
        let path = dir.join(name);
        std::fs::write(&path, content).map_err(|e| local(e, &path))?;
    }
    let stale = dir.join(other);
    if stale.is_file() {
        std::fs::remove_file(&stale).map_err(|e| local(e, &stale))?;
    }
    Ok(written.iter().map(|(name, _)| name.to_string()).collect())
}

/// Writes one pulled file at `path` inside `dir` (a path the server accepted, so relative and
/// normal; checked again, since it names a place on this disk).
pub(super) fn write_file(dir: &Path, path: &str, bytes: &[u8]) -> Result<(), Failure> {
    let relative = Path::new(path);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(Failure::Network(format!(
            "the server listed a file outside the tool's directory: {path:?}"
        )));
    }
    let target = dir.join(relative);
    let local =
        |e: std::io::Error| Failure::Local(format!("cannot write {}: {e}", target.display()));
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(local)?;
    }
    std::fs::write(&target, bytes).map_err(local)
}

/// Capabilities with every flag present, so `{}` and `{"kv": false}` compare equal.
fn capabilities(value: &Value) -> Value {
    let flag = |name: &str| value.get(name).and_then(Value::as_bool).unwrap_or(false);
    json!({"kv": flag("kv"), "files": flag("files"), "httpGetJson": flag("httpGetJson"),
           "fetch": flag("fetch"), "logs": flag("logs")})
}

/// The handler's source and its `sourceLanguage`.
fn read_handler(dir: &Path) -> Result<(String, &'static str), Failure> {
    let present: Vec<&str> = [JS_HANDLER, TS_HANDLER]
        .into_iter()
        .filter(|name| dir.join(name).is_file())
        .collect();
    match present.as_slice() {
        [one] => {
            let language = if *one == TS_HANDLER {
                TYPESCRIPT
            } else {
                JAVASCRIPT
            };
            std::fs::read_to_string(dir.join(one))
                .map(|source| (source, language))
                .map_err(|e| {
                    Failure::Usage(format!("cannot read {}: {e}", dir.join(one).display()))
                })
        }
        [] => Err(Failure::Usage(format!(
            "{}: no {JS_HANDLER} or {TS_HANDLER}",
            dir.display()
        ))),
        _ => Err(Failure::Usage(format!(
            "{}: both {JS_HANDLER} and {TS_HANDLER}; keep one",
            dir.display()
        ))),
    }
}

/// A file the manifest lists: a plain relative path inside the directory, UTF-8.
fn read_listed(dir: &Path, path: &str) -> Result<String, Failure> {
    let relative = Path::new(path);
    if path.is_empty()
        || !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(bad(
            dir,
            format!("\"files\": {path:?} must be a relative path inside the tool's directory"),
        ));
    }
    std::fs::read_to_string(dir.join(relative)).map_err(|e| {
        bad(
            dir,
            format!("\"files\": cannot read {path:?} as UTF-8 text: {e}"),
        )
    })
}

/// `NAME=value` lines; `#` comments, blank lines and an `export ` prefix are allowed, and a
/// value in matching quotes loses them. A missing file is an empty one.
fn read_dotenv(path: &Path) -> Result<BTreeMap<String, String>, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => {
            return Err(Failure::Usage(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    parse_dotenv(&text).map_err(|(line, message)| {
        Failure::Usage(format!("{} line {line}: {message}", path.display()))
    })
}

fn parse_dotenv(text: &str) -> Result<BTreeMap<String, String>, (usize, String)> {
    let mut out = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            return Err((number + 1, "expected NAME=value".into()));
        };
        let name = name.trim();
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err((number + 1, format!("{name:?} is not a variable name")));
        }
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| {
                value
                    .strip_prefix(*q)
                    .and_then(|v| v.strip_suffix(*q))
                    .filter(|_| value.len() >= 2)
            })
            .unwrap_or(value);
        out.insert(name.to_string(), unquoted.to_string());
    }
    Ok(out)
}

/// What `dev` watches, with each file's modification time and size: the manifest, the
/// handlers, `.env` and the files the manifest lists (read leniently: a broken manifest is
/// still watched, so fixing it reloads).
pub(super) fn fingerprint(dir: &Path) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
    let mut paths: Vec<PathBuf> = [MANIFEST, JS_HANDLER, TS_HANDLER, DOTENV]
        .iter()
        .map(|name| dir.join(name))
        .collect();
    if let Ok(Value::Object(manifest)) = std::fs::read_to_string(dir.join(MANIFEST))
        .map_err(|_| ())
        .and_then(|text| serde_json::from_str(&text).map_err(|_| ()))
    {
        for path in manifest
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            paths.push(dir.join(path));
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let stamp = std::fs::metadata(&path)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            (path, stamp)
        })
        .collect()
}

/// `toolhost init`: writes a working tool into `dir`, which must be empty or missing.
pub(super) fn init(dir: &Path, typescript: bool, out: &Out) -> Outcome {
    if let Ok(mut entries) = std::fs::read_dir(dir) {
        if entries.next().is_some() {
            return Err(Failure::Usage(format!(
                "{} is not empty; init writes only into an empty or new directory",
                dir.display()
            )));
        }
    } else if dir.exists() {
        return Err(Failure::Usage(format!(
            "{} exists and is not a directory",
            dir.display()
        )));
    }
    let local = |e: std::io::Error, path: &Path| {
        Failure::Local(format!("cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| local(e, dir))?;
    let slug = slug_for(dir);
    let handler = if typescript { TS_HANDLER } else { JS_HANDLER };
    let written: Vec<(&str, String)> = vec![
        (MANIFEST, manifest_template(&slug)),
        (
            handler,
            if typescript { TS_TEMPLATE } else { JS_TEMPLATE }.to_string(),
        ),
        (TYPES, crate::web::handler_types_source().to_string()),
        ("tsconfig.json", tsconfig(handler)),
        (".gitignore", format!("{DOTENV}\n.toolhost/\n")),
    ];
    for (name, content) in &written {
        let path = dir.join(name);
        std::fs::write(&path, content).map_err(|e| local(e, &path))?;
    }
    if out.json {
        out.json(&json!({"ok": true, "dir": dir, "slug": slug,
            "files": written.iter().map(|(name, _)| name).collect::<Vec<_>>()}));
        return Ok(());
    }
    println!("Created the tool {slug} in {}:", dir.display());
    for (name, _) in &written {
        println!("  {name}");
    }
    println!(
        "\nNext: `toolhost dev {0}` to run it locally, `toolhost deploy {0}` to publish it.\n\
         {MANIFEST} attests that the tool follows the content-safety policy \
         (safetyAttestation; GET /ai/content-safety/policy): read it before you deploy.",
        dir.display()
    );
    Ok(())
}

/// A slug from the directory's name: lowercase letters, digits and single hyphens, 3 to 64
/// characters, else `my-tool`.
fn slug_for(dir: &Path) -> String {
    let absolute = std::env::current_dir()
        .map(|cwd| cwd.join(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    let name = absolute
        .components()
        .rev()
        .find_map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .unwrap_or_default();
    let mut slug = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(64).collect();
    let slug = slug.trim_end_matches('-').to_string();
    if slug.len() < 3 {
        "my-tool".to_string()
    } else {
        slug
    }
}

fn manifest_template(slug: &str) -> String {
    let manifest = json!({
        "slug": slug,
        "title": "Hello",
        "description": "Greets whoever calls it by name.",
        "priceUsd": 0,
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100}},
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"]
        },
        "tags": ["demo"],
        "capabilities": {},
        "env": {"GREETING": "Hello"},
        "files": [],
        "safetyAttestation": {"accepted": true}
    });
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    text
}

/// The handler `init` writes: type-checked with the project's other handlers (tests/types).
const JS_TEMPLATE: &str = include_str!("../../fixtures/templates/cli-handler.js");

const TS_TEMPLATE: &str = include_str!("../../fixtures/templates/cli-handler.ts");

/// The compiler options `web/toolhost.d.ts`'s header asks for, over the handler and the types.
fn tsconfig(handler: &str) -> String {
    let config = json!({
        "compilerOptions": {
            "allowJs": true, "checkJs": true, "strict": true, "noImplicitAny": false,
            "noEmit": true, "lib": [], "types": [], "target": "es2022", "module": "es2022"
        },
        "files": [TYPES, handler]
    });
    let mut text = serde_json::to_string_pretty(&config).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upload_line_names_the_handler_the_files_and_the_bytes() {
        let mut project = Project {
            slug: "t".into(),
            manifest: Map::new(),
            source: "x".repeat(10),
            language: "typescript",
            files: BTreeMap::new(),
            dotenv: BTreeMap::new(),
        };
        assert_eq!(project.upload_summary(), "handler.ts, 10 bytes");
        project.language = "javascript";
        project.files.insert("a.txt".into(), "12345".into());
        assert_eq!(project.upload_summary(), "handler.js and 1 file, 15 bytes");
        project.files.insert("b.txt".into(), "1".into());
        assert_eq!(project.upload_summary(), "handler.js and 2 files, 16 bytes");
    }

    #[test]
    fn dotenv_reads_names_values_quotes_and_comments() {
        let parsed =
            parse_dotenv("# c\n\nexport API_KEY=\"s3cret\"\nMODE = fast\nEMPTY=\nQ='a b'\n")
                .unwrap();
        assert_eq!(parsed["API_KEY"], "s3cret");
        assert_eq!(parsed["MODE"], "fast");
        assert_eq!(parsed["EMPTY"], "");
        assert_eq!(parsed["Q"], "a b");
        assert_eq!(parse_dotenv("1BAD=x").unwrap_err().0, 1);
        assert_eq!(parse_dotenv("ok=1\nnot a pair").unwrap_err().0, 2);
    }

    #[test]
    fn the_tsconfig_init_writes_has_the_options_the_types_header_asks_for() {
        let header = crate::web::handler_types_source();
        let start = header.find("//   { \"compilerOptions\"").unwrap();
        let end = start + header[start..].find("\"files\"").unwrap();
        let end = end + header[end..].find('\n').unwrap();
        let json: String = header[start..end]
            .lines()
            .map(|l| l.trim_start_matches("//   "))
            .collect::<Vec<_>>()
            .join("\n");
        let asked: Value = serde_json::from_str(&json).unwrap();
        let written: Value = serde_json::from_str(&tsconfig(JS_HANDLER)).unwrap();
        assert_eq!(written["compilerOptions"], asked["compilerOptions"]);
        assert_eq!(written["files"], json!([TYPES, JS_HANDLER]));
    }

    #[test]
    fn slugs_come_from_the_directory_name() {
        assert_eq!(
            slug_for(Path::new("/tmp/My Weather_Tool")),
            "my-weather-tool"
        );
        assert_eq!(slug_for(Path::new("/tmp/x")), "my-tool");
        assert_eq!(slug_for(Path::new("/tmp/--ab--cd--/")), "ab-cd");
    }

    #[test]
    fn a_patch_holds_only_what_changed_and_deletes_what_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(JS_HANDLER), "export default async () => 1;").unwrap();
        std::fs::write(
            dir.path().join(MANIFEST),
            r#"{"slug": "abc", "title": "T", "env": {"A": "1", "B": "2"}, "capabilities": {"kv": false}}"#,
        )
        .unwrap();
        let project = Project::load(dir.path()).unwrap();
        let endpoint = json!({"title": "T", "description": "", "inputSchema": {"type": "object"},
            "outputSchema": {}, "tags": [], "priceUsd": 0});
        let manage = json!({"requestedCapabilities": {}, "allowedHosts": null,
            "source": "export default async () => 1;", "env": {"A": "1", "B": "old", "C": "3"},
            "files": [{"path": "gone.txt", "bytes": 3}]});
        let patch = project.patch_body(&endpoint, &manage);
        assert_eq!(
            Value::Object(patch),
            json!({"env": {"B": "2", "C": null}, "files": {"gone.txt": null}})
        );
        // An example request is sent when it differs from the one the endpoint has.
        std::fs::write(
            dir.path().join(MANIFEST),
            r#"{"slug": "abc", "title": "T", "env": {"A": "1", "B": "2"}, "capabilities": {"kv": false},
                "exampleInput": {"q": "x"}}"#,
        )
        .unwrap();
        let project = Project::load(dir.path()).unwrap();
        let patch = project.patch_body(&endpoint, &manage);
        assert_eq!(patch["exampleInput"], json!({"q": "x"}));
        let mut has_it = manage.clone();
        has_it["exampleInput"] = json!({"q": "x"});
        assert!(project
            .patch_body(&endpoint, &has_it)
            .get("exampleInput")
            .is_none());
        // The same source as handler.ts is a change of language only.
        std::fs::rename(dir.path().join(JS_HANDLER), dir.path().join(TS_HANDLER)).unwrap();
        let project = Project::load(dir.path()).unwrap();
        assert_eq!(project.create_body()["sourceLanguage"], "typescript");
        let patch = project.patch_body(&endpoint, &manage);
        assert_eq!(patch["sourceLanguage"], "typescript");
        assert!(patch.get("source").is_none());
    }

    #[test]
    fn a_manifest_with_an_unknown_field_or_a_path_outside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(JS_HANDLER), "export default async () => 1;").unwrap();
        for manifest in [
            r#"{"slug": "abc", "sauce": 1}"#,
            r#"{"slug": "abc", "files": ["../etc/passwd"]}"#,
            r#"{"slug": "abc", "files": {"a": "b"}}"#,
            r#"{"title": "no slug"}"#,
            "not json",
        ] {
            std::fs::write(dir.path().join(MANIFEST), manifest).unwrap();
            assert!(
                matches!(Project::load(dir.path()), Err(Failure::Usage(_))),
                "{manifest}"
            );
        }
    }
}
