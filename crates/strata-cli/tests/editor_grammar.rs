//! The VS Code extension (`editors/vscode/`, docs/editor.md) is not built in CI, but its JSON must
//! be valid and its grammar must know the language: every keyword docs/language.md lists is
//! matched, whole, by the grammar's keyword pattern.

use serde_json::Value;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not valid JSON: {e}"))
}

/// The keywords of docs/language.md: the words in backticks after `Keywords:`.
fn documented_keywords() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/language.md")).expect("docs/language.md");
    let at = doc.find("Keywords: `").expect("a `Keywords:` list in docs/language.md") + "Keywords: `".len();
    let end = at + doc[at..].find('`').expect("the list's closing backtick");
    doc[at..end].split_whitespace().map(String::from).collect()
}

#[test]
fn the_extension_files_are_valid_json_and_agree() {
    let package = json("editors/vscode/package.json");
    let grammar = json("editors/vscode/syntaxes/strata.tmLanguage.json");
    json("editors/vscode/language-configuration.json");
    let contributed = &package["contributes"]["grammars"][0];
    assert_eq!(contributed["scopeName"], grammar["scopeName"]);
    assert_eq!(contributed["language"], package["contributes"]["languages"][0]["id"]);
    let path = contributed["path"].as_str().expect("the grammar's path");
    assert!(repo().join("editors/vscode").join(path).is_file(), "{path}");
    let config = package["contributes"]["languages"][0]["configuration"].as_str().expect("configuration");
    assert!(repo().join("editors/vscode").join(config).is_file(), "{config}");
    assert_eq!(package["contributes"]["languages"][0]["extensions"], serde_json::json!([".strata"]));
    // Every `include` names a rule of the repository.
    fn includes(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(s)) = m.get("include") {
                    out.push(s.clone());
                }
                m.values().for_each(|x| includes(x, out));
            }
            Value::Array(xs) => xs.iter().for_each(|x| includes(x, out)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    includes(&grammar, &mut names);
    for name in names {
        let rule = name.strip_prefix('#').unwrap_or_else(|| panic!("`{name}` is a repository rule"));
        assert!(grammar["repository"].get(rule).is_some(), "no rule `{rule}` in the grammar");
    }
}

#[test]
fn every_documented_keyword_is_highlighted() {
    let grammar = json("editors/vscode/syntaxes/strata.tmLanguage.json");
    let pattern = grammar["repository"]["keywords"]["patterns"]
        .as_array()
        .expect("keyword patterns")
        .iter()
        .find(|p| p["name"] == "keyword.control.strata")
        .and_then(|p| p["match"].as_str())
        .expect("a `keyword.control.strata` pattern");
    let re = regex::Regex::new(pattern).expect("the keyword pattern compiles");
    let keywords = documented_keywords();
    assert!(keywords.len() >= 20, "the list was read: {keywords:?}");
    for kw in &keywords {
        assert_eq!(re.find(kw).map(|m| m.as_str()), Some(kw.as_str()), "keyword `{kw}`");
        assert_eq!(re.find(&format!("x = {kw};")).map(|m| m.as_str()), Some(kw.as_str()), "`{kw}` in a line");
    }
    // Whole words only: names that contain a keyword are not keywords.
    for name in ["lettuce", "format", "input", "async_copy", "views", "synced", "fn_", "_if"] {
        assert!(re.find(name).is_none(), "`{name}` is not a keyword");
    }
}
