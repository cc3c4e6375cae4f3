package session

import (
	"errors"
	"testing"
	"time"

	"termkeep/internal/session/sizepolicy"
)

// The host applies the policy as viewers come, act and go: the size owner
// it reports in Viewers frames is the one sizepolicy.Decide gives, and an
// owner leaving is said in the one Viewers frame its leaving sends.
func TestHostSizeOwner(t *testing.T) {
	h := New(Config{ID: "sizes", Dir: t.TempDir()})
	a := &viewer{cols: 100, rows: 30}
	ro := &viewer{readOnly: true, cols: 200, rows: 60}
	b := &viewer{cols: 120, rows: 40}
	unknown := &viewer{}
	for _, v := range []*viewer{a, ro, b, unknown} {
		h.addViewer(v)
	}
	t0 := time.Now()
	step := func(name string, err error, owner int) {
		t.Helper()
		// No holder is connected: a size the policy wants to ask for
		// fails as disconnected, and nothing else does.
		if err != nil && !errors.Is(err, ErrDisconnected) {
			t.Fatalf("%s: %v", name, err)
		}
		if got := h.Viewers().SizeOwner; got != owner {
			t.Fatalf("%s: size owner %d, want %d", name, got, owner)
		}
	}
	step("a arrives", h.viewerActive(a, t0), a.id)
	step("the read-only viewer types", h.viewerActive(ro, t0.Add(time.Second)), a.id)
	step("b arrives", h.viewerActive(b, t0.Add(2*time.Second)), b.id)
	step("a viewer of unknown size types", h.viewerActive(unknown, t0.Add(3*time.Second)), b.id)

	h.mu.Lock()
	ver := h.viewersVer
	h.mu.Unlock()
	h.removeViewer(b)
	step("b leaves", nil, a.id)
	h.mu.Lock()
	if h.viewersVer != ver+1 {
		t.Errorf("b's leaving bumped the viewers version %d times, want once", h.viewersVer-ver)
	}
	h.mu.Unlock()

	h.SetSizePolicy(sizepolicy.Smallest)
	step("smallest has no owner", nil, 0)
	h.removeViewer(a)
	h.removeViewer(ro)
	h.removeViewer(unknown)
	step("nobody left", nil, 0)
}
