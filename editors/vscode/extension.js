// The Tessera extension: starts tessera-lsp over stdio for .tessera files.
"use strict";
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function createClient() {
  const config = vscode.workspace.getConfiguration("tessera");
  const command = config.get("server.path", "tessera-lsp");
  const args = config.get("server.args", []);
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "tessera" }, { scheme: "untitled", language: "tessera" }],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.tessera") },
  };
  return new LanguageClient("tessera", "Tessera", serverOptions, clientOptions);
}

async function activate(context) {
  client = createClient();
  context.subscriptions.push(
    vscode.commands.registerCommand("tessera.restartServer", async () => {
      if (client) await client.stop();
      client = createClient();
      await client.start();
    })
  );
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `Tessera: could not start tessera-lsp (${err.message}). Set "tessera.server.path" to the server's path.`
    );
  }
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
