package attach

import (
	"testing"

	"termkeep/internal/wire"
)

func TestSizeHolder(t *testing.T) {
	vs := []wire.ViewerInfo{{ID: 1, Kind: "cli", Name: "attach /dev/pts/3"}, {ID: 2, Kind: "web", Name: "Pixel phone"}, {ID: 3, Kind: "share"}, {ID: 4, Kind: "bogus\x1b"}}
	for _, c := range []struct {
		v    wire.Viewers
		want string
	}{
		{wire.Viewers{Viewers: vs, SizeOwner: 2, Cols: 44, Rows: 20, You: 1, SizePolicy: "latest"}, "size 44x20 from Pixel phone; type to take it"},
		{wire.Viewers{Viewers: vs, SizeOwner: 1, Cols: 44, Rows: 20, You: 1, SizePolicy: "latest"}, ""},
		{wire.Viewers{Viewers: vs, SizeOwner: 1, Cols: 44, Rows: 20, You: 2, SizePolicy: "latest"}, "size 44x20 from attach /dev/pts/3; type to take it"},
		{wire.Viewers{Viewers: vs, SizeOwner: 3, Cols: 80, Rows: 24, You: 1}, "size 80x24 from share link; type to take it"},
		{wire.Viewers{Viewers: vs, SizeOwner: 4, Cols: 80, Rows: 24, You: 1}, "size 80x24 from a viewer; type to take it"},
		{wire.Viewers{Viewers: vs, SizeOwner: 9, Cols: 80, Rows: 24, You: 1}, "size 80x24 from another viewer; type to take it"},
		{wire.Viewers{Viewers: vs, Cols: 80, Rows: 24, You: 1, SizePolicy: "latest"}, "size 80x24; type to take it"},
		{wire.Viewers{Viewers: vs, Cols: 80, Rows: 24, You: 1, SizePolicy: "fixed"}, "size 80x24, fixed by termkeep resize"},
		{wire.Viewers{Viewers: vs, Cols: 80, Rows: 24, You: 1, SizePolicy: "smallest"}, "size 80x24, the smallest viewer's"},
		{wire.Viewers{Viewers: nil, SizeOwner: 2, You: 1}, ""},
	} {
		if got := sizeHolder(c.v); got != c.want {
			t.Errorf("sizeHolder(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}
