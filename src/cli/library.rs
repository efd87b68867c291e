//! `morc lib …`: libraries shared between labs (list, info, new, install).
//! Reading manifests and the search path are `morc.lib`'s (lua/morc/lib.lua).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use mlua::{Function, Table};

use super::exit;

#[derive(Subcommand, Debug)]
pub(crate) enum LibCommand {
    /// The libraries in the library path: name, version, folder.
    List,
    /// A library's manifest: version, required morc, dependencies, doc, skills.
    Info { name: String },
    /// Create a new library folder NAME/ (manifest, skills/, tests/ with an example each).
    New {
        name: String,
        /// Where to create it (default: the current folder).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
    /// Install a library into the user library folder ($MORC_LIB or ~/.local/share/morc/lib)
    /// from a folder, a .zip / .tar.gz archive (a file, or an http(s) URL fetched with curl),
    /// or a git URL.
    /// A library's code runs with only the capabilities its manifest declares and `--grant`
    /// gives it (`morc lib info` shows them); one asking for more is refused.
    Install {
        source: String,
        /// Replace an installed library of the same name.
        #[arg(long)]
        force: bool,
        /// Capabilities granted to the library, e.g. --grant io,process (io outside its folder,
        /// process, network, bus, binary); each must be one its manifest declares.
        #[arg(long, value_delimiter = ',', value_name = "CAP,CAP")]
        grant: Vec<String>,
    },
}

pub(crate) fn main(cmd: &LibCommand) -> i32 {
    let result = match cmd {
        LibCommand::List => list(),
        LibCommand::Info { name } => info(name),
        LibCommand::New { name, dir } => new(name, dir),
        LibCommand::Install { source, force, grant } => install(source, *force, grant),
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("morc lib: {e}");
            exit::SCRIPT_ERROR
        }
    }
}

fn lib_table(lua: &mlua::Lua) -> mlua::Result<Table> {
    lua.globals().get::<Table>("morc")?.get("lib")
}

fn list() -> Result<(), String> {
    let lua = morc_lua::library::manifest_state().map_err(|e| e.to_string())?;
    let lib = lib_table(&lua).map_err(|e| e.to_string())?;
    let list: Vec<Table> = lib.get::<Function>("list").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    if list.is_empty() {
        let path: Vec<String> = lib.get("path").map_err(|e| e.to_string())?;
        println!("no libraries in the library path ({}); `morc lib new NAME` starts one", path.join(", "));
    }
    for m in list {
        let name: String = m.get("name").unwrap_or_default();
        let version: String = m.get("version").unwrap_or_default();
        let dir: String = m.get("dir").unwrap_or_default();
        let doc: String = m.get::<Option<String>>("doc").ok().flatten().unwrap_or_default();
        match m.get::<Option<String>>("error").ok().flatten() {
            Some(err) => println!("{name:<16} ?        {dir}   (broken manifest: {err})"),
            None => println!("{name:<16} {version:<8} {dir}   {}", doc.lines().next().unwrap_or("")),
        }
    }
    Ok(())
}

fn info(name: &str) -> Result<(), String> {
    let lua = morc_lua::library::manifest_state().map_err(|e| e.to_string())?;
    let lib = lib_table(&lua).map_err(|e| e.to_string())?;
    let dir: Option<String> = if Path::new(name).join("morc-lib.lua").exists() { Some(name.to_string()) } else { lib.get::<Function>("find").and_then(|f| f.call(name)).map_err(|e| e.to_string())? };
    let dir = dir.ok_or_else(|| format!("library '{name}' not found in the library path; `morc lib list` shows what is installed"))?;
    let m: Table = lib.get::<Function>("manifest").and_then(|f| f.call(dir.as_str())).map_err(|e| e.to_string())?;
    let get = |k: &str| m.get::<Option<String>>(k).ok().flatten().unwrap_or_default();
    println!("{} {}", get("name"), get("version"));
    println!("  folder   {dir}");
    println!("  morc     {}", if get("morc").is_empty() { "any".to_string() } else { get("morc") });
    let depends: Table = m.get("depends").map_err(|e| e.to_string())?;
    let mut deps: Vec<String> = depends.pairs::<String, String>().filter_map(|p| p.ok()).map(|(k, v)| format!("{k} {v}")).collect();
    deps.sort();
    println!("  depends  {}", if deps.is_empty() { "nothing".to_string() } else { deps.join(", ") });
    println!("  may      {}", may_text(&dir)?);
    for sub in ["skills", "assemblies", "components", "fmus", "tests"] {
        let mut names: Vec<String> = std::fs::read_dir(Path::new(&dir).join(sub))
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        // Hidden files (the `.keep` that holds an empty folder in git) are not the library's.
        names.retain(|n| !n.starts_with('.'));
        names.sort();
        if !names.is_empty() {
            println!("  {sub:<8} {}", names.join(", "));
        }
    }
    if !get("doc").is_empty() {
        println!("\n{}", get("doc"));
    }
    Ok(())
}

