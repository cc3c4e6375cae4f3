package main

import (
	"testing"

	"termkeep/internal/deptest"
)

// The lean termkeep (attach and the other client commands) links none of
// what only the server, the MCP server and doctor need: their package
// initialisers would run before main in every command.
func TestLeanBuildLinksNoServer(t *testing.T) {
	deptest.ForbidTagged(t, "lean", "termkeep/cmd/termkeep", map[string]string{
		"termkeep/internal/server":                         "the server runs in termkeep-server",
		"termkeep/internal/store":                          "the registry is the server's (and doctor's)",
		"termkeep/internal/holder":                         "holders run termkeep-holder (or termkeep-server's holder mode)",
		"termkeep/internal/mcp":                            "termkeep mcp runs in termkeep-server",
		"termkeep/web":                                     "the embedded web UI is the server's",
		"modernc.org/sqlite":                               "SQLite's initialisers cost every command",
		"github.com/prometheus/client_golang/prometheus":   "registers its collectors at init",
		"github.com/modelcontextprotocol/go-sdk/mcp":       "the MCP SDK and its JSON schemas",
		"github.com/google/jsonschema-go/jsonschema":       "compiles regular expressions at init",
		"google.golang.org/protobuf/reflect/protoregistry": "Prometheus's protobuf registry",
	})
}

func TestServerBinary(t *testing.T) {
	for _, tc := range []struct{ exe, want string }{
		{"/usr/local/bin/termkeep", "/usr/local/bin/termkeep-server"},
		{"bin/termkeep", "bin/termkeep-server"},
		{"/home/a b/.local/bin/tk", "/home/a b/.local/bin/termkeep-server"}, // a renamed front
		{"termkeep", "termkeep-server"},
		{"/termkeep", "/termkeep-server"},
	} {
		if got := serverBinary(tc.exe); got != tc.want {
			t.Errorf("serverBinary(%q) = %q, want %q", tc.exe, got, tc.want)
		}
	}
}

func TestFrontBinary(t *testing.T) {
	have := map[string]bool{"/opt/tk/termkeep": true}
	exists := func(p string) bool { return have[p] }
	for _, tc := range []struct{ exe, want string }{
		{"/opt/tk/termkeep-server", "/opt/tk/termkeep"},  // run by the lean termkeep
		{"/opt/tk/termkeep", "/opt/tk/termkeep"},         // the full build as termkeep
		{"/srv/termkeep-server", "/srv/termkeep-server"}, // alone: names itself
		{"/opt/tk/termkeep-server2", "/opt/tk/termkeep-server2"},
		{"/opt/termkeep-server/x", "/opt/termkeep-server/x"}, // the directory's name is no binary's
	} {
		if got := frontBinary(tc.exe, exists); got != tc.want {
			t.Errorf("frontBinary(%q) = %q, want %q", tc.exe, got, tc.want)
		}
	}
}
