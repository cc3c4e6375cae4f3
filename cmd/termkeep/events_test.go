package main

import (
	"os"
	"regexp"
	"slices"
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
	kinds := regexp.MustCompile(`(?m)^\s*Event\w+\s*=\s*"([a-z]+\.[a-z_]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(kinds) < 10 {
		t.Fatalf("found %d event kinds in internal/store/events.go; the pattern is out of date", len(kinds))
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k[1])
	}
	if !slices.Equal(names, eventKinds) {
		t.Errorf("eventKinds = %v, want the kinds of internal/store/events.go: %v", eventKinds, names)
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

// A --type no event has, as kind or first part, is a usage error that
// lists the known ones; a misspelt one printed nothing.
func TestCheckEventTypes(t *testing.T) {
	for _, c := range []struct {
		types []string
		ok    bool
	}{
		{nil, true},
		{[]string{"session"}, true},
		{[]string{"session.created", "viewer", "browser.signed_in"}, true},
		{[]string{"sesion"}, false},
		{[]string{"session.create"}, false},
		{[]string{"viewer", "tokens"}, false},
		{[]string{"session."}, false},
		{[]string{""}, false},
	} {
		err := checkEventTypes(c.types)
		if (err == nil) != c.ok {
			t.Errorf("checkEventTypes(%q) = %v, want ok %v", c.types, err, c.ok)
		}
		if err != nil {
			if ee, ok := err.(*exitErr); !ok || ee.code != exitUsage || !strings.Contains(ee.msg, "session.created") {
				t.Errorf("%v: want a usage error listing the kinds", err)
			}
		}
	}
}
