//! Strata kernels in a Cargo project, from `build.rs`.
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     strata_build::Build::new().file("kernels/saxpy.strata").compile();
//! }
//!
//! // src/lib.rs
//! mod saxpy {
//!     strata_host::include_kernels!("saxpy");
//! }
//! ```
//!
//! [`Build::compile`] drives the Strata pipeline (`strata_cli::Pipeline`, the one the `strata`
//! command drives) over each file: parses and checks it, lowers it and emits its kernels as a C
//! library (what `strata emit --target c --lib` writes, docs/libraries.md), compiles all of them
//! into one static library with the `cc` crate, and writes `$OUT_DIR/strata/NAME.rs` for each
//! `NAME.strata`: one safe Rust function per kernel ([`rust`]), which `strata_host::include_kernels!`
//! brings in. The application depends on `strata-host` only; this crate is a build dependency.
//!
//! A file the checker rejects fails the build with the diagnostics rendered as `strata check`
//! renders them (Cargo shows them under the build script's output, as it shows rustc's); its
//! warnings become `cargo:warning=` lines.

pub mod rust;

use std::path::{Path, PathBuf};
use strata_cli::{Emitted, Pipeline, Target};
use strata_diag::Severity;

/// Why a build failed. Its `Display` is what the build prints.
#[derive(Debug)]
pub enum Error {
    /// A file has errors: the diagnostics, rendered as `strata check` renders them.
    Program(String),
    /// A usage or I/O error (a file that cannot be read, a `define` that names no constant, two
    /// files of one name), or a kernel that cannot be called from Rust.
    Usage(String),
    /// The C compiler failed on the emitted library (or was not found): its message.
    CCompiler(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Program(rendered) => write!(f, "{}", rendered.trim_end()),
            Error::Usage(m) => write!(f, "error: {m}"),
            Error::CCompiler(m) if m.contains("ToolNotFound") => write!(
                f,
                "error: no C compiler to build the Strata kernels: {m}\n  = help: install GCC (or Clang), or set CC \
                 to a C compiler"
            ),
            Error::CCompiler(m) => write!(f, "error: the C compiler failed on the emitted Strata library: {m}"),
        }
    }
}

impl Error {
    /// The line [`Build::compile`] prints for Cargo's summary before failing: the first headline
    /// and the place it points at, as a `cargo:warning=` line (the whole error goes to stderr).
    pub fn cargo_summary(&self) -> String {
        let text = self.to_string();
        let first = text.lines().next().unwrap_or("error");
        match text.lines().find_map(|l| l.trim_start().strip_prefix("┌─ ")) {
            Some(at) => format!("cargo:warning={first} (at {at})"),
            None => format!("cargo:warning={first}"),
        }
    }
}

impl std::error::Error for Error {}

/// What one Strata file became.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The `.strata` file.
    pub source: PathBuf,
    /// Its name without extension (`saxpy`): the module's name for `include_kernels!`.
    pub name: String,
    /// The C library's source and header (`strata emit --target c --lib`).
    pub c_source: String,
    pub c_header: String,
    /// The Rust module.
    pub rust: String,
    /// The warnings of the checker, rendered.
    pub warnings: Vec<String>,
}

/// A set of Strata files to build into one static library with a Rust module each.
#[derive(Clone, Debug, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    defines: Vec<(String, u64)>,
    out_dir: Option<PathBuf>,
    openmp: bool,
}

impl Build {
    pub fn new() -> Build {
        Build::default()
    }

    /// Adds a `.strata` file (relative to the crate's root, where Cargo runs `build.rs`).
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Sets a constant of the files, as `strata -D NAME=VALUE` does.
    pub fn define(&mut self, name: impl Into<String>, value: u64) -> &mut Build {
        self.defines.push((name.into(), value));
        self
    }

    /// Runs the blocks of each launch on all cores with OpenMP (`-fopenmp`, linking `libgomp`),
    /// as `strata run` does; without it (the default) a launch runs its blocks on the calling
    /// thread. Needs GCC (the `cc` crate's compiler, `$CC`): with another compiler, or one
    /// without OpenMP, the build goes on without it and says so in a `cargo:warning=` line.
    pub fn openmp(&mut self, on: bool) -> &mut Build {
        self.openmp = on;
        self
    }

