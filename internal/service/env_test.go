package service

import (
	"slices"
	"strings"
	"testing"
)

func TestImportEnv(t *testing.T) {
	env := map[string]string{
		"PATH":            "/usr/bin:/bin",
		"LANG":            "C.UTF-8",
		"DISPLAY":         "",          // set but empty: nothing to carry
		"SSH_AUTH_SOCK":   "/tmp/a\nb", // a newline cannot be kept in the file
		"HOME":            "/home/ann", // not one of ours
		"WAYLAND_DISPLAY": "wayland-0",
	}
	got, skipped := ImportEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want := []Var{{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}, {"WAYLAND_DISPLAY", "wayland-0"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ImportEnv = %q, want %q", got, want)
	}
	if !slices.Equal(skipped, []string{"SSH_AUTH_SOCK"}) {
		t.Fatalf("skipped = %q, want SSH_AUTH_SOCK", skipped)
	}
}

func TestEnvFileRoundTrip(t *testing.T) {
	vars := []Var{
		{"PATH", "/a b:/c"}, {"Q", `say "hi" \ $HOME ` + "`x`"}, {"EMPTY", ""}, {"U", "é ünï"}, {"HASH", "#not a comment"},
	}
	b := EnvFile(vars)
	if !strings.HasPrefix(string(b), "# ") {
		t.Errorf("no header comment:\n%s", b)
	}
	got, err := ParseEnvFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, vars) {
		t.Fatalf("round trip: %q, want %q\n%s", got, vars, b)
	}
}

func TestParseEnvFile(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Var
		err  string
	}{
		{"A=1\nB=two\n", []Var{{"A", "1"}, {"B", "two"}}, ""},
		{"# comment\n; other\n\n  \nA=1", []Var{{"A", "1"}}, ""},
		{`A="x \"y\" \\ \$"`, []Var{{"A", `x "y" \ $`}}, ""},
		{`A='single $x'`, []Var{{"A", "single $x"}}, ""},
		{"export A=1", []Var{{"A", "1"}}, ""},
		{"A = spaced ", []Var{{"A", "spaced"}}, ""},
		{"no equals sign", nil, "line 1"},
		{"=value", nil, "line 1"},
		{"1A=x", nil, "line 1"},
		{`A="unterminated`, nil, "line 1"},
		{"A=1\nB=\"x\" trailing", nil, "line 2"},
		{"\x00=1", nil, "line 1"},
	} {
		got, err := ParseEnvFile([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseEnvFile(%q) = %q, %v; want an error about %s", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseEnvFile(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseEnvFile(f *testing.F) {
	f.Add([]byte("A=1\nB=\"x y\"\n# c\n"))
	f.Add(EnvFile([]Var{{"Q", `"\$`}}))
	f.Add([]byte("A='"))
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := ParseEnvFile(b)
		if err != nil {
			return
		}
		// What parses, written again, parses to the same.
		again, err := ParseEnvFile(EnvFile(vars))
		if err != nil || !slices.Equal(again, vars) {
			t.Fatalf("%q: written again parses to %q, %v", vars, again, err)
		}
	})
}