/// What `morc lib info` says a library may do beyond reading its own folder and running skills.
fn may_text(dir: &str) -> Result<String, String> {
    use morc_lua::library::{read_manifest, Trust, CAPABILITIES};
    let m = read_manifest(Path::new(dir))?;
    let trust = Trust::new(Path::new(dir), &m);
    if m.capabilities.is_empty() {
        return Ok("run skills on the engine and read its own folder; nothing more (it declares no capabilities)".into());
    }
    let mut lines = Vec::new();
    for cap in &m.capabilities {
        let what = CAPABILITIES.iter().find(|(c, _)| c == cap).map_or("", |(_, w)| *w);
        let state = match (&trust.granted, trust.allows(cap)) {
            (None, _) => "declared; used from a folder, not installed, so it has it",
            (Some(_), true) => "granted",
            (Some(_), false) => "declared but NOT granted: reinstall with --grant to allow it",
        };
        lines.push(format!("{cap:<8} {what} [{state}]"));
    }
    Ok(lines.join("\n           "))
}

fn new(name: &str, parent: &Path) -> Result<(), String> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') || name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        return Err(format!("'{name}' is not a library name: use letters, digits, _ and - (starting with a letter)"));
    }
    let dir = parent.join(name);
    if dir.exists() {
        return Err(format!("{} already exists", dir.display()));
    }
    let skill = name.replace('-', "_");
    let files = [
        (
            "morc-lib.lua".to_string(),
            format!(
                "-- The manifest of library '{name}': `morc lib info {name}` shows it.\nreturn {{\n  name = \"{name}\",\n  version = \"0.1.0\",\n  morc = \">={}\",\n  depends = {{}},          -- other = \">=1.0\"\n  capabilities = {{}},     -- beyond its own folder: \"io\", \"process\", \"network\", \"bus\", \"binary\" (docs/guide.md)\n  doc = \"what this library is for\",\n}}\n",
                env!("CARGO_PKG_VERSION")
            ),
        ),
        (
            format!("skills/{skill}_hello.lua"),
            format!(
                "-- A first skill: holds the axes where they are for a while.\nreturn morc.skill {{\n  name = \"{skill}_hello\",\n  doc = \"holds the axes for `seconds` s (an example skill to start from)\",\n  params = {{ seconds = {{ type = \"number\", unit = \"s\", default = 0.1, range = {{ 0.001, 60 }} }} }},\n  execute = function(ctx, p)\n    local a = morc.assembly {{ \"{skill}_hello\", duration = p.seconds }}\n    -- As many values as the robot has joints (six ideal axes when the engine has no robot).\n    a:add(\"p\", \"probe\", {{ n = ctx.robot and ctx.robot.dof or 6 }})\n    a:connect(\"robot.q\", \"p.u\")\n    return ctx.engine:run(a)\n  end,\n  evaluate = function(ctx, p, r) return r.ok, (\"%d ticks\"):format(r.ticks) end,\n}}\n"
            ),
        ),
        ("assemblies/.keep".to_string(), String::new()),
        ("components/.keep".to_string(), String::new()),
        ("fmus/.keep".to_string(), String::new()),
        (
            format!("tests/{skill}_hello.lua"),
            format!(
                "-- Run with `morc test {name}`: each test file returns T.summary().\nlocal T = require \"morc.testing\"\nlocal lib = morc.lib.load \"{name}\"\n\nT.test(\"hello holds\", function()\n  local r = lib.skills.{skill}_hello {{ seconds = 0.01 }}\n  T.eq(r.ok, true, r.reason)\nend)\n\nreturn T.summary()\n"
            ),
        ),
    ];
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("created {}: edit morc-lib.lua and skills/, then `morc test {}`", dir.display(), dir.display());
    Ok(())
}

