package session

import (
	"errors"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/wire"
)

// The host applies the policy as viewers come, act and go: the size owner
// it reports in Viewers frames is the one sizepolicy.Decide gives, and an
// owner leaving is said in the one Viewers frame its leaving sends.
func TestHostSizeOwner(t *testing.T) {
	h := New(Config{ID: "sizes", Dir: t.TempDir()})
	a := &viewer{sz: sizepolicy.Viewer{Writable: true}}
	ro := &viewer{readOnly: true}
	b := &viewer{sz: sizepolicy.Viewer{Writable: true}}
	unknown := &viewer{sz: sizepolicy.Viewer{Writable: true}}
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
	step("a arrives and fits", h.viewerSize(a, sizepolicy.Fit, 100, 30, t0), a.id)
	step("the read-only viewer fits", h.viewerSize(ro, sizepolicy.Fit, 200, 60, t0.Add(time.Second)), a.id)
	step("the read-only viewer types", h.viewerSize(ro, sizepolicy.Type, 0, 0, t0.Add(time.Second)), a.id)
	step("b arrives and reports its size", h.viewerSize(b, sizepolicy.Report, 120, 40, t0.Add(2*time.Second)), a.id)
	step("b types", h.viewerSize(b, sizepolicy.Type, 0, 0, t0.Add(2*time.Second)), b.id)
	h.mu.Lock()
	typed := h.room.ver
	h.mu.Unlock()
	step("b types on", h.viewerSize(b, sizepolicy.Type, 0, 0, t0.Add(2500*time.Millisecond)), b.id)
	h.mu.Lock()
	if h.room.ver != typed {
		// A viewers frame to every viewer per keystroke, on the echo's path.
		t.Errorf("typing by the size's owner bumped the viewers version")
	}
	h.mu.Unlock()
	step("a viewer of unknown size types", h.viewerSize(unknown, sizepolicy.Type, 0, 0, t0.Add(3*time.Second)), b.id)

	h.mu.Lock()
	ver := h.room.ver
	h.mu.Unlock()
	h.removeViewer(b)
	step("b leaves", nil, a.id)
	h.mu.Lock()
	if h.room.ver != ver+1 {
		t.Errorf("b's leaving bumped the viewers version %d times, want once", h.room.ver-ver)
	}
	h.mu.Unlock()

	h.SetSizePolicy(sizepolicy.Smallest)
	step("smallest has no owner", nil, 0)
	if vs := h.Viewers(); vs.SizePolicy != "smallest" {
		t.Errorf("viewers are told the policy %q, want smallest", vs.SizePolicy)
	}
	h.SetFixedSize(90, 20)
	if vs := h.Viewers(); vs.SizePolicy != "fixed" || vs.SizeOwner != 0 {
		t.Errorf("after SetFixedSize: policy %q owner %d, want fixed and none", vs.SizePolicy, vs.SizeOwner)
	}
	if err := h.SetFixedSize(0, 20); err == nil {
		t.Error("SetFixedSize(0, 20) was accepted")
	}
	h.removeViewer(a)
	h.removeViewer(ro)
	h.removeViewer(unknown)
	step("nobody left", nil, 0)
}

// Over the wire: a read-only viewer reporting its window's size, or even
// asking to fit, gets no error and changes nothing; the others are shown
// its size and its name. A viewer of version 6 takes the size only by a
// fit or by typing; one of version 4 still by its resizes.
func TestViewerSizeFrames(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.connected()
	ro := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd, Cols: 81, Rows: 25, Name: "share\x1b[31m link\n"}, ViewerOptions{ReadOnly: true, Kind: "share"})
	ro.welcome()
	w := wire.NewWriter(ro.c)
	w.Resize(90, 30)
	w.Fit(90, 30)
	w.Input([]byte("\x1b[?1;2c")) // its terminal answering on its own
	// The next frames are Viewers frames only: no error.
	var last wire.Viewers
	for last.Viewers == nil || last.Viewers[0].Cols != 90 {
		f := ro.next()
		if f.Type != wire.TypeViewers {
			t.Fatalf("the read-only viewer got a %s frame for reporting its size", f.Type)
		}
		last = wire.Viewers{}
		wire.ParseJSON(f.Payload, &last)
	}
	if v := last.Viewers[0]; v.Name != "share[31m link" || v.Kind != "share" || !v.ReadOnly || last.SizeOwner != 0 || last.SizePolicy != "latest" {
		t.Fatalf("viewers frame %+v", last)
	}

	a := &viewer{sz: sizepolicy.Viewer{Writable: true}}
	vh.h.addViewer(a)
	vh.h.viewerSize(a, sizepolicy.Report, 100, 30, time.Now())
	if o := vh.h.Viewers().SizeOwner; o != 0 {
		t.Fatalf("a report took the size: owner %d", o)
	}
	old := &viewer{sz: sizepolicy.Viewer{Writable: true, Legacy: true}}
	vh.h.addViewer(old)
	vh.h.viewerSize(old, sizepolicy.Report, 100, 30, time.Now())
	if o := vh.h.Viewers().SizeOwner; o != old.id {
		t.Fatalf("a legacy viewer's resize did not take the size: owner %d", o)
	}
}

func TestViewerName(t *testing.T) {
	for in, want := range map[string]string{
		"Pixel phone":            "Pixel phone",
		"  tab \t":               "tab",
		"\x1b]0;evil\x07name":    "]0;evilname",
		"a\u202eb":               "ab",
		"\xff\xfeok":             "ok",
		strings.Repeat("é", 40):  strings.Repeat("é", 32),
		strings.Repeat("x", 100): strings.Repeat("x", 64),
		"":                       "",
	} {
		if got := viewerName(in); got != want {
			t.Errorf("viewerName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A size change reaches every viewer in order with the output: after the
// bytes printed before it and before those printed after it, whether the
// viewer is live or reads the past.
func TestResizedInOrder(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.live([]byte("old"))
	vh.connected()
	live := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{})
	live.welcome()
	vh.live([]byte("before"))
	at := uint64(len(vh.out))
	vh.h.mu.Lock()
	vh.h.size.resized(at, 100, 30)
	vh.h.viewersChangedLocked()
	vh.h.mu.Unlock()
	vh.live([]byte("after"))
	past := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 0}, ViewerOptions{})
	past.welcome()
	for name, pv := range map[string]*pipeViewer{"live": live, "past": past} {
		var got []string
		for !strings.HasSuffix(strings.Join(got, ""), "after") {
			f := pv.next()
			switch f.Type {
			case wire.TypeOutput:
				_, data, _ := wire.ParseOutput(f.Payload)
				got = append(got, string(data))
			case wire.TypeResized:
				off, c, r, _ := wire.ParseResized(f.Payload)
				if off != at || c != 100 || r != 30 {
					t.Fatalf("%s: resized %d %dx%d, want %d 100x30", name, off, c, r, at)
				}
				got = append(got, "|")
			}
		}
		if s := strings.Join(got, ""); !strings.HasSuffix(s, "before|after") {
			t.Errorf("%s viewer got %q, want the size between before and after", name, s)
		}
	}
}
