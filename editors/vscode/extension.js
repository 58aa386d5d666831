// The VS Code client of `strata lsp` (docs/editor.md): starts the language server for `.strata`
// files. The command is the setting `strata.server.path` (default: `strata` on the PATH).
"use strict";
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("strata").get("server.path", "strata");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "strata",
    "Strata",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "strata" }, { scheme: "untitled", language: "strata" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
