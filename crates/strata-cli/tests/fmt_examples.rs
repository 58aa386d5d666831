//! The programs people read first are kept in the canonical style: every `.strata` file under
//! `examples/` and every ```strata listing of `README.md` passes `strata fmt --check`.
//!
//! When this fails, run `strata fmt --write FILE` on the files it names (for a README listing,
//! format the listing and paste it back).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn strata(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata")).args(args).args(files).current_dir(root()).output().unwrap()
}

fn strata_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            strata_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "strata") {
            out.push(path);
        }
    }
}

/// The ```strata blocks of a Markdown text, with the line each starts on.
fn strata_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```strata" => current = Some((i + 2, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    blocks
}

#[test]
fn every_example_is_formatted() {
    let mut files = Vec::new();
    strata_files(&root().join("examples"), &mut files);
    assert!(files.len() >= 20, "only {} examples found", files.len());
    let out = strata(&["fmt", "--check"], &files);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.is_empty(),
        "not formatted (run `strata fmt --write` on them):\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_readme_listing_is_formatted() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks = strata_blocks(&readme);
    assert!(blocks.len() >= 2, "only {} ```strata listings found in README.md", blocks.len());
    let dir = std::env::temp_dir().join(format!("strata-fmt-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for (line, text) in &blocks {
        let file = dir.join(format!("readme_line_{line}.strata"));
        std::fs::write(&file, text).unwrap();
        let check = strata(&["fmt", "--check"], std::slice::from_ref(&file));
        if !check.status.success() {
            let formatted = strata(&["fmt"], std::slice::from_ref(&file));
            failures.push(format!(
                "README.md:{line}: the listing is not formatted; `strata fmt` gives:\n{}{}",
                String::from_utf8_lossy(&formatted.stdout),
                String::from_utf8_lossy(&formatted.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The examples' code fits in 100 columns (only comments may be longer: the formatter never
/// rewraps them).
#[test]
fn example_code_fits_in_100_columns() {
    let mut files = Vec::new();
    strata_files(&root().join("examples"), &mut files);
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.chars().count() > 100 && !line.contains("//") {
                long.push(format!("{}:{}: {line}", file.display(), i + 1));
            }
        }
    }
    assert!(long.is_empty(), "lines over 100 columns:\n{}", long.join("\n"));
}

#[test]
fn the_listing_extraction_finds_blocks() {
    let md = "text\n```strata\nfn f() {}\n```\n```sh\nls\n```\n```strata\nconst N: nat = 1;\n```\n";
    assert_eq!(strata_blocks(md), [(3, "fn f() {}\n".to_string()), (9, "const N: nat = 1;\n".to_string())]);
}
