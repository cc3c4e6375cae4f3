package mcp

import (
	"strings"
	"testing"
	"time"
)

// TestThrottle: the first change is told at once, changes within the
// interval fold into one told at its end, and a clock that goes back
// neither floods nor stalls.
func TestThrottle(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		due    bool // call due instead of change
		at     time.Time
		send   bool
		wake   time.Time
		dueNow bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first change at once", []step{{at: ms(0), send: true}}},
		{"a burst folds into one at the interval's end", []step{
			{at: ms(0), send: true},
			{at: ms(100), wake: ms(500)},
			{at: ms(200), wake: ms(500)},
			{due: true, at: ms(499), dueNow: false},
			{due: true, at: ms(500), dueNow: true},
			{due: true, at: ms(600), dueNow: false}, // told already
		}},
		{"a change after a quiet interval is told at once", []step{
			{at: ms(0), send: true},
			{at: ms(900), send: true},
		}},
		{"the clock went back: told no sooner than an interval later", []step{
			{at: ms(1000), send: true},
			{at: ms(10), wake: ms(1500)},
			{due: true, at: ms(20), dueNow: false},
			{due: true, at: ms(1500), dueNow: true},
		}},
		{"nothing pending is never due", []step{{due: true, at: ms(5000), dueNow: false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := &throttle{every: 500 * time.Millisecond}
			for i, s := range tc.steps {
				if s.due {
					if got := th.due(s.at); got != s.dueNow {
						t.Fatalf("step %d: due = %v, want %v", i, got, s.dueNow)
					}
					continue
				}
				send, wake := th.change(s.at)
				if send != s.send || !wake.Equal(s.wake) {
					t.Fatalf("step %d: change = %v, %v; want %v, %v", i, send, wake, s.send, s.wake)
				}
			}
		})
	}
}

func TestScreenRef(t *testing.T) {
	for uri, want := range map[string]string{
		"termkeep://sessions/web/screen":          "web",
		"termkeep://sessions/ab12cd34/screen":     "ab12cd34",
		"termkeep://sessions//screen":             "",
		"termkeep://sessions/a/b/screen":          "",
		"termkeep://sessions/web/screen/x":        "",
		"termkeep://sessions/web":                 "",
		"file://sessions/web/screen":              "",
		"termkeep://sessions/../../etc/screen":    "",
		"TERMKEEP://sessions/web/screen":          "",
		"termkeep://sessions/web%2Fx/screen":      "web%2Fx",
		"termkeep://sessions/web/screentermkeep/": "",
		"": "",
	} {
		if got := screenRef(uri); got != want {
			t.Errorf("screenRef(%q) = %q, want %q", uri, got, want)
		}
	}
}

// FuzzScreenRef: whatever the URI, the session named is one path segment
// that, put back in the template, gives the URI again.
func FuzzScreenRef(f *testing.F) {
	f.Add("termkeep://sessions/web/screen")
	f.Add("termkeep://sessions/a/b/screen")
	f.Add("termkeep://sessions//screen")
	f.Fuzz(func(t *testing.T, uri string) {
		ref := screenRef(uri)
		if ref == "" {
			return
		}
		if strings.Contains(ref, "/") || "termkeep://sessions/"+ref+"/screen" != uri {
			t.Fatalf("screenRef(%q) = %q", uri, ref)
		}
	})
}

// TestResources: the template, each visible running session's screen in
// resources/list, a read of one by name, and none beyond the scope.
func TestResources(t *testing.T) {
	fake := newFake() // s1 "web" running in workspace app, s2 exited
	c := startServer(t, fake)
	tpl := c.call("resources/templates/list", map[string]any{})["resourceTemplates"].([]any)
	if len(tpl) != 1 || tpl[0].(map[string]any)["uriTemplate"] != screenTemplate {
		t.Fatalf("templates: %v", tpl)
	}
	list := c.call("resources/list", map[string]any{})["resources"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["uri"] != "termkeep://sessions/s1/screen" {
		t.Fatalf("resources/list: %v", list)
	}
	got := c.call("resources/read", map[string]any{"uri": "termkeep://sessions/web/screen"})
	if contents, _ := got["contents"].([]any); len(contents) != 1 || contents[0].(map[string]any)["text"] != "$ echo hi\nhi\n$" {
		t.Fatalf("resources/read: %v", got)
	}
	scoped := startServerWith(t, Options{Version: "test", Connect: fake.connect, Scope: Scope{Workspace: "other"}})
	if list := scoped.call("resources/list", map[string]any{})["resources"].([]any); len(list) != 0 {
		t.Fatalf("resources/list beyond the scope: %v", list)
	}
	if got := scoped.call("resources/read", map[string]any{"uri": "termkeep://sessions/web/screen"}); got["error"] == nil {
		t.Fatalf("resources/read beyond the scope: %v", got)
	}
	if got := scoped.call("resources/subscribe", map[string]any{"uri": "termkeep://sessions/web/screen"}); got["error"] == nil {
		t.Fatalf("resources/subscribe beyond the scope: %v", got)
	}
}
