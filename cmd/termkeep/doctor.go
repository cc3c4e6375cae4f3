//go:build !lean

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"termkeep/internal/doctor"
	"termkeep/internal/statedir"
)

// newDoctorCmd checks the state directory offline, without a server: it
// writes only with --repair or --rebuild, and then only while no server runs.
func newDoctorCmd(g *globals) *cobra.Command {
	var opts doctor.Options
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: doctorShort,
		Long: `doctor checks the state directory without a server: permissions, holder
sockets no holder listens on, torn or damaged output logs, leftover temporary
files, the registry against the session directories, and a registry rolled
back (behind the generation kept beside it: what it recorded since its last
checkpoint lost, as with a garbled WAL). It prints one line
per finding (ok, warn or error) with what --repair or --rebuild would do, and
exits 1 while an error remains.

--repair chmods, removes orphaned sockets and temporary files, truncates torn
log tails of sessions whose holder is gone, and drops registry rows whose
directory is missing. --rebuild adopts session directories the registry does
not know (with their names, workspaces and settings), makes workspaces it
lacks again from the copy kept beside it, resolves a rollback and, when the
registry is missing or cannot be opened, moves it aside and makes a new one
from every session's meta.json. Both need the
server stopped (termkeep shutdown); plain checks run read-only beside one.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := statedir.Resolve(g.stateDir)
			if err != nil {
				return err
			}
			rep, err := doctor.Run(cmd.Context(), dir, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if rep.ReadOnly {
				note := "note: a server is running"
				if rep.ServerPid > 0 {
					note = fmt.Sprintf("note: a server is running (pid %d)", rep.ServerPid)
				}
				fmt.Fprintln(out, note+": checking read-only; stop it (termkeep shutdown) to repair")
			}
			for _, f := range rep.Findings {
				fmt.Fprintln(out, f)
			}
			if rep.Rebuilt {
				fmt.Fprintf(out, "registry rebuilt: %d session(s) recovered\n", rep.Recovered)
			}
			if rep.Failed() {
				return &exitErr{code: exitError, msg: "doctor found errors it did not repair (see above)"}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.Repair, "repair", false, "fix permissions, sockets, torn logs, temporary files and rows without a directory")
	cmd.Flags().BoolVar(&opts.Rebuild, "rebuild", false, "adopt unknown session directories; rebuild a missing or broken registry from meta.json")
	return cmd
}
