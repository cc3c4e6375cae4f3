package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
)

// events reads the server's history: it writes nothing.
func newEventsCmd(g *globals) *cobra.Command {
	var (
		follow, asJSON, all bool
		after               int64
		types               []string
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print what happened: sessions created and ended, viewers attached and detached",
		Long: `Print the server's event history, oldest first: session.created,
viewer.attached, viewer.detached, session.renamed, session.closed, process.exited,
session.interrupted, machine.restarted (the machine restarted under
running sessions), registry.rolled_back (the registry lost changes it had
recorded: run termkeep doctor --rebuild), session.restored, session.paused, session.quiet (printed
nothing for a while: it may wait for input), session.removed, session.pruned
(removed by the server past --keep-ended or --keep-ended-bytes), workspace.created,
workspace.removed, user.added, user.removed (its tokens revoked),
token.created, token.revoked, browser.signed_in (a browser swapped a token
for a credential of its own) and browser.revoked. With --follow, keep printing new events
until interrupted. --json prints one JSON object per line.

--type KIND (repeatable) prints only those kinds: a whole kind
(session.created) or its first part (session, viewer, token). The table
leaves out session.quiet, which comes often, unless --type asks for it or
--all is given; --json prints every event.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if after < 0 {
				return usageErr("--after must be an event id (0 or more)")
			}
			if err := checkEventTypes(types); err != nil {
				return err
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			keep := eventFilter{types: types, all: all || asJSON}
			enc := json.NewEncoder(os.Stdout)
			header := false
			err = c.Events(cmd.Context(), after, follow, func(e api.Event) error {
				if !keep.keeps(e.Kind) {
					return nil
				}
				if asJSON {
					return enc.Encode(e)
				}
				if !header {
					fmt.Fprintf(os.Stdout, "%-6s  %-19s  %-19s  %-8s  %s\n", "ID", "TIME", "KIND", "SESSION", "DETAIL")
					header = true
				}
				_, err := fmt.Fprintf(os.Stdout, "%-6d  %s  %-19s  %-8s  %s\n", e.ID,
					e.At.Local().Format("2006-01-02 15:04:05"), e.Kind, e.Session, detailText(e.Detail))
				return err
			})
			if follow && errors.Is(err, context.Canceled) {
				return nil // interrupted: the normal way to stop following
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per line")
	f.Int64Var(&after, "after", 0, "print only events after this id")
	f.StringArrayVar(&types, "type", nil, "print only this kind of event (session.created), or kinds starting with it (session); repeatable")
	f.BoolVar(&all, "all", false, "print session.quiet events too")
	return cmd
}

// eventKinds are the kinds of event the registry records (the Event*
// constants of internal/store/events.go, which the lean CLI does not
// link; a test keeps the two the same).
var eventKinds = []string{
	"session.created", "session.renamed", "session.removed", "session.pruned",
	"viewer.attached", "viewer.detached", "session.closed", "process.exited",
	"session.interrupted", "session.restored", "session.paused", "session.quiet",
	"machine.restarted", "registry.rolled_back", "workspace.created", "workspace.removed",
	"user.added", "user.removed", "token.created", "token.revoked",
	"browser.signed_in", "browser.revoked",
}

// checkEventTypes refuses a --type that no event has, as kind or first
// part: a misspelt one would print nothing, as if nothing had happened.
func checkEventTypes(types []string) error {
	var parts []string
	for _, k := range eventKinds {
		if p, _, _ := strings.Cut(k, "."); !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	for _, t := range types {
		if !slices.Contains(eventKinds, t) && !slices.Contains(parts, t) {
			return usageErr("--type %q is no kind of event: give one of %s, or a first part: %s",
				t, strings.Join(eventKinds, ", "), strings.Join(parts, ", "))
		}
	}
	return nil
}

// eventFilter says which events a listing prints.
type eventFilter struct {
	types []string // kinds or their first parts; none: every kind
	all   bool     // session.quiet too, when types does not name it
}

// noisy kinds come often and are left out unless asked for.
var noisy = map[string]bool{"session.quiet": true}

func (f eventFilter) keeps(kind string) bool {
	if len(f.types) == 0 {
		return f.all || !noisy[kind]
	}
	for _, t := range f.types {
		if kind == t {
			return true
		}
		if strings.HasPrefix(kind, t+".") && (f.all || !noisy[kind]) {
			return true
		}
	}
	return false
}

// detailText renders an event's detail as key=value pairs, keys sorted.
func detailText(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		var s string
		switch v := v.(type) {
		case nil:
			s = "-"
		case string:
			if v == "" {
				continue
			}
			s = v
			if strings.ContainsAny(s, " \t\"") {
				s = fmt.Sprintf("%q", s)
			}
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, " ")
}
