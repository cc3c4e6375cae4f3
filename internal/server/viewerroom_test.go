package server

import "testing"

// A viewer is served while its log segment still leaves the CLI's reserve
// free.
func TestViewerRoom(t *testing.T) {
	for _, tc := range []struct {
		open, limit uint64
		want        bool
	}{
		{open: 1 << 40, limit: 0, want: true}, // unlimited or unknown
		{open: 20, limit: 256, want: true},
		{open: 239, limit: 256, want: true},  // 239 + 1 + 16 = 256
		{open: 240, limit: 256, want: false}, // one past the reserve
		{open: 256, limit: 256, want: false},
		{open: 300, limit: 256, want: false}, // over a lowered limit
		{open: 47, limit: 64, want: true},
		{open: 48, limit: 64, want: false},
		{open: 0, limit: 16, want: false}, // a limit below the reserve serves none
		{open: 0, limit: 17, want: true},
		{open: ^uint64(0) - 10, limit: 1 << 20, want: false}, // no wrap-around
	} {
		if got := viewerRoom(tc.open, tc.limit); got != tc.want {
			t.Errorf("viewerRoom(%d, %d) = %v, want %v", tc.open, tc.limit, got, tc.want)
		}
	}
}
