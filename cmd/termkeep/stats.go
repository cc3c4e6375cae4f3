package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
)

// stats reads the server's figures: it targets no session and writes
// nothing.
func newStatsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print the server's uptime and each session's viewers, traffic and log size",
		Long: `Print the server's version and uptime, then a row per session: its state, how
long it has existed, when it last printed or was typed into, its viewers, the
output it has printed since it began, the input sent to it since the server
took it up, and what its output log takes on disk. --json prints the answer of
GET /v1/stats as it is. For monitoring, the server also serves Prometheus
metrics at /metrics (docs/protocol.md, "Visibility").`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			st, err := c.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			ready := ""
			if !st.Ready {
				ready = ", still starting"
			}
			fmt.Fprintf(os.Stdout, "termkeep %s, pid %d, up %s%s\n", st.Version, st.Pid,
				span(time.Duration(st.UptimeSeconds*float64(time.Second))), ready)
			if len(st.Sessions) == 0 {
				fmt.Fprintln(os.Stderr, "no sessions (start one with `termkeep new`)")
				return nil
			}
			fmt.Fprintln(os.Stdout)
			t := statsTable()
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(t.header, "\t"))
			var out, in uint64
			var disk int64
			viewers := 0
			for _, s := range st.Sessions {
				fmt.Fprintln(tw, strings.Join(t.row(s), "\t"))
				out, in, disk, viewers = out+s.BytesOut, in+s.BytesIn, disk+s.LogBytes, viewers+s.Viewers
			}
			total := fmt.Sprintf("%d sessions", len(st.Sessions))
			if len(st.Sessions) == 1 {
				total = "1 session"
			}
			fmt.Fprintf(tw, "%s\t\t\t\t\t%d\t%s\t%s\t%s\n", total, viewers,
				byteSize(int64(out)), byteSize(int64(in)), byteSize(disk))
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the JSON answer")
	return cmd
}

func statsTable() table[api.SessionStats] {
	return table[api.SessionStats]{
		header: []string{"ID", "NAME", "STATE", "UPTIME", "LAST ACTIVE", "VIEWERS", "OUT", "IN", "LOG"},
		row: func(s api.SessionStats) []string {
			name := s.Name
			if name == "" {
				name = "-"
			}
			last := "-"
			if !s.LastActivity.IsZero() {
				last = ago(s.LastActivity)
			}
			return []string{s.ID, name, s.State, span(time.Duration(s.UptimeSeconds * float64(time.Second))), last,
				fmt.Sprint(s.Viewers), byteSize(int64(s.BytesOut)), byteSize(int64(s.BytesIn)), byteSize(s.LogBytes)}
		},
	}
}

// span is a duration as people read it: 45s, 12m, 3h05m, 4d02h.
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// byteSize is n bytes in binary units, the way --log-retention takes them.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
}
