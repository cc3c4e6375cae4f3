package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// `termkeep events --help` names every event kind the registry records
// (the Event* constants of internal/store/events.go).
func TestEventsHelpListsEveryKind(t *testing.T) {
	src, err := os.ReadFile("../../internal/store/events.go")
	if err != nil {
		t.Fatal(err)
	}
	kinds := regexp.MustCompile(`(?m)^\s*Event\w+\s*=\s*"([a-z]+\.[a-z]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(kinds) < 10 {
		t.Fatalf("found %d event kinds in internal/store/events.go; the pattern is out of date", len(kinds))
	}
	help := strings.Join(strings.Fields(newEventsCmd(&globals{}).Long), " ")
	for _, k := range kinds {
		if !regexp.MustCompile(`(^|[\s,(])` + regexp.QuoteMeta(k[1]) + `([\s,.(]|$)`).MatchString(help) {
			t.Errorf("termkeep events --help does not name %s", k[1])
		}
	}
}

func TestEventFilter(t *testing.T) {
	for _, c := range []struct {
		f    eventFilter
		kind string
		want bool
	}{
		{eventFilter{}, "session.created", true},
		{eventFilter{}, "session.quiet", false},
		{eventFilter{all: true}, "session.quiet", true},
		{eventFilter{types: []string{"session.quiet"}}, "session.quiet", true},
		{eventFilter{types: []string{"session"}}, "session.quiet", false},
		{eventFilter{types: []string{"session"}, all: true}, "session.quiet", true},
		{eventFilter{types: []string{"session"}}, "session.ended", true},
		{eventFilter{types: []string{"session"}}, "sessions.x", false},
		{eventFilter{types: []string{"viewer", "token.created"}}, "token.created", true},
		{eventFilter{types: []string{"viewer", "token.created"}}, "token.revoked", false},
		{eventFilter{types: []string{"viewer"}}, "viewer.attached", true},
	} {
		if got := c.f.keeps(c.kind); got != c.want {
			t.Errorf("%+v keeps %s = %v, want %v", c.f, c.kind, got, c.want)
		}
	}
}
