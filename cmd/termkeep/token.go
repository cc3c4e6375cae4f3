package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

func newTokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Access tokens for the browser listener: create, ls, revoke",
		Long: `An access token lets a browser (or any HTTP client) in through the server's
browser listener as a user, narrowed to what the token allows: one session
(a share link), one workspace, read only, until it expires. The owner token
(` + "`termkeep url`" + `) keeps full access.

A token's secret is printed once, when it is made: the server keeps only its
SHA-256 and cannot show it again. Revoking a token disconnects its viewers.

A browser opened with a token's address (or ` + "`termkeep url`" + `'s) swaps it for a
credential of its own, kept in that page's origin only; it acts as the token
it came from and expires after 14 days unused. ` + "`termkeep token ls --browsers`" + `
lists them (IDs b-…), and ` + "`termkeep token revoke`" + ` takes their IDs too, signing
that browser out at once. Revoking a token signs out every browser that
signed in with it.

Warning: ` + api.WritableWarning + `.
Only a --read-only token is narrower than your own access.`,
	}
	cmd.AddCommand(newTokenCreateCmd(g), newTokenLsCmd(g), newTokenRevokeCmd(g))
	return cmd
}

func newTokenCreateCmd(g *globals) *cobra.Command {
	var (
		req     api.TokenRequest
		expires string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make an access token and print its secret and address (once)",
		Long: `Make an access token and print its secret and the address that opens
termkeep in a browser with it. Without --user the token is yours (the
owner's), or with --session the session owner's. Without --session or
--workspace it reaches every session of its user; with --read-only its
viewers can watch but not type, and it cannot create, rename, close or
restore sessions.

Warning: ` + api.WritableWarning + `.`,
		Example: `  termkeep token create --session web --read-only --expires 2h   # a share link
  termkeep token create --user alice --workspace api --name "alice's laptop"`,
		Args: exactArgs(0, "no arguments (see the flags)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.Session != "" && req.Workspace != "" {
				return usageErr("give --session or --workspace, not both: a token reaches one session or one workspace")
			}
			if expires != "" {
				d, err := parseLifetime(expires)
				if err != nil {
					return usageErr("%v", err)
				}
				req.ExpiresIn = int64(math.Ceil(d.Seconds()))
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			t, err := c.CreateToken(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(t)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 1, ' ', 0)
			fmt.Fprintf(tw, "id:\t%s\n", t.ID)
			fmt.Fprintf(tw, "user:\t%s\n", t.User)
			fmt.Fprintf(tw, "reaches:\t%s, %s\n", tokenScope(t.Token), tokenMode(t.Token))
			fmt.Fprintf(tw, "expires:\t%s\n", tokenExpiry(t.Token))
			fmt.Fprintf(tw, "secret:\t%s\n", t.Secret)
			if t.URL != "" {
				fmt.Fprintf(tw, "url:\t%s\n", t.URL)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "The secret is shown only this once: termkeep keeps its hash. `termkeep token revoke %s` revokes it.\n", t.ID)
			if t.Warning != "" {
				fmt.Fprintf(os.Stderr, "Warning: %s.\n", t.Warning)
			}
			if t.URL == "" {
				fmt.Fprintln(os.Stderr, "The server has no browser listener now (see `termkeep serve --help`, --listen); send the secret as Authorization: Bearer once it has.")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.User, "user", "", "whose sessions the token reaches (default: yours, or the --session's owner)")
	f.StringVar(&req.Session, "session", "", "reach this one session only (id or name): a share link")
	f.StringVar(&req.Workspace, "workspace", "", "reach the sessions of this workspace only")
	f.BoolVar(&req.ReadOnly, "read-only", false, "watch only: read-only viewers, no changes")
	f.StringVar(&expires, "expires", "", "lifetime, e.g. 30m, 2h, 7d (default: never)")
	f.StringVar(&req.Name, "name", "", "a `label` to tell tokens apart in termkeep token ls")
	f.BoolVar(&asJSON, "json", false, "print the token, secret and url as JSON")
	return cmd
}

// parseLifetime reads a Go duration, or a whole number of days ("7d").
func parseLifetime(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > 0 {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--expires %q is not a lifetime: use e.g. 90s, 30m, 2h or 7d", s)
	}
	return d, nil
}

func newTokenLsCmd(g *globals) *cobra.Command {
	tokens := newTokenListCmd(g)
	browsers := newListCmd(g, "", (*client.Client).BrowserSessions, table[api.BrowserSession]{
		header: []string{"ID", "USER", "FROM", "BROWSER", "STATE", "SIGNED IN", "LAST USED"},
		empty:  "no browser has signed in (open the address `termkeep url` prints)",
		row: func(b api.BrowserSession) []string {
			from, label := "owner token", b.Label
			if b.From != "owner" {
				from = "token " + b.From
				if b.TokenName != "" {
					from += " (" + b.TokenName + ")"
				}
			}
			if label == "" {
				label = "-"
			}
			return []string{b.ID, b.User, from, label, b.State, ago(b.CreatedAt), ago(b.LastUsedAt)}
		},
	})
	var showBrowsers bool
	listTokens := tokens.RunE
	tokens.RunE = func(cmd *cobra.Command, args []string) error {
		if !showBrowsers {
			return listTokens(cmd, args)
		}
		if err := browsers.Flags().Set("json", tokens.Flags().Lookup("json").Value.String()); err != nil {
			return err
		}
		return browsers.RunE(cmd, args)
	}
	tokens.Flags().BoolVar(&showBrowsers, "browsers", false, "list the browsers signed in with a credential of their own instead")
	return tokens
}

func newTokenListCmd(g *globals) *cobra.Command {
	return newListCmd(g, "List access tokens (never their secrets), or with --browsers the signed-in browsers", (*client.Client).Tokens, table[api.Token]{
		header: []string{"ID", "NAME", "USER", "SCOPE", "MODE", "STATE", "EXPIRES", "LAST USED"},
		empty:  "no access tokens (make one with `termkeep token create`)",
		row: func(t api.Token) []string {
			name, used := t.Name, "never"
			if name == "" {
				name = "-"
			}
			if t.LastUsedAt != nil {
				used = ago(*t.LastUsedAt)
			}
			return []string{t.ID, name, t.User, tokenScope(t), tokenMode(t), t.State, tokenExpiry(t), used}
		},
	})
}

func newTokenRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID...",
		Short: "Revoke access tokens or signed-in browsers and disconnect their viewers",
		Long: `Revoke access tokens (IDs from ` + "`termkeep token ls`" + `) or signed-in browsers
(IDs b-… from ` + "`termkeep token ls --browsers`" + `). Their viewers and event
streams end at once; a revoked token's browsers are signed out with it.`,
		Args: minArgs(1, "the ID of a token or a browser (see `termkeep token ls` and `termkeep token ls --browsers`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			for _, id := range args {
				if strings.HasPrefix(id, "b-") {
					b, err := c.RevokeBrowserSession(cmd.Context(), id)
					if err != nil {
						return err
					}
					fmt.Println(b.ID)
					continue
				}
				t, err := c.RevokeToken(cmd.Context(), id)
				if err != nil {
					return err
				}
				fmt.Println(t.ID)
			}
			return nil
		},
	}
}

func tokenScope(t api.Token) string {
	switch {
	case t.Session != "" && t.SessionName != "":
		return "session " + t.SessionName
	case t.Session != "":
		return "session " + t.Session
	case t.Workspace != "":
		return "workspace " + t.Workspace
	}
	return "all of " + t.User + "'s sessions"
}

func tokenMode(t api.Token) string {
	if t.ReadOnly {
		return "read-only"
	}
	return "control"
}

func tokenExpiry(t api.Token) string {
	if t.ExpiresAt == nil {
		return "never"
	}
	d := time.Until(*t.ExpiresAt)
	if d <= 0 {
		return "expired " + ago(*t.ExpiresAt)
	}
	return t.ExpiresAt.Local().Format("2006-01-02 15:04") + " (in " + d.Round(time.Second).String() + ")"
}
