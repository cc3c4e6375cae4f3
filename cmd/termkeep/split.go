package main

import "path/filepath"

// termkeep is built two ways (docs/architecture.md, "Processes").
// `go build ./cmd/termkeep` links everything: the server, the MCP server
// and doctor with the rest. make builds that as termkeep-server, and
// termkeep itself with the tag lean: every command but those three, which
// it hands to termkeep-server by exec. A command such as attach then
// starts without the initialisers of what only the server links
// (SQLite, Prometheus, the MCP SDK), which run before main.

// serverBinaryName is the full build, which make puts beside termkeep.
const serverBinaryName = "termkeep-server"

// The summaries of the commands only the full build runs, which the lean
// one lists as well.
const (
	serveShort  = "Run the termkeep server in the foreground"
	mcpShort    = "Serve termkeep's sessions to an AI agent (Model Context Protocol over stdio)"
	doctorShort = "Check the state directory offline, and repair it"
)

// serverBinary is where the full build sits for the lean one at exe.
func serverBinary(exe string) string {
	return filepath.Join(filepath.Dir(exe), serverBinaryName)
}

// frontBinary is the termkeep that handed this process its command, for
// the full build at exe: termkeep beside it when exe is termkeep-server
// and that exists; else exe.
func frontBinary(exe string, exists func(string) bool) string {
	if filepath.Base(exe) != serverBinaryName {
		return exe
	}
	if front := filepath.Join(filepath.Dir(exe), "termkeep"); exists(front) {
		return front
	}
	return exe
}
