package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

// TestViewerFloodSparesTheOwner's flood: floodViewers read-only viewers
// of floodLinks share links, floodDialers open at a time, floodRate new
// ones a second (a crowd reloading a link; the server and this test's
// dialers share the machine, so a faster flood would time the CPU the
// dialers take, not the server).
const floodViewers, floodLinks, floodDialers, floodRate = 2000, 2, 200, 300

// A flood's owner calls may take 3 times what they take alone, or up to
// these floors: an ls here takes 1-2 ms (the CLI's 100-200 ms), and one
// thread of a 2-core machine shared with a load of 10 can wait that long
// for a core whatever the server does. The stalls this guards against
// were of seconds (ls 8.7 s, new 1.8 s).
const createFloor, listFloor = 500 * time.Millisecond, 250 * time.Millisecond

// ownerTimes is the median time of a create (new) and of a list (ls) over
// the unix socket, each asked n times.
func ownerTimes(t *testing.T, ts *testServer, c *client.Client, n int) (create, list time.Duration) {
	t.Helper()
	var cs, ls []time.Duration
	for range n {
		cs = append(cs, timeCreate(t, ts, c))
		ls = append(ls, timeList(t, c))
	}
	slices.Sort(cs)
	slices.Sort(ls)
	return cs[n/2], ls[n/2]
}

// timeCreate times a create of a session that stays up (one that ended
// at once would time how its end races the server's connect instead),
// and ends it untimed.
func timeCreate(t *testing.T, ts *testServer, c *client.Client) time.Duration {
	start := time.Now()
	sess, err := c.Create(context.Background(), api.CreateRequest{Command: []string{"__cat"}, Cwd: "/"})
	took := time.Since(start)
	if err != nil {
		t.Errorf("new: %v", err)
	} else if h := ts.srv.host(sess.ID); h != nil {
		ts.srv.kill(h)
	}
	return took
}

func timeList(t *testing.T, c *client.Client) time.Duration {
	start := time.Now()
	if _, err := c.List(context.Background()); err != nil {
		t.Errorf("ls: %v", err)
	}
	return time.Since(start)
}

// heapInUse is the heap in use after a collection.
func heapInUse(t *testing.T, name string) uint64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	t.Logf("%s: heap in use %d KiB, allocated %d KiB, %d objects, %d goroutines", name, m.HeapInuse>>10, m.HeapAlloc>>10, m.HeapObjects, runtime.NumGoroutine())
	if d := os.Getenv("TK_FLOOD_PROFILE"); d != "" {
		f, _ := os.Create(d + "/" + name)
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	return m.HeapInuse
}

// dialViewers opens viewers [from, to) of url, viewer i with secrets[i %
// len(secrets)], floodDialers at a time (and one per tick of pace, when
// not nil), and returns those that have their welcome, open, and how many
// were refused with 429.
func dialViewers(t *testing.T, url string, secrets []string, from, to int, pace <-chan time.Time) (open []*websocket.Conn, refused int) {
	conns := make([]*websocket.Conn, to-from)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, floodDialers)
	for i := from; i < to; i++ {
		wg.Add(1)
		sem <- struct{}{}
		if pace != nil {
			<-pace
		}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			hdr := http.Header{"Authorization": {"Bearer " + secrets[i%len(secrets)]}}
			v, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: []string{WSProtocol}})
			switch {
			case err != nil && resp != nil && resp.StatusCode == http.StatusTooManyRequests:
				mu.Lock()
				refused++
				mu.Unlock()
				return
			case err != nil:
				t.Errorf("viewer %d: %v", i, err)
				return
			}
			if _, _, err := v.Read(ctx); err != nil {
				t.Errorf("viewer %d: read the welcome: %v", i, err)
			}
			conns[i-from] = v
		}()
	}
	wg.Wait()
	for _, v := range conns {
		if v != nil {
			open = append(open, v)
		}
	}
	return open, refused
}