    /// Where the C library and the Rust modules go (`$OUT_DIR` when not set).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Builds everything from `build.rs`, telling Cargo what to link and when to run again; on an
    /// error, prints it and ends the build script with a failure (exit status 1).
    pub fn compile(&mut self) {
        for f in &self.files {
            println!("cargo:rerun-if-changed={}", f.display());
        }
        match self.try_compile() {
            Ok(generated) => {
                for w in generated.iter().flat_map(|g| &g.warnings) {
                    for line in w.lines().filter(|l| !l.trim().is_empty()) {
                        println!("cargo:warning={line}");
                    }
                }
            }
            Err(e) => {
                println!("{}", e.cargo_summary());
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }

    /// Builds everything, printing only Cargo's instructions for linking (`cargo:rustc-link-*`,
    /// partly from `cc`) and the warning of [`Build::openmp`]: what [`Build::compile`] does, with
    /// the error returned.
    pub fn try_compile(&mut self) -> Result<Vec<Generated>, Error> {
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
                Error::Usage("OUT_DIR is not set: run strata-build from a build script, or set `out_dir`".into())
            })?),
        };
        let generated = self.generate()?;
        let dir = out.join("strata");
        std::fs::create_dir_all(&dir).map_err(|e| Error::Usage(format!("cannot create `{}`: {e}", dir.display())))?;
        let write = |path: PathBuf, text: &str| {
            std::fs::write(&path, text).map_err(|e| Error::Usage(format!("cannot write `{}`: {e}", path.display())))
        };
        let mut c_files = Vec::new();
        for g in &generated {
            let c = dir.join(format!("{}.c", g.name));
            write(c.clone(), &g.c_source)?;
            write(dir.join(format!("{}.h", g.name)), &g.c_header)?;
            write(dir.join(format!("{}.rs", g.name)), &g.rust)?;
            c_files.push(c);
        }
        if c_files.is_empty() {
            return Ok(generated);
        }
        let mut cc = cc::Build::new();
        cc.files(&c_files)
            .out_dir(&dir)
            // The flags that give the results of `strata run` (docs/libraries.md): integer overflow
            // wraps, floats round after every operation.
            .flag("-fwrapv")
            .flag("-ffp-contract=off")
            // The emitted kernels have unused parameters and labels: harmless, not the user's code.
            .warnings(false)
            .cargo_warnings(false);
        if self.openmp {
            let compiler = cc.try_get_compiler().map_err(|e| Error::CCompiler(e.to_string()))?;
            let gcc = compiler.is_like_gnu() && !compiler.is_like_clang();
            if gcc && cc.is_flag_supported("-fopenmp").unwrap_or(false) {
                cc.flag("-fopenmp");
                println!("cargo:rustc-link-lib=gomp");
            } else {
                println!(
                    "cargo:warning=strata-build: `{}` does not support OpenMP as GCC does: the kernels' blocks run on \
                     the calling thread",
                    compiler.path().display()
                );
            }
        }
        cc.try_compile("strata_kernels").map_err(|e| Error::CCompiler(e.to_string()))?;
        // The library's math functions (`sqrtf`, …).
        if cfg!(unix) && std::env::var("CARGO_CFG_TARGET_OS").map_or(true, |os| os != "macos" && os != "ios") {
            println!("cargo:rustc-link-lib=m");
        }
        Ok(generated)
    }

    /// Checks and translates every file, writing nothing: the C library and Rust module of each.
    pub fn generate(&self) -> Result<Vec<Generated>, Error> {
        let mut names: Vec<String> = Vec::new();
        let mut out = Vec::new();
        let mut launches: Vec<(String, PathBuf)> = Vec::new();
        for path in &self.files {
            let g = generate_file(path, &self.defines)?;
            if names.contains(&g.name) {
                return Err(Error::Usage(format!(
                    "two Strata files are named `{}`: their Rust modules would clash; rename one",
                    g.name
                )));
            }
            // Launch functions are the library's only external symbols: one name, one kernel.
            for line in g.c_header.lines() {
                if let Some(name) = line.split_once("_launch(").and_then(|(a, _)| a.rsplit(' ').next()) {
                    if let Some((_, other)) = launches.iter().find(|(n, _)| n == name) {
                        return Err(Error::Usage(format!(
                            "the kernel `{name}` of `{}` has the name of a kernel of `{}`: their C launch functions \
                             would clash; rename one",
                            path.display(),
                            other.display()
                        )));
                    }
                    launches.push((name.to_string(), path.clone()));
                }
            }
            names.push(g.name.clone());
            out.push(g);
        }
        Ok(out)
    }
}

/// Checks one file and translates it (the [`Generated`] of `path`).
pub fn generate_file(path: &Path, defines: &[(String, u64)]) -> Result<Generated, Error> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| Error::Usage(format!("`{}` is not a file name", path.display())))?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
        return Err(Error::Usage(format!(
            "`{}`: the file's name must be letters, digits and `_` (it names the Rust module)",
            path.display()
        )));
    }
    let mut pipeline = Pipeline::new(defines.to_vec(), strata_check::TargetProfile::default_profile());
    let rendered = |e: strata_cli::Error, p: &Pipeline| match e {
        strata_cli::Error::Usage(m) => Error::Usage(m),
        strata_cli::Error::Rejected(m) => Error::Usage(m),
        strata_cli::Error::Diagnostics(ds) => Error::Program(strata_diag::render_plain(&ds, p.sources())),
    };
    let file = pipeline.load(path).map_err(|e| rendered(e, &pipeline))?;
    let diags = pipeline.check(&[file]).map_err(|e| rendered(e, &pipeline))?;
    if strata_diag::has_errors(&diags) {
        let errors: Vec<_> = diags.into_iter().filter(|d| d.is_error()).collect();
        return Err(Error::Program(strata_diag::render_plain(&errors, pipeline.sources())));
    }
    let warnings: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| strata_diag::render_plain(std::slice::from_ref(d), pipeline.sources()))
        .collect();
    let lowered = pipeline.lower(file).map_err(|e| rendered(e, &pipeline))?;
    let (c_source, c_header) = match pipeline.emit(&lowered, Target::C, true, &name) {
        Ok(Emitted::Library { source, header }) => (source, header),
        Ok(Emitted::Program(_)) => return Err(Error::Usage("internal error: no library was emitted".into())),
        Err(e) => return Err(rendered(e, &pipeline)),
    };
    let library = strata_ir::library::library(&lowered.program, &lowered.env, lowered.file)
        .map_err(|ds| Error::Program(strata_diag::render_plain(&ds, pipeline.sources())))?;
    let rust = rust::module(&library, &path.display().to_string())
        .map_err(|m| Error::Usage(format!("`{}`: {m}", path.display())))?;
    Ok(Generated { source: path.to_path_buf(), name, c_source, c_header, rust, warnings })
}
