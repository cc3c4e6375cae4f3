package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/keys"
	"termkeep/internal/wire"
)

// fakeBackend is a termkeep server in memory: sessions with a fixed screen
// and an output log that tests append to.
type fakeBackend struct {
	mu       sync.Mutex
	sessions []api.Session
	screen   map[string]string
	output   map[string][]byte    // every byte from offset 0
	first    map[string]uint64    // the oldest byte kept (retention)
	damaged  map[string][2]uint64 // bytes lost to damage in the middle of the log
	exit     map[string]*wire.Exit
	inputs   []string // "ID:bytes" of every Input
	grew     chan struct{}
	noServer bool
	history  map[string][]string // lines above the screen, oldest first
	// screenFails is how many Screen calls still fail as a server that
	// has just restarted may answer.
	screenFails int
	// streamCut, when closed, ends every open stream with io.EOF, as a
	// server killed mid-stream does.
	streamCut chan struct{}
}

func newFake() *fakeBackend {
	zero := 0
	quiet := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := &fakeBackend{
		sessions: []api.Session{
			{ID: "s1", Name: "web", State: "running", Rows: 5, Workspace: "app", Cwd: "/src/app", Command: []string{"bash"}, QuietSince: &quiet},
			{ID: "s2", Name: "", State: "exited", ExitCode: &zero, Cwd: "/tmp", Command: []string{"make"}},
		},
		screen: map[string]string{"s1": "$ echo hi\nhi\n$ \n\n\n", "s2": "done\n"},
		output: map[string][]byte{
			"s1": []byte("$ echo hi\r\nhi\r\n\x1b[1m$\x1b[0m "),
			"s2": []byte("caf\xc3\xa9 \xff ok\r\ndone\r\n"),
		},
		exit:      map[string]*wire.Exit{"s2": {State: "exited", ExitCode: &zero, End: 18}},
		grew:      make(chan struct{}),
		first:     map[string]uint64{},
		damaged:   map[string][2]uint64{},
		history:   map[string][]string{},
		streamCut: make(chan struct{}),
	}
	for i := range f.sessions {
		f.sessions[i].End = uint64(len(f.output[f.sessions[i].ID]))
	}
	return f
}

// cutStreams ends the open streams, as a server killed mid-stream does;
// streams opened later are whole again.
func (f *fakeBackend) cutStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.streamCut)
	f.streamCut = make(chan struct{})
}

// restart takes the server away for d, as a server killed and started
// again does: the open streams end, and no connection is made meanwhile.
func (f *fakeBackend) restart(d time.Duration) {
	f.setServer(false)
	f.cutStreams()
	time.Sleep(d)
	f.setServer(true)
}

func (f *fakeBackend) setServer(up bool) {
	f.mu.Lock()
	f.noServer = !up
	f.mu.Unlock()
}

func (f *fakeBackend) connect(context.Context) (Backend, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noServer {
		return nil, client.ErrNoServer
	}
	return f, nil
}

func (f *fakeBackend) find(ref string) (int, error) {
	for i, s := range f.sessions {
		if s.ID == ref || s.Name == ref && ref != "" {
			return i, nil
		}
	}
	return 0, &client.Error{Status: 404, Message: fmt.Sprintf("no session %q (see `termkeep ls`)", ref)}
}

func (f *fakeBackend) List(context.Context) ([]api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.Session(nil), f.sessions...), nil
}

func (f *fakeBackend) Get(_ context.Context, ref string) (api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return api.Session{}, err
	}
	return f.sessions[i], nil
}

func (f *fakeBackend) GetIn(_ context.Context, ws, ref string) (api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		if s.ID == ref || s.Name == ref && ref != "" && s.Workspace == ws {
			return s, nil
		}
	}
	return api.Session{}, &client.Error{Status: 404, Message: fmt.Sprintf("no session %q (see `termkeep ls`)", ref)}
}

func (f *fakeBackend) Create(_ context.Context, req api.CreateRequest) (api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := api.Session{ID: fmt.Sprintf("s%d", len(f.sessions)+1), Name: req.Name, State: "running", Cwd: req.Cwd,
		Workspace: req.Workspace, Command: req.Command, RestoreCommand: req.RestoreCommand}
	if s.Command == nil {
		s.Command = []string{"/bin/sh"}
	}
	f.sessions = append(f.sessions, s)
	return s, nil
}

func (f *fakeBackend) Workspaces(context.Context) ([]api.Workspace, error) {
	return []api.Workspace{{Name: "app", Dir: "/src/app"}}, nil
}

// Send encodes as a session in a terminal's default modes would take it.
func (f *fakeBackend) Send(ctx context.Context, ref string, req api.SendRequest) (api.Sent, error) {
	data := []byte(req.Text)
	for _, k := range req.Keys {
		b, err := keys.Bytes(k)
		if err != nil {
			return api.Sent{}, err
		}
		data = append(data, b...)
	}
	if req.Enter {
		data = append(data, '\r')
	}
	return api.Sent{Bytes: len(data)}, f.Input(ctx, ref, data)
}

func (f *fakeBackend) Input(_ context.Context, ref string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return err
	}
	f.inputs = append(f.inputs, f.sessions[i].ID+":"+string(data))
	return nil
}

