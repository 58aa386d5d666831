//! `strata lsp` driven as an editor drives it: JSON-RPC messages with `Content-Length` framing on
//! its stdin, answers and published diagnostics read from its stdout (docs/editor.md).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// How long to wait for one message before failing the test (instead of hanging CI).
const WAIT: Duration = Duration::from_secs(20);

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace")
}

/// A running `strata lsp` and the messages it sent, read on a thread of their own.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    received: Receiver<Value>,
    next_id: i64,
    /// The requests sent (the figure docs/editor.md reports).
    requests: usize,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start strata lsp");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (send, received) = channel();
        std::thread::spawn(move || loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return; // the server closed its output
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.expect("a Content-Length header")];
            stdout.read_exact(&mut body).expect("a whole message");
            if send.send(serde_json::from_slice(&body).expect("JSON")).is_err() {
                return;
            }
        });
        Server { child, stdin, received, next_id: 0, requests: 0 }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns its response (messages sent meanwhile must be notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        self.requests += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let m = self.received.recv_timeout(WAIT).unwrap_or_else(|_| panic!("no answer to `{method}`"));
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.received.recv_timeout(WAIT).expect("published diagnostics");
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().expect("a list").clone();
            }
        }
    }

    fn initialize(&mut self) {
        let r = self.request("initialize", json!({ "capabilities": {}, "processId": null, "rootUri": null }));
        let caps = &r["result"]["capabilities"];
        assert_eq!(caps["textDocumentSync"], json!(1), "full document sync: {r}");
        for cap in ["hoverProvider", "definitionProvider", "documentFormattingProvider"] {
            assert_eq!(caps[cap], json!(true), "{cap}: {r}");
        }
        self.notify("initialized", json!({}));
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let doc = json!({ "uri": uri, "languageId": "strata", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
        self.diagnostics(uri)
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        let params = json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } });
        self.request(method, params)["result"].clone()
    }

    /// Closes stdin and waits for the exit status.
    fn wait(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("wait for strata lsp")
    }
}

