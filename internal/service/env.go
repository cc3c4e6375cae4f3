package service

import (
	"bytes"
	"fmt"
	"strings"
)

// Imported are the variables of the login environment that sessions need
// and a service manager does not give them: where programs are, the SSH
// agent, the language, the graphical display.
var Imported = []string{"PATH", "SSH_AUTH_SOCK", "LANG", "DISPLAY", "WAYLAND_DISPLAY"}

// ImportEnv returns the Imported variables that are set and not empty, in
// Imported's order. A value with a newline or a NUL, which no environment
// file can carry on one line, is skipped and named in skipped.
func ImportEnv(getenv func(string) (string, bool)) (vars []Var, skipped []string) {
	for _, k := range Imported {
		v, ok := getenv(k)
		if !ok || v == "" {
			continue
		}
		if strings.ContainsAny(v, "\n\x00") {
			skipped = append(skipped, k)
			continue
		}
		vars = append(vars, Var{k, v})
	}
	return vars, skipped
}

// EnvFile renders vars as a systemd environment file: one KEY="VALUE" a
// line, with ", \, ` and $ escaped as systemd reads them.
func EnvFile(vars []Var) []byte {
	var b bytes.Buffer
	b.WriteString("# The login environment termkeep's service gives its sessions, written by\n# termkeep service install (run it again to refresh it).\n")
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", "$", `\$`)
	for _, v := range vars {
		fmt.Fprintf(&b, "%s=\"%s\"\n", v.Name, esc.Replace(v.Value))
	}
	return b.Bytes()
}

// ParseEnvFile reads an environment file: the lines EnvFile writes, and
// the plain forms a person adds by hand (KEY=value, KEY='value', export,
// comments). A value spread over lines is refused with its line number.
func ParseEnvFile(b []byte) ([]Var, error) {
	var vars []Var
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		v, err := parseEnvLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		vars = append(vars, v)
	}
	return vars, nil
}

func parseEnvLine(line string) (Var, error) {
	line = strings.TrimPrefix(line, "export ")
	name, val, ok := strings.Cut(line, "=")
	if !ok {
		return Var{}, fmt.Errorf("no = in %q", line)
	}
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	if !validName(name) {
		return Var{}, fmt.Errorf("%q is not a variable name", name)
	}
	var out strings.Builder
	switch {
	case strings.HasPrefix(val, "'"):
		end := strings.IndexByte(val[1:], '\'')
		if end < 0 {
			return Var{}, fmt.Errorf("%s: the quote is not closed on its line", name)
		}
		out.WriteString(val[1 : 1+end])
		val = val[2+end:]
	case strings.HasPrefix(val, `"`):
		i := 1
		for ; i < len(val) && val[i] != '"'; i++ {
			if val[i] == '\\' && i+1 < len(val) {
				i++
				if !strings.ContainsRune("\"\\`$", rune(val[i])) {
					out.WriteByte('\\') // systemd keeps a backslash it does not need
				}
			}
			out.WriteByte(val[i])
		}
		if i >= len(val) {
			return Var{}, fmt.Errorf("%s: the quote is not closed on its line", name)
		}
		val = val[i+1:]
	default:
		for i := 0; i < len(val); i++ {
			if val[i] == '\\' && i+1 < len(val) {
				i++
			}
			out.WriteByte(val[i])
		}
		val = ""
	}
	if strings.TrimSpace(val) != "" {
		return Var{}, fmt.Errorf("%s: text after the closing quote", name)
	}
	return Var{name, out.String()}, nil
}

func validName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
