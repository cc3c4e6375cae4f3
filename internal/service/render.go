package service

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

// UnitName is the systemd user unit's name; Label the launchd agent's.
const (
	UnitName = "termkeep.service"
	Label    = "termkeep"
)

// Spec is what the service runs: `Binary serve --state-dir StateDir Args...`.
// The state directory is always named, so that the service and the CLI
// agree on it whatever the service manager's environment says.
type Spec struct {
	Binary   string
	StateDir string
	Args     []string // more flags for serve
	// EnvFile is the systemd unit's environment file; launchd has none,
	// so the agent carries Env itself.
	EnvFile string
	Env     []Var
	LogFile string // launchd: where the server's output goes
}

// Var is one environment variable.
type Var struct{ Name, Value string }

func (s Spec) argv() []string {
	return append([]string{s.Binary, "serve", "--state-dir", s.StateDir}, s.Args...)
}

// Unit renders the systemd user unit.
//
// KillMode=process: a stop or restart of the unit signals the server
// alone. The holders started by the server live in the unit's control
// group too, and the default (control-group) would end every session on
// each upgrade. SIGTERM is an orderly stop for the server, so no ExecStop.
// Restart=on-failure: `termkeep shutdown` (exit 0) stops it for good.
func Unit(s Spec) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Written by termkeep service install; termkeep service uninstall removes it.
[Unit]
Description=termkeep terminal session server

[Service]
Type=simple
ExecStart=%s
EnvironmentFile=-%s
Restart=on-failure
RestartSec=2s
# Stop the server only: the sessions' holders must outlive its restarts and upgrades.
KillMode=process

[Install]
WantedBy=default.target
`, execQuote(s.argv()), unitEscape(s.EnvFile))
	return b.Bytes()
}

// unitEscape makes s a literal value of a unit setting that expands
// specifiers (%).
func unitEscape(s string) string {
	return strings.ReplaceAll(s, "%", "%%")
}

// execQuote writes argv as an Exec*= line that systemd splits back into
// exactly argv: no specifier (%) or variable ($) expanded, each argument
// one word.
func execQuote(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		a = strings.NewReplacer("%", "%%", "$", "$$").Replace(a)
		switch {
		case a == ";":
			a = `\;` // a lone ; separates commands
		case a == "" || strings.ContainsAny(a, " \t\n\r\"'\\;"):
			a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(a) + `"`
		}
		words[i] = a
	}
	return strings.Join(words, " ")
}

// Plist renders the launchd agent: started at login, started again when
// it fails (KeepAlive's SuccessfulExit false, as Restart=on-failure), and
// AbandonProcessGroup so that stopping it never signals what the server
// started (KillMode=process). The environment is in the agent itself.
func Plist(s Spec) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by termkeep service install; termkeep service uninstall removes it. -->
<plist version="1.0">
<dict>
`)
	key := func(k string) { fmt.Fprintf(&b, "\t<key>%s</key>\n", xmlText(k)) }
	str := func(indent, v string) { fmt.Fprintf(&b, "%s<string>%s</string>\n", indent, xmlText(v)) }
	key("Label")
	str("\t", Label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range s.argv() {
		str("\t\t", a)
	}
	b.WriteString("\t</array>\n")
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	key("ThrottleInterval")
	b.WriteString("\t<integer>2</integer>\n")
	key("AbandonProcessGroup")
	b.WriteString("\t<true/>\n")
	key("ProcessType")
	str("\t", "Interactive")
	if len(s.Env) > 0 {
		key("EnvironmentVariables")
		b.WriteString("\t<dict>\n")
		for _, v := range s.Env {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n", xmlText(v.Name))
			str("\t\t", v.Value)
		}
		b.WriteString("\t</dict>\n")
	}
	if s.LogFile != "" {
		key("StandardOutPath")
		str("\t", s.LogFile)
		key("StandardErrorPath")
		str("\t", s.LogFile)
	}
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes()
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// execSplit splits an Exec*= line as systemd does, for the forms
// execQuote writes: words apart by blanks, "" and ” quotes, backslash
// escapes, %% and $$. A lone % or $ (a specifier or variable, which
// systemd would expand) is refused.
func execSplit(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // in a word
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '%' || c == '$': // expanded before the line is split, in quotes too
			if i+1 >= len(line) || line[i+1] != c {
				return nil, fmt.Errorf("a lone %c at %d: systemd would expand it", c, i)
			}
			w.WriteByte(c)
			i++
			in = true
		case c == '\\':
			if i+1 >= len(line) {
				return nil, errors.New("a backslash ends the line")
			}
			i++
			switch line[i] {
			case 'n':
				w.WriteByte('\n')
			case 't':
				w.WriteByte('\t')
			default:
				w.WriteByte(line[i])
			}
			in = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("a quote is not closed")
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}
