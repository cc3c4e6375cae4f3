package server

import "testing"

// A viewer is served while its log segment still leaves the reserve free.
func TestViewerRoom(t *testing.T) {
	for _, tc := range []struct {
		open, limit uint64
		want        bool
	}{
		{open: 1 << 40, limit: 0, want: true}, // unlimited or unknown
		{open: 20, limit: 256, want: true},
		{open: 191, limit: 256, want: true},  // 191 + 1 + 64 = 256
		{open: 192, limit: 256, want: false}, // one past the reserve
		{open: 256, limit: 256, want: false},
		{open: 300, limit: 256, want: false}, // over a lowered limit
		{open: 0, limit: 64, want: true},     // a small limit keeps half: 32
		{open: 31, limit: 64, want: true},
		{open: 32, limit: 64, want: false},
		{open: 0, limit: 1, want: true}, // a reserve of 0: one viewer's segment
		{open: 1, limit: 1, want: false},
		{open: 18999, limit: 20000, want: true}, // 5% of a large limit: 1000
		{open: 19000, limit: 20000, want: false},
		{open: ^uint64(0) - 10, limit: 1 << 20, want: false}, // no wrap-around
	} {
		if got := viewerRoom(tc.open, tc.limit); got != tc.want {
			t.Errorf("viewerRoom(%d, %d) = %v, want %v", tc.open, tc.limit, got, tc.want)
		}
	}
}