/// Where a library folder's manifest is: the folder itself, or its single subfolder
/// (archives and repositories often wrap the library in one top folder).
pub fn library_root(dir: &Path) -> Result<PathBuf, String> {
    if dir.join("morc-lib.lua").exists() {
        return Ok(dir.to_path_buf());
    }
    let subs: Vec<PathBuf> = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    if let [only] = subs.as_slice() {
        if only.join("morc-lib.lua").exists() {
            return Ok(only.clone());
        }
    }
    Err(format!("{}: no morc-lib.lua manifest (a library is a folder with morc-lib.lua; `morc lib new NAME` makes one)", dir.display()))
}

fn install(source: &str, force: bool, grant: &[String]) -> Result<(), String> {
    use morc_lua::library::CAPABILITIES;
    let known: Vec<&str> = CAPABILITIES.iter().map(|(c, _)| *c).collect();
    if let Some(bad) = grant.iter().find(|g| !known.contains(&g.as_str())) {
        return Err(format!("--grant {bad}: no such capability (known: {})", known.join(", ")));
    }
    let staging = std::env::temp_dir().join(format!("morc-lib-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| {
        let is_url = source.contains("://") && !source.starts_with("file://");
        let archive = |path: &Path| -> Result<(), String> {
            if source.ends_with(".zip") {
                extract_zip(path, &staging)
            } else {
                extract_tar_gz(path, &staging)
            }
        };
        let dir = if Path::new(source).is_dir() {
            PathBuf::from(source)
        } else if source.ends_with(".zip") || source.ends_with(".tar.gz") || source.ends_with(".tgz") {
            if is_url {
                // A release archive on a server: fetched beside the staging folder first.
                let fetched = staging.with_extension(if source.ends_with(".zip") { "zip" } else { "tar.gz" });
                let result = download(source, &fetched).and_then(|_| archive(&fetched));
                let _ = std::fs::remove_file(&fetched);
                result?;
            } else {
                archive(Path::new(source.strip_prefix("file://").unwrap_or(source)))?;
            }
            staging.clone()
        } else if source.contains("://") || source.starts_with("git@") || source.ends_with(".git") {
            git_clone(source, &staging)?;
            staging.clone()
        } else {
            return Err(format!("{source}: not a folder, a .zip or .tar.gz archive (a file or an http(s) URL), or a git URL"));
        };
        let root = library_root(&dir)?;
        // Read in a state of its own: installing runs none of the library's code.
        let m = morc_lua::library::read_manifest(&root)?;
        let (name, version) = (m.name.clone(), m.version.clone());
        let missing: Vec<&String> = m.capabilities.iter().filter(|c| !grant.contains(c)).collect();
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|c| format!("{c} ({})", CAPABILITIES.iter().find(|(k, _)| k == c).map_or("", |(_, w)| *w))).collect();
            let caps: Vec<&str> = m.capabilities.iter().map(String::as_str).collect();
            return Err(format!(
                "library '{name}' asks for capabilities not granted: {}; its manifest {}/morc-lib.lua declares capabilities = {{ {} }}. \
                 Nothing was installed. If you trust it with that: morc lib install --grant {} {source}",
                list.join(", "),
                root.display(),
                caps.join(", "),
                caps.join(",")
            ));
        }
        let extra: Vec<&String> = grant.iter().filter(|g| !m.capabilities.contains(g)).collect();
        if !extra.is_empty() {
            eprintln!("morc lib: not granting {} to '{name}': its manifest does not declare it", extra.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "));
        }
        let target = morc_lua::library::user_lib_dir().join(&name);
        if target.exists() {
            if !force {
                return Err(format!("{} exists already; `morc lib install --force {source}` replaces it", target.display()));
            }
            std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        }
        copy_dir(&root, &target)?;
        let grant_file = morc_lua::library::grant_file(&name);
        std::fs::create_dir_all(grant_file.parent().unwrap()).map_err(|e| format!("{}: {e}", grant_file.display()))?;
        std::fs::write(&grant_file, m.capabilities.join(",")).map_err(|e| format!("{}: {e}", grant_file.display()))?;
        let granted = if m.capabilities.is_empty() { "no capabilities".to_string() } else { format!("granted {}", m.capabilities.join(", ")) };
        println!("installed {name} {version} in {} ({granted})", target.display());
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&staging);
    result
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| format!("{}: {e}", src.display()))?;
        }
    }
    Ok(())
}

