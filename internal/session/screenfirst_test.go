package session

import (
	"testing"

	"termkeep/internal/wire"
)

func TestSnapshotLines(t *testing.T) {
	for _, c := range []struct {
		name        string
		hello       wire.Hello
		first, then int
	}{
		{"history with the screen", wire.Hello{Scrollback: 1000}, 1000, 0},
		{"screen first, history after", wire.Hello{Scrollback: 1000, ScreenFirst: true}, 0, 1000},
		{"screen first, no history", wire.Hello{ScreenFirst: true}, 0, 0},
		{"no history", wire.Hello{}, 0, 0},
		{"negative history", wire.Hello{Scrollback: -5}, 0, 0},
		{"negative history, screen first", wire.Hello{Scrollback: -5, ScreenFirst: true}, 0, 0},
	} {
		first, then := snapshotLines(c.hello)
		if first != c.first || then != c.then {
			t.Errorf("%s: %d then %d lines, want %d then %d", c.name, first, then, c.first, c.then)
		}
	}
}