func (f *fakeBackend) Screen(_ context.Context, ref string, ansi bool, scrollback int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return "", err
	}
	if f.screenFails > 0 {
		f.screenFails--
		return "", &client.Error{Status: 503, Message: "render the screen of " + ref + ": the screen model is still catching up"}
	}
	h := f.history[f.sessions[i].ID]
	h = h[len(h)-min(len(h), scrollback):]
	var b strings.Builder
	for _, l := range h {
		b.WriteString(l + "\n")
	}
	return b.String() + f.screen[f.sessions[i].ID], nil
}

func (f *fakeBackend) Kill(_ context.Context, ref string) (api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return api.Session{}, err
	}
	s := &f.sessions[i]
	if s.State == "running" {
		code := 129
		s.State, s.ExitCode = "closed", &code
		f.exit[s.ID] = &wire.Exit{State: "closed", ExitCode: &code, End: s.End}
		f.wake()
	}
	return *s, nil
}

func (f *fakeBackend) Restore(_ context.Context, ref string, env []string) (api.Restored, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return api.Restored{}, err
	}
	s := &f.sessions[i]
	if s.State == "running" {
		return api.Restored{}, &client.Error{Status: 409, Message: "session " + ref + " is running; only an ended session can be restored"}
	}
	s.State, s.ExitCode = "running", nil
	delete(f.exit, s.ID)
	return api.Restored{Session: *s}, nil
}

func (f *fakeBackend) Grep(_ context.Context, ref, pattern string, opt client.GrepOptions, fn func(api.GrepHit) error) error {
	f.mu.Lock()
	i, err := f.find(ref)
	if err != nil {
		f.mu.Unlock()
		return err
	}
	out := string(f.output[f.sessions[i].ID])
	f.mu.Unlock()
	off := 0
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.Contains(l, pattern) {
			if err := fn(api.GrepHit{Offset: uint64(off), Line: strings.TrimRight(l, "\r\n")}); err != nil {
				return err
			}
		}
		off += len(l)
	}
	return nil
}

func (f *fakeBackend) Resize(_ context.Context, ref string, cols, rows int) (api.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return api.Session{}, err
	}
	f.sessions[i].Cols, f.sessions[i].Rows = cols, rows
	return f.sessions[i], nil
}

// print appends to a session's output, as its program would.
func (f *fakeBackend) print(id, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.output[id] = append(f.output[id], text...)
	i, _ := f.find(id)
	f.sessions[i].End = uint64(len(f.output[id]))
	f.wake()
}

func (f *fakeBackend) wake() {
	close(f.grew)
	f.grew = make(chan struct{})
}

func (f *fakeBackend) Follow(ctx context.Context, ref string, from int64) (Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(ref)
	if err != nil {
		return nil, err
	}
	id := f.sessions[i].ID
	end := uint64(len(f.output[id]))
	start := end
	if from >= 0 {
		start = uint64(from)
	}
	if start > end {
		return nil, &wire.RemoteError{Code: wire.CodeUnavailable, Message: fmt.Sprintf("offset %d is beyond the session's end (%d)", start, end)}
	}
	st := &fakeStream{f: f, id: id, off: start, closed: make(chan struct{}), first: f.first[id], damaged: f.damaged[id], cut: f.streamCut}
	st.welcome = wire.Welcome{Session: id, First: f.first[id], End: end, Start: start, Exited: f.exit[id] != nil}
	return st, nil
}

// fakeStream sends the output in frames of at most 5 bytes (so that reads
// and matches meet cut characters and sequences), then the exit.
type fakeStream struct {
	f       *fakeBackend
	id      string
	welcome wire.Welcome
	off     uint64
	first   uint64
	damaged [2]uint64
	done    bool
	buf     []byte
	closed  chan struct{}
	once    sync.Once
	cut     chan struct{}
}

func (s *fakeStream) Welcome() wire.Welcome { return s.welcome }

func (s *fakeStream) Next() (wire.Frame, error) {
	for {
		if s.done {
			return wire.Frame{}, errors.New("stream ended")
		}
		s.f.mu.Lock()
		out, exit, grew := s.f.output[s.id], s.f.exit[s.id], s.f.grew
		s.f.mu.Unlock()
		var b bytes.Buffer
		w := wire.NewWriter(&b)
		switch {
		case s.off < s.first:
			// As the server tells a waiter: the bytes are gone.
			w.Gap(s.off, s.first)
			s.off = s.first
		case s.off == s.damaged[0] && s.damaged[1] > s.off:
			w.Gap(s.off, s.damaged[1])
			s.off = s.damaged[1]
		case s.off < s.damaged[0]:
			n := min(s.damaged[0]-s.off, 5)
			w.Output(s.off, out[s.off:s.off+n])
			s.off += n
		case s.off < uint64(len(out)):
			n := min(uint64(len(out))-s.off, 5)
			w.Output(s.off, out[s.off:s.off+n])
			s.off += n
		case exit != nil:
			w.JSON(wire.TypeExit, exit)
			s.done = true
		default:
			select {
			case <-grew:
				continue
			case <-s.closed:
				return wire.Frame{}, errors.New("stream closed")
			case <-s.cut:
				return wire.Frame{}, io.EOF
			}
		}
		return wire.ReadFrame(&b, &s.buf)
	}
}

func (s *fakeStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}
