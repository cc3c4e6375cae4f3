package server

import (
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/session"
	"termkeep/internal/wire"
)

func TestPresence(t *testing.T) {
	v := wire.Viewers{Cols: 120, Rows: 40, SizeOwner: 2, Viewers: []wire.ViewerInfo{
		{ID: 1, Kind: "cli", Cols: 80, Rows: 24},
		{ID: 2, Kind: "web", Cols: 120, Rows: 40},
		{ID: 3, Kind: "web", ReadOnly: true, Cols: 40, Rows: 60},
		{ID: 4, Kind: "web"}, // a user's token
		{ID: 5, Kind: "web"}, // arrived after the parties were read
		{ID: 0, Kind: "cli"}, // no id: holds nothing, even with SizeOwner 0
	}}
	parties := map[int]session.Party{
		2: {Kind: "owner", Name: "Chrome 156 on Linux"},
		3: {Kind: "link", Name: "phone"},
		4: {Kind: "user", Name: "alice"},
		9: {Kind: "link", Name: "left already"},
	}
	want := []api.Viewer{
		{ID: 1, Kind: "cli", Name: "termkeep attach", Cols: 80, Rows: 24},
		{ID: 2, Kind: "owner", Name: "Chrome 156 on Linux", Cols: 120, Rows: 40, HoldsSize: true},
		{ID: 3, Kind: "link", Name: "phone", ReadOnly: true, Cols: 40, Rows: 60},
		{ID: 4, Kind: "user", Name: "alice"},
		{ID: 5, Kind: "user"},
		{ID: 0, Kind: "cli", Name: "termkeep attach"},
	}
	for _, owner := range []bool{true, false} {
		got := presence(v, parties, owner)
		if got.Cols != 120 || got.Rows != 40 || got.SizeOwner != 2 || len(got.Viewers) != len(want) {
			t.Fatalf("owner %v: %+v", owner, got)
		}
		for i, w := range want {
			if !owner && (w.Kind == "link" || w.Kind == "user") {
				w.Name = "" // names of links and users are the owner's to see
			}
			if got.Viewers[i] != w {
				t.Errorf("owner %v, viewer %d: %+v, want %+v", owner, i, got.Viewers[i], w)
			}
		}
	}
	// No viewers, no size owner: an empty list, not null.
	if got := presence(wire.Viewers{}, nil, true); got.Viewers == nil || len(got.Viewers) != 0 {
		t.Errorf("no viewers: %+v", got)
	}
}
