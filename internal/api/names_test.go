package api

import (
	"regexp"
	"strings"
	"testing"
)

// nameRE is the rule NameRE keeps, as a regular expression: the tests hold
// the hand-written matcher to it.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)

func TestNameRE(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"work", true}, {"a", true}, {"9", true}, {"web-1", true}, {"me@host+x_y.z", true},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
		{"", false}, {"-x", false}, {".x", false}, {"_x", false}, {"@x", false}, {"+x", false},
		{"a b", false}, {"a/b", false}, {"a\x00", false}, {"a\n", false}, {"é", false}, {"aé", false},
		{"a\xff", false}, {"A..b", true}, {"Z" + strings.Repeat("-", 63), true},
	} {
		if got := NameRE.MatchString(c.name); got != c.ok || got != nameRE.MatchString(c.name) {
			t.Errorf("%q: %v, want %v", c.name, got, c.ok)
		}
	}
}

func FuzzNameRE(f *testing.F) {
	for _, s := range []string{"work", "", "-x", strings.Repeat("a", 65), "a\xff", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := NameRE.MatchString(s), nameRE.MatchString(s); got != want {
			t.Fatalf("%q: %v, the rule says %v", s, got, want)
		}
	})
}

// A name shaped like a session id is refused for a session: a session
// given that id later would hide it.
func TestSessionNameProblem(t *testing.T) {
	idShape := regexp.MustCompile(`^[a-z][a-z2-7]{7}$`)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"work", true}, {"abcd2345", false}, {"zzzzzzzz", false}, {"frontend", false},
		{"abcd2341", true}, {"abcd-234", true}, {"Abcd2345", true}, {"2bcd2345", true},
		{"abcd23456", true}, {"abcd234", true}, {"a..b", false}, {"", false},
	} {
		p := SessionNameProblem(c.name)
		if (p == "") != c.ok {
			t.Errorf("%q: %q, want ok %v", c.name, p, c.ok)
		}
		if LooksLikeID(c.name) != idShape.MatchString(c.name) {
			t.Errorf("%q: LooksLikeID %v", c.name, LooksLikeID(c.name))
		}
	}
}
