package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"termkeep/internal/remote"
	"termkeep/internal/wire"
)

// newRelayCmd is the hidden command a remote attach, ls or new runs on
// the remote machine over ssh (internal/remote): it connects to this
// machine's server, starting one when none runs, and relays its standard
// input and output to it, unchanged, after one preamble line with its
// versions (docs/protocol.md, "Over ssh").
//
// With --again (a reconnect, which nobody typed) it starts no server that
// was shut down on purpose, as a local attach reconnecting starts none.
func newRelayCmd(g *globals) *cobra.Command {
	var again bool
	cmd := &cobra.Command{
		Use:    remote.RelayArg,
		Short:  "Relay standard input and output to the server (what remote attach runs over ssh)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if again {
				c, err := g.uncheckedClient()
				if err != nil {
					return err
				}
				if _, err := c.Health(cmd.Context()); err != nil && c.Dir().StoppedOnPurpose() {
					return errors.New(stoppedWhy)
				}
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			conn, err := c.Conn(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			// Its end (ssh's connection gone, the server gone) is the
			// relay's: nothing to say.
			remote.Relay(os.Stdin, os.Stdout, conn, remote.Versions{Relay: remote.RelayVersion, Protocol: wire.Version, Min: wire.MinVersion})
			return nil
		},
	}
	cmd.Flags().BoolVar(&again, remote.AgainFlag, false, "a reconnect: start no server that was shut down on purpose")
	return cmd
}