/// A relative path inside the archive, or an error for one that would escape it.
fn safe_relative(name: &str, archive: &Path) -> Result<PathBuf, String> {
    let p = Path::new(name);
    if p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(format!("{}: entry '{name}' points outside the archive; refusing to install it", archive.display()));
    }
    Ok(p.to_path_buf())
}

/// The most an archive may unpack to (a library is Lua files and a few FMUs): a larger one is
/// refused as it is read, so a small archive cannot fill memory or the disk.
pub const ARCHIVE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Unpacks a .zip library archive into `to`; entries that would land outside it are refused.
pub fn extract_zip(archive: &Path, to: &Path) -> Result<(), String> {
    let file = std::fs::File::open(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut total: u64 = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| format!("{}: {e}", archive.display()))?;
        let name = entry.name().map_err(|e| format!("{}: {e}", archive.display()))?.to_string();
        let rel = safe_relative(&name, archive)?;
        let path = to.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        } else {
            std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut bytes = Vec::new();
            (&mut entry).take(ARCHIVE_MAX_BYTES - total + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", archive.display()))?;
            total += bytes.len() as u64;
            if total > ARCHIVE_MAX_BYTES {
                return Err(format!("{}: unpacks to more than {} MB; a library is not that large, refusing it", archive.display(), ARCHIVE_MAX_BYTES >> 20));
            }
            std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// A .tar.gz of plain files and folders (ustar/GNU headers; links and special files are skipped).
/// A few lines here instead of one more crate: a library archive needs nothing else.
pub fn extract_tar_gz(archive: &Path, to: &Path) -> Result<(), String> {
    let file = std::fs::File::open(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .take(ARCHIVE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: not a gzip archive: {e}", archive.display()))?;
    if bytes.len() as u64 > ARCHIVE_MAX_BYTES {
        return Err(format!("{}: unpacks to more than {} MB; a library is not that large, refusing it", archive.display(), ARCHIVE_MAX_BYTES >> 20));
    }
    let field = |h: &[u8], a: usize, b: usize| String::from_utf8_lossy(&h[a..b]).trim_end_matches('\0').trim().to_string();
    let mut pos = 0;
    let mut long_name: Option<String> = None;
    while pos + 512 <= bytes.len() {
        let h = &bytes[pos..pos + 512];
        if h.iter().all(|&b| b == 0) {
            break;
        }
        let size = usize::from_str_radix(&field(h, 124, 136), 8).map_err(|_| format!("{}: corrupt tar header", archive.display()))?;
        let kind = h[156];
        let prefix = field(h, 345, 500);
        let mut name = field(h, 0, 100);
        if !prefix.is_empty() && &h[257..262] == b"ustar" {
            name = format!("{prefix}/{name}");
        }
        if let Some(n) = long_name.take() {
            name = n;
        }
        let data_start = pos + 512;
        let data = bytes.get(data_start..data_start + size).ok_or_else(|| format!("{}: truncated archive", archive.display()))?;
        match kind {
            b'L' => long_name = Some(String::from_utf8_lossy(data).trim_end_matches('\0').to_string()),
            b'0' | 0 | b'5' => {
                let path = to.join(safe_relative(&name, archive)?);
                if kind == b'5' || name.ends_with('/') {
                    std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                } else {
                    std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| format!("{}: {e}", path.display()))?;
                    std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
                }
            }
            _ => {} // pax headers, links, devices: not part of a library
        }
        pos = data_start + size.div_ceil(512) * 512;
    }
    Ok(())
}

/// Fetches an archive from an http(s) URL with curl (as git fetches a git URL: no HTTP stack
/// of morc's own for a command run once per library).
fn download(url: &str, to: &Path) -> Result<(), String> {
    let out = std::process::Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location", "--max-time", "300", "--output"])
        .arg(to)
        .arg(url)
        .output()
        .map_err(|e| format!("installing from an archive URL needs curl: {e}"))?;
    if !out.status.success() {
        return Err(format!("downloading {url} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

fn git_clone(url: &str, to: &Path) -> Result<(), String> {
    let status = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", url])
        .arg(to)
        .status()
        .map_err(|e| format!("installing from a git URL needs git: {e}"))?;
    if !status.success() {
        return Err(format!("git clone {url} failed ({status})"));
    }
    Ok(())
}
