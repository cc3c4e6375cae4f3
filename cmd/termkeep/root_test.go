package main

import (
	"slices"
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