/// The line and UTF-16 column (as LSP counts) of the first `needle` in `text`, plus `skip` bytes.
fn position_of(text: &str, needle: &str, skip: usize) -> (u32, u32) {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` in the text")) + skip;
    let line = text[..at].matches('\n').count();
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line as u32, text[start..at].encode_utf16().count() as u32)
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({ "start": { "line": l0, "character": c0 }, "end": { "line": l1, "character": c1 } })
}

/// A race (tests/corpus/check/reject/inplace_reverse_without_buffer.strata), with a non-ASCII
/// comment before it on its line so that the column counts UTF-16 units, not bytes.
const RACE: &str = "// A read/write race between threads.
fn rev(v: &uniq gpu.global [f32; 256]) -[grid: gpu.grid<X<2>, X<128>>]-> () {
    sched(X) thread in grid.to_threads {
        /* λ𝕏 */ v[[thread]] = v.reverse[[thread]];
    }
}
";

#[test]
fn diagnostics_hover_definition_formatting_and_shutdown() {
    let started = std::time::Instant::now();
    let mut s = Server::start();
    s.initialize();

    // A race: E0501 on `v[[thread]]` (line 3, column 18 in UTF-16 units: `𝕏` counts two), with
    // the labels and notes of `strata check` as related information.
    let race_uri = "file:///tmp/race.strata";
    let ds = s.open(race_uri, RACE);
    assert_eq!(ds.len(), 1, "{ds:?}");
    let d = &ds[0];
    assert_eq!(d["code"], "E0501", "{d}");
    assert_eq!(d["severity"], 1, "{d}");
    assert_eq!(d["source"], "strata");
    assert_eq!(d["message"], "conflicting memory access");
    assert_eq!(d["range"], range(3, 18, 3, 29), "{d}");
    let related = d["relatedInformation"].as_array().expect("related information");
    let messages: Vec<&str> = related.iter().filter_map(|r| r["message"].as_str()).collect();
    assert!(messages.contains(&"cannot access this memory"), "{messages:?}");
    let prior = related
        .iter()
        .find(|r| r["message"].as_str().is_some_and(|m| m.contains("conflicting prior read")))
        .expect("the conflicting access");
    assert_eq!(prior["location"]["range"], range(3, 32, 3, 51), "{prior}");
    assert!(messages.iter().any(|m| m.starts_with("help: the usual rewrites")), "the notes: {messages:?}");

    // An edit that removes the race clears the diagnostics; one that breaks the syntax gives
    // syntax errors (the server stays up).
    let fixed = RACE.replace("v[[thread]] = v.reverse[[thread]];", "v[[thread]] = 1.0;");
    let change = |text: &str, version: i32| json!({ "textDocument": { "uri": race_uri, "version": version }, "contentChanges": [{ "text": text }] });
    s.notify("textDocument/didChange", change(&fixed, 2));
    assert_eq!(s.diagnostics(race_uri), Vec::<Value>::new());
    s.notify("textDocument/didChange", change("fn ((( \u{0} }}} let", 3));
    let ds = s.diagnostics(race_uri);
    assert!(!ds.is_empty() && ds.iter().all(|d| d["code"].as_str().is_some_and(|c| c.starts_with("E00"))), "{ds:?}");

    // An example: no diagnostics.
    let path = workspace().join("examples/array_sum.strata");
    let text = std::fs::read_to_string(&path).expect("examples/array_sum.strata");
    let uri = format!("file://{}", path.display());
    assert_eq!(s.open(&uri, &text), Vec::<Value>::new());

    // Hover on a variable: its type and the resource that declared it.
    let (line, col) = position_of(&text, "let mine", 5);
    let h = s.at("textDocument/hover", &uri, line, col);
    let value = h["contents"]["value"].as_str().expect("Markdown");
    assert!(value.contains("mine: &uniq gpu.shared i32"), "{value}");
    assert!(value.contains("`gpu.Thread`"), "{value}");
    assert_eq!(h["range"], range(line, col - 1, line, col + 3));

    // Hover in GPU code: the expression read, its resource, uniformity and memory space.
    let (line, col) = position_of(&text, "input.group", 1);
    let h = s.at("textDocument/hover", &uri, line, col);
    let value = h["contents"]["value"].as_str().expect("Markdown");
    for part in [
        "input: &shrd gpu.global [i32; nb*nt]",
        ": `i32`",
        "evaluated by `thread` (`gpu.Thread`)",
        "uniformity: thread",
        "memory space: `gpu.global`",
    ] {
        assert!(value.contains(part), "`{part}` in {value}");
    }

    // Hover on a place written: its type, resource and memory space.
    let (line, col) = position_of(&text, "*mine = *mine", 1);
    let h = s.at("textDocument/hover", &uri, line, col);
    let value = h["contents"]["value"].as_str().expect("Markdown");
    for part in ["`*mine`: `i32`", "evaluated by `thread` (`gpu.Thread`)", "memory space: `gpu.shared`"] {
        assert!(value.contains(part), "`{part}` in {value}");
    }

    // Definition of a called function (the kernel launched by `main`) and of a variable.
    let (line, col) = position_of(&text, "sum::<<<", 1);
    let def = s.at("textDocument/definition", &uri, line, col);
    let (fl, fc) = position_of(&text, "fn sum", 3);
    assert_eq!(def, json!({ "uri": uri, "range": range(fl, fc, fl, fc + 3) }));
    let (line, col) = position_of(&text, "*mine = *mine", 10);
    let def = s.at("textDocument/definition", &uri, line, col);
    let (dl, dc) = position_of(&text, "let mine", 4);
    assert_eq!(def, json!({ "uri": uri, "range": range(dl, dc, dl, dc + 4) }));

    // Hover on a function's name: its signature.
    let h = s.at("textDocument/hover", &uri, fl, fc + 1);
    let value = h["contents"]["value"].as_str().expect("Markdown");
    assert!(value.contains("-[grid: gpu.grid<X<nb>, X<nt>>]-> () where nt >= 1"), "{value}");

    // Formatting: one edit replacing the document with `strata fmt`'s text; none when formatted.
    let messy_uri = "file:///tmp/messy.strata";
    let messy = "fn main() -[t: cpu.thread]-> () {\nlet x   =  1;\n    println(x)   ;\n}";
    s.open(messy_uri, messy);
    let edits = s.request(
        "textDocument/formatting",
        json!({
            "textDocument": { "uri": messy_uri }, "options": { "tabSize": 4, "insertSpaces": true }
        }),
    )["result"]
        .clone();
    let formatted = "fn main() -[t: cpu.thread]-> () {\n    let x = 1;\n    println(x);\n}\n";
    assert_eq!(edits, json!([{ "range": range(0, 0, 3, 1), "newText": formatted }]));
    let edits = s.request(
        "textDocument/formatting",
        json!({
            "textDocument": { "uri": &uri }, "options": { "tabSize": 4, "insertSpaces": true }
        }),
    )["result"]
        .clone();
    assert_eq!(edits, json!([]), "the examples are formatted");

    // An unknown request is an error answer, not the server's end.
    let r = s.request("strata/unknown", json!({}));
    assert_eq!(r["error"]["code"], json!(-32601), "{r}");

    let r = s.request("shutdown", json!(null));
    assert_eq!(r["result"], json!(null), "{r}");
    s.notify("exit", json!(null));
    let requests = s.requests;
    let status = s.wait();
    assert_eq!(status.code(), Some(0), "exit status after shutdown and exit");
    eprintln!("lsp: {requests} requests in {:?}", started.elapsed());
}

#[test]
fn a_client_that_skips_initialized_is_served() {
    let mut s = Server::start();
    let r = s.request("initialize", json!({ "capabilities": {} }));
    assert!(r["result"]["capabilities"].is_object(), "{r}");
    // No `initialized` notification: requests are answered all the same (a document that is not
    // open has no hover).
    assert_eq!(s.at("textDocument/hover", "file:///tmp/none.strata", 0, 0), json!(null));
    let r = s.request("textDocument/hover", json!({ "no": "position" }));
    assert_eq!(r["error"]["code"], json!(-32602), "bad parameters: {r}");
    s.request("shutdown", json!(null));
    s.notify("exit", json!(null));
    assert_eq!(s.wait().code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let mut s = Server::start();
    s.initialize();
    s.notify("exit", json!(null));
    assert_eq!(s.wait().code(), Some(1));
    // The client going away (its pipe closed) ends the server too.
    let mut s = Server::start();
    s.initialize();
    assert_eq!(s.wait().code(), Some(1));
}
