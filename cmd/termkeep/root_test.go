package main

import (
	"slices"
	"strings"
	"testing"
)

// commandFor finds the command a command line names without building
// any, or says to build them all (-1) whenever it is not sure.
func TestCommandFor(t *testing.T) {
	index := func(name string) int {
		for i, c := range commands {
			if slices.Contains(c.names, name) {
				return i
			}
		}
		t.Fatalf("no command %q", name)
		return -1
	}
	attach, ls := index("attach"), index("ls")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"attach", "work"}, attach},
		{[]string{"a", "work"}, attach},                 // an alias
		{[]string{"attach-session", "-t", "w"}, attach}, // tmux's name
		{[]string{"--state-dir", "/tmp/s", "attach", "w"}, attach},
		{[]string{"--state-dir=/tmp/s", "--no-autostart", "attach", "w"}, attach},
		{[]string{"--no-autostart=true", "ls"}, ls},
		{[]string{"ls", "--help"}, ls},                // the command's own help
		{[]string{"--state-dir", "attach", "ls"}, ls}, // a flag's value is no command
		{nil, -1},
		{[]string{}, -1},
		{[]string{"--help"}, -1},
		{[]string{"--help", "attach"}, -1}, // the root's help lists them all
		{[]string{"-v"}, -1},
		{[]string{"--version", "ls"}, -1},
		{[]string{"help", "attach"}, -1},
		{[]string{"completion", "bash"}, -1},
		{[]string{"__complete", "attach", ""}, -1},
		{[]string{"atach", "w"}, -1}, // cobra suggests attach from them all
		{[]string{"--state-dir"}, -1},
		{[]string{"--bogus", "attach"}, -1},
		{[]string{"-", "attach"}, -1},
		{[]string{"--", "attach"}, -1},
		{[]string{""}, -1},
		{[]string{"ATTACH"}, -1},
	} {
		if got := commandFor(tc.args); got != tc.want {
			t.Errorf("commandFor(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

// The table's names are each command's own, so that a command line finds
// the same command whether the root holds one or all of them.
func TestCommandsNames(t *testing.T) {
	g := &globals{}
	seen := map[string]bool{}
	for _, c := range commands {
		cmd := c.build(g)
		want := append([]string{cmd.Name()}, cmd.Aliases...)
		if !slices.Equal(c.names, want) {
			t.Errorf("the table names %q, the command %q", c.names, want)
		}
		for _, n := range c.names {
			if seen[n] {
				t.Errorf("%q names two commands", n)
			}
			seen[n] = true
		}
	}
	if len(newRoot(nil).Commands()) != len(commands) {
		t.Errorf("the root holds %d commands, the table %d", len(newRoot(nil).Commands()), len(commands))
	}
	if cs := newRoot([]string{"attach", "w"}).Commands(); len(cs) != 1 || cs[0].Name() != "attach" {
		t.Errorf("for attach the root holds %d commands", len(cs))
	}
}

// Any command line: commandFor never panics, and a command it picks is
// one the line names outside a --state-dir value, after root flags it
// knows only.
func FuzzCommandFor(f *testing.F) {
	for _, s := range []string{"attach\x00w", "--state-dir\x00attach\x00ls", "--help\x00attach", "--state-dir", "a", "\x00", "--no-autostart=\x00ws\x00ls"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		i := commandFor(args)
		if i < -1 || i >= len(commands) {
			t.Fatalf("commandFor(%q) = %d", args, i)
		}
		if i < 0 {
			return
		}
		root := newRoot(args)
		if cs := root.Commands(); len(cs) != 1 || !slices.Contains(commands[i].names, cs[0].Name()) {
			t.Fatalf("commandFor(%q) = %d, but the root holds %d commands", args, i, len(cs))
		}
		found := false
		for j := 0; j < len(args); j++ {
			if args[j] == "--state-dir" {
				j++
				continue
			}
			if args[j] == "--no-autostart" || strings.HasPrefix(args[j], "--no-autostart=") || strings.HasPrefix(args[j], "--state-dir=") {
				continue
			}
			if strings.HasPrefix(args[j], "-") {
				t.Fatalf("commandFor(%q) = %d past the flag %q", args, i, args[j])
			}
			found = slices.Contains(commands[i].names, args[j])
			break
		}
		if !found {
			t.Fatalf("commandFor(%q) = %d, a command the line does not name first", args, i)
		}
	})
}