// liveSession creates a session that stays up (cat), ended when the
// test is over.
func liveSession(t *testing.T, ts *testServer, c *client.Client, name string) api.Session {
	t.Helper()
	sess, err := c.Create(context.Background(), api.CreateRequest{Name: name, Command: []string{"__cat"}, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if h := ts.srv.host(sess.ID); h != nil {
			ts.srv.kill(h)
		}
	})
	return sess
}

// skipFlood skips a flood's timings and memory figures under -short and
// under the race detector, where they mean nothing; make test runs the
// floods again without it.
func skipFlood(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a flood of WebSockets, timed: go test without -race and -short")
	}
}

// warnOnly passes warnings and errors on, and nothing below.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Crowds of share-link viewers joining and leaving do not slow the owner's new and ls (their events are written in batches,
// off the owner's path), and the server's memory returns once they are
// gone.
func TestViewerFloodSparesTheOwner(t *testing.T) {
	skipFlood(t)
	if os.Getenv("TK_FLOOD_PROFILE") != "" {
		runtime.MemProfileRate = 1024
	}
	// Info lines (two a viewer) would pile up in the test's log buffer
	// and count as the server's memory.
	ts := newLiveServerWith(t, func(c *Config) { c.Logger = slog.New(warnOnly{c.Logger.Handler()}) })
	ts.srv.store.TrustCache() // reads as outside tests
	ctx := context.Background()
	c := client.New(ts.dir)
	watched := liveSession(t, ts, c, "watched")
	var links []string
	for i := range floodLinks {
		link, err := c.CreateToken(ctx, api.TokenRequest{Session: watched.ID, ReadOnly: true, Name: fmt.Sprintf("link%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, link.Secret)
	}
	wsURL := "ws" + strings.TrimPrefix(ts.base, "http") + "/ws/sessions/" + watched.ID
	pace := time.NewTicker(time.Second / floodRate)
	defer pace.Stop()
	join := func(from, to int) []*websocket.Conn {
		conns, refused := dialViewers(t, wsURL, links, from, to, pace.C)
		if refused > 0 {
			t.Errorf("%d viewers refused below the cap", refused)
		}
		return conns
	}
	// leave closes conns as a crowd of tabs closing does: no close
	// handshake, all at once.
	leave := func(conns []*websocket.Conn) {
		for _, v := range conns {
			if v != nil {
				v.CloseNow()
			}
		}
	}
	gone := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(ts.srv.host(watched.ID).Viewers().Viewers) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d viewers still attached", len(ts.srv.host(watched.ID).Viewers().Viewers))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// flood runs the crowd: every dialer opens a viewer, waits for its
	// welcome and closes it again, as a crowd reloading a share link
	// does, while the owner works (joining: the median of its calls);
	// then the last crowd leaves at once, and the owner's first calls
	// meet the departures (leaving).
	type times struct{ create, list time.Duration }
	flood := func(viewers int) (took time.Duration, joining, leaving times) {
		start := time.Now()
		var open []*websocket.Conn
		flooded := make(chan struct{})
		go func() {
			defer close(flooded)
			for i := 0; i+floodDialers < viewers; i += floodDialers {
				leave(join(i, i+floodDialers))
			}
			open = join(viewers-floodDialers, viewers)
		}()
		joining.create, joining.list = ownerTimes(t, ts, c, 5)
		<-flooded
		if t.Failed() {
			t.FailNow()
		}
		var owner sync.WaitGroup
		owner.Add(2)
		go func() { defer owner.Done(); leaving.create = timeCreate(t, ts, c) }()
		go func() { defer owner.Done(); leaving.list = timeList(t, c) }()
		leave(open)
		owner.Wait()
		gone()
		return time.Since(start), joining, leaving
	}

	// A first, smaller flood warms what a crowd leaves behind for the
	// next one (the screen's frozen snapshot, goroutine descriptors, the
	// heap's spans); the second is measured against it.
	flood(2 * floodDialers)
	ownerTimes(t, ts, c, 2)
	baseCreate, baseList := ownerTimes(t, ts, c, 7)
	heap0 := heapInUse(t, "heap0")
	took, joining, leaving := flood(floodViewers)
	heap1 := heapInUse(t, "heap1")

	t.Logf("%d viewers of %d links came and went in %v; new %v, %v joining, %v leaving; ls %v, %v joining, %v leaving; heap in use %d KiB, %d KiB after",
		floodViewers, floodLinks, took.Round(time.Millisecond),
		baseCreate.Round(time.Millisecond), joining.create.Round(time.Millisecond), leaving.create.Round(time.Millisecond),
		baseList.Round(time.Microsecond), joining.list.Round(time.Microsecond), leaving.list.Round(time.Microsecond), heap0>>10, heap1>>10)
	for _, c := range []struct {
		what       string
		base, took time.Duration
		floor      time.Duration
	}{
		{"new, viewers joining", baseCreate, joining.create, createFloor},
		{"new, viewers leaving", baseCreate, leaving.create, createFloor},
		{"ls, viewers joining", baseList, joining.list, listFloor},
		{"ls, viewers leaving", baseList, leaving.list, listFloor},
	} {
		if limit := max(3*c.base, c.floor); c.took > limit {
			t.Errorf("%s took %v, %v without viewers (limit %v)", c.what, c.took, c.base, limit)
		}
	}
	if float64(heap1) > 1.2*float64(heap0) {
		t.Errorf("heap in use %d KiB after the flood, %d KiB before", heap1>>10, heap0>>10)
	}
}

// 2,000 viewers of one share link dialed at once (a leaked link): the
// link's cap lets DefaultMaxViewersPerToken in and refuses the rest with
// 429 before any upgrade, and the owner's new and ls are not slowed.
// Without the cap, every viewer of a session is told of every other, and
// such a crowd costs the server the square of its size.
func TestShareLinkCrowdIsCapped(t *testing.T) {
	skipFlood(t)
	ts := newLiveServerWith(t, func(c *Config) { c.Logger = slog.New(warnOnly{c.Logger.Handler()}) })
	ts.srv.store.TrustCache() // reads as outside tests
	ctx := context.Background()
	c := client.New(ts.dir)
	watched := liveSession(t, ts, c, "watched")
	link, err := c.CreateToken(ctx, api.TokenRequest{Session: watched.ID, ReadOnly: true, Name: "leaked"})
	if err != nil {
		t.Fatal(err)
	}
	ownerTimes(t, ts, c, 2)
	baseCreate, baseList := ownerTimes(t, ts, c, 5)

	url := "ws" + strings.TrimPrefix(ts.base, "http") + "/ws/sessions/" + watched.ID
	var open []*websocket.Conn
	var refused int
	crowded := make(chan struct{})
	go func() {
		defer close(crowded)
		open, refused = dialViewers(t, url, []string{link.Secret}, 0, floodViewers, nil)
	}()
	crowdCreate, crowdList := ownerTimes(t, ts, c, 5)
	<-crowded
	for _, v := range open {
		v.CloseNow()
	}
	t.Logf("%d viewers of one link: %d in, %d refused; new %v, %v meanwhile; ls %v, %v meanwhile",
		floodViewers, len(open), refused, baseCreate.Round(time.Millisecond), crowdCreate.Round(time.Millisecond),
		baseList.Round(time.Microsecond), crowdList.Round(time.Microsecond))
	if t.Failed() {
		for _, l := range strings.Split(ts.logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Log(l)
			}
		}
	}
	if len(open) > DefaultMaxViewersPerToken || len(open)+refused != floodViewers {
		t.Errorf("%d viewers in and %d refused, want at most %d in and the rest refused", len(open), refused, DefaultMaxViewersPerToken)
	}
	if limit := max(3*baseCreate, createFloor); crowdCreate > limit {
		t.Errorf("new took %v, %v without the crowd (limit %v)", crowdCreate, baseCreate, limit)
	}
	if limit := max(3*baseList, listFloor); crowdList > limit {
		t.Errorf("ls took %v, %v without the crowd (limit %v)", crowdList, baseList, limit)
	}
}
