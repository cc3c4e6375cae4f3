//go:build lean

package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"
)

// The lean build's serve, mcp and doctor (split.go): each hands its whole
// command line, flags and help requests included, to termkeep-server.

func newServeCmd(*globals) *cobra.Command  { return serverCmd("serve", serveShort) }
func newMCPCmd(*globals) *cobra.Command    { return serverCmd("mcp", mcpShort) }
func newDoctorCmd(*globals) *cobra.Command { return serverCmd("doctor", doctorShort) }

// holderMain hands the hidden holder mode over too: a server of the full
// build starts termkeep-holder, or itself, never this binary; only a
// server of an older install may.
func holderMain() int {
	err := execServer()
	fmt.Fprintln(os.Stderr, "termkeep: "+err.Error())
	return exitError
}

func serverCmd(use, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:                use,
		Short:              short,
		DisableFlagParsing: true, // termkeep-server parses them
		RunE:               func(*cobra.Command, []string) error { return execServer() },
		// Shell completion of its flags comes from termkeep-server too.
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			execServer()
			return nil, cobra.ShellCompDirectiveError
		},
	}
	// `termkeep help serve` shows termkeep-server's help, flags included.
	cmd.SetHelpFunc(func(*cobra.Command, []string) {
		if err := execServer(); err != nil {
			fmt.Fprintln(os.Stderr, "termkeep: "+err.Error())
			os.Exit(exitError)
		}
	})
	return cmd
}

// execServer replaces this process with termkeep-server, given the same
// arguments (its name as typed included, for the commands the server
// prints) and environment. It returns only when it cannot.
func execServer() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the termkeep binary: %w", err)
	}
	path := serverBinary(exe)
	err = syscall.Exec(path, os.Args, os.Environ())
	return fmt.Errorf("run %s: %w (make install puts it beside termkeep; `go build ./cmd/termkeep` builds a termkeep that needs none)", path, err)
}
