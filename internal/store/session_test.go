package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

func assertSession(t *testing.T, got, want Session) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("session mismatch\n got: %+v\nwant: %+v", got, want)
	}
}

func mustCreate(t *testing.T, s *Store, sess Session) {
	t.Helper()
	if err := s.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("CreateSession(%s): %v", sess.ID, err)
	}
}

func mustGet(t *testing.T, s *Store, id string) Session {
	t.Helper()
	sess, err := s.Session(context.Background(), id)
	if err != nil {
		t.Fatalf("Session(%s): %v", id, err)
	}
	return sess
}

func TestCreateAndGet(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	created := time.Date(2024, 1, 2, 3, 4, 5, 600, time.FixedZone("X", 3600))
	ended := time.Date(2024, 1, 2, 5, 0, 0, 1, time.UTC)

	for _, tc := range []struct {
		name string
		in   Session
		want func(now time.Time) Session // now: the clock's reading for this create
	}{
		{
			name: "defaults",
			in:   Session{ID: "s1"},
			want: func(now time.Time) Session {
				return Session{ID: "s1", Command: []string{}, State: StateRunning, CreatedAt: now, UpdatedAt: now}
			},
		},
		{
			name: "every field",
			in: Session{ID: "s2", Name: "web", Workspace: "ws", Command: []string{"bash", "-c", `echo "hi"; ls`},
				Cwd: "/home/u", Cols: 120, Rows: 40, Owner: "u", State: StateRunning, Pid: 4242, HolderPid: 4241,
				CreatedAt: created},
			want: func(now time.Time) Session {
				return Session{ID: "s2", Name: "web", Workspace: "ws", Command: []string{"bash", "-c", `echo "hi"; ls`},
					Cwd: "/home/u", Cols: 120, Rows: 40, Owner: "u", State: StateRunning, Pid: 4242, HolderPid: 4241,
					CreatedAt: created.UTC(), UpdatedAt: now}
			},
		},
		{
			name: "ended without EndedAt",
			in:   Session{ID: "s3", State: StateExited, ExitCode: intp(3), Reason: "exit"},
			want: func(now time.Time) Session {
				return Session{ID: "s3", Command: []string{}, State: StateExited, ExitCode: intp(3), Reason: "exit",
					CreatedAt: now, UpdatedAt: now, EndedAt: &now}
			},
		},
		{
			name: "ended with EndedAt, exit code 0",
			in:   Session{ID: "s4", State: StateClosed, ExitCode: intp(0), EndedAt: &ended},
			want: func(now time.Time) Session {
				return Session{ID: "s4", Command: []string{}, State: StateClosed, ExitCode: intp(0),
					CreatedAt: now, UpdatedAt: now, EndedAt: &ended}
			},
		},
		{
			name: "paused",
			in:   Session{ID: "s5", State: StatePaused},
			want: func(now time.Time) Session {
				return Session{ID: "s5", Command: []string{}, State: StatePaused, CreatedAt: now, UpdatedAt: now}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The store reads the clock once per create; peek at the next reading.
			s.now = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 999999999, time.UTC) }
			now := s.now()
			mustCreate(t, s, tc.in)
			got := mustGet(t, s, tc.in.ID)
			assertSession(t, got, tc.want(now))
			if got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC {
				t.Error("times not in UTC")
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			in      Session
			is      error
			wantErr string
		}{
			{Session{}, nil, "store: create session: empty session id"},
			{Session{ID: "x", State: "zombie"}, nil, `store: create session x: unknown state "zombie"`},
			{Session{ID: "s1"}, nil, "store: create session s1: a session with this id already exists"},
			{Session{ID: "y", Name: "web", Workspace: "ws"}, ErrNameTaken, "store: create session y: session name already in use"},
		} {
			err := s.CreateSession(ctx, tc.in)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("CreateSession(%+v) = %v, want %q", tc.in, err, tc.wantErr)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("CreateSession(%+v) = %v, want errors.Is %v", tc.in, err, tc.is)
			}
		}
	})

	t.Run("not found", func(t *testing.T) {
		_, err := s.Session(ctx, "nope")
		if !errors.Is(err, ErrNotFound) || err.Error() != "store: get session nope: session not found" {
			t.Errorf("Session(nope) = %v", err)
		}
	})
}

func TestResolve(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	mustCreate(t, s, Session{ID: "aaa", Name: "web"})
	mustCreate(t, s, Session{ID: "bbb", Name: "aaa"}) // a name that is another session's id
	mustCreate(t, s, Session{ID: "ccc"})

	for _, tc := range []struct {
		arg    string
		wantID string
		err    error
	}{
		{"aaa", "aaa", nil}, // the id wins over bbb's name
		{"bbb", "bbb", nil},
		{"web", "aaa", nil},
		{"ccc", "ccc", nil},
		{"WEB", "", ErrNotFound}, // exact match only
		{"aa", "", ErrNotFound},  // no prefixes
		{"", "", ErrNotFound},    // "" is no name
		{"zzz", "", ErrNotFound},
	} {
		got, err := s.Resolve(ctx, tc.arg)
		if !errors.Is(err, tc.err) {
			t.Errorf("Resolve(%q) err = %v, want %v", tc.arg, err, tc.err)
			continue
		}
		if got.ID != tc.wantID {
			t.Errorf("Resolve(%q) = %q, want %q", tc.arg, got.ID, tc.wantID)
		}
	}
}

func TestNames(t *testing.T) {
	ctx := context.Background()
	type step struct {
		op   string // create, rename, delete
		id   string
		name string
		err  error
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// names after the steps, by id
		want map[string]string
	}{
		{"two unnamed", []step{
			{"create", "a", "", nil},
			{"create", "b", "", nil},
		}, map[string]string{"a": "", "b": ""}},
		{"duplicate create", []step{
			{"create", "a", "web", nil},
			{"create", "b", "web", ErrNameTaken},
		}, map[string]string{"a": "web"}},
		{"freed by delete", []step{
			{"create", "a", "web", nil},
			{"delete", "a", "", nil},
			{"create", "b", "web", nil},
		}, map[string]string{"b": "web"}},
		{"rename into taken", []step{
			{"create", "a", "web", nil},
			{"create", "b", "db", nil},
			{"rename", "b", "web", ErrNameTaken},
		}, map[string]string{"a": "web", "b": "db"}},
		{"rename to own name", []step{
			{"create", "a", "web", nil},
			{"rename", "a", "web", nil},
		}, map[string]string{"a": "web"}},
		{"rename frees the old name", []step{
			{"create", "a", "web", nil},
			{"rename", "a", "web2", nil},
			{"create", "b", "web", nil},
		}, map[string]string{"a": "web2", "b": "web"}},
		{"clear name", []step{
			{"create", "a", "web", nil},
			{"rename", "a", "", nil},
			{"create", "b", "", nil},
			{"create", "c", "web", nil},
		}, map[string]string{"a": "", "b": "", "c": "web"}},
		{"ended sessions keep their names", []step{
			{"create", "a", "web", nil},
			{"end", "a", "", nil},
			{"create", "b", "web", ErrNameTaken},
		}, map[string]string{"a": "web"}},
		{"missing", []step{
			{"rename", "a", "web", ErrNotFound},
			{"delete", "a", "", ErrNotFound},
		}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := openTest(t)
			for i, st := range tc.steps {
				var err error
				switch st.op {
				case "create":
					err = s.CreateSession(ctx, Session{ID: st.id, Name: st.name})
				case "rename":
					err = s.Rename(ctx, st.id, st.name)
				case "delete":
					err = s.Delete(ctx, st.id)
				case "end":
					_, err = s.End(ctx, st.id, StateClosed, nil, "")
				}
				if !errors.Is(err, st.err) || (st.err == nil) != (err == nil) {
					t.Fatalf("step %d %s(%s, %q) = %v, want %v", i, st.op, st.id, st.name, err, st.err)
				}
			}
			list, err := s.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, sess := range list {
				got[sess.ID] = sess.Name
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("names = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	ctx := context.Background()
	type end struct {
		st      State
		code    *int
		reason  string
		changed bool
	}
	for _, tc := range []struct {
		name  string
		start State
		ends  []end
		want  end // the state that sticks (changed unused)
	}{
		{"exited", StateRunning, []end{{StateExited, intp(0), "", true}}, end{StateExited, intp(0), "", false}},
		{"interrupted", StateRunning, []end{{StateInterrupted, nil, "reboot", true}}, end{StateInterrupted, nil, "reboot", false}},
		{"closed", StateRunning, []end{{StateClosed, intp(129), "killed", true}}, end{StateClosed, intp(129), "killed", false}},
		// A pause already ended the process: the late report of its end
		// leaves the session paused.
		{"paused stays", StatePaused, []end{{StateClosed, intp(129), "killed", false}}, end{StatePaused, nil, "", false}},
		{"first wins", StateRunning, []end{
			{StateExited, intp(130), "", true},
			{StateClosed, intp(1), "killed", false},
			{StateInterrupted, nil, "", false},
			{StateExited, intp(2), "", false},
		}, end{StateExited, intp(130), "", false}},
		{"created ended", StateInterrupted, []end{{StateExited, intp(1), "", false}}, end{StateInterrupted, nil, "", false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c, _ := openTest(t)
			mustCreate(t, s, Session{ID: "a", State: tc.start, Pid: 10, HolderPid: 9})
			before := mustGet(t, s, "a")
			var firstEnd time.Time
			for i, e := range tc.ends {
				changed, err := s.End(ctx, "a", e.st, e.code, e.reason)
				if err != nil {
					t.Fatalf("End %d: %v", i, err)
				}
				if changed != e.changed {
					t.Fatalf("End %d (%s) changed = %v, want %v", i, e.st, changed, e.changed)
				}
				if changed {
					firstEnd = c.t // the clock's last reading
				}
			}
			got := mustGet(t, s, "a")
			if got.State != tc.want.st || !reflect.DeepEqual(got.ExitCode, tc.want.code) || got.Reason != tc.want.reason {
				t.Errorf("after ends: state %s code %v reason %q, want %s %v %q",
					got.State, got.ExitCode, got.Reason, tc.want.st, tc.want.code, tc.want.reason)
			}
			if !firstEnd.IsZero() {
				if got.EndedAt == nil || !got.EndedAt.Equal(firstEnd) || !got.UpdatedAt.Equal(firstEnd) {
					t.Errorf("EndedAt %v UpdatedAt %v, want %v", got.EndedAt, got.UpdatedAt, firstEnd)
				}
				if got.Pid != 0 {
					t.Errorf("Pid = %d after End, want 0", got.Pid)
				}
				if got.HolderPid != 9 {
					t.Errorf("HolderPid = %d after End, want kept 9", got.HolderPid)
				}
			} else if !reflect.DeepEqual(got, before) {
				t.Errorf("a no-op End changed the row\n got: %+v\nwant: %+v", got, before)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		s, _, _ := openTest(t)
		mustCreate(t, s, Session{ID: "a"})
		if _, err := s.End(ctx, "nope", StateExited, nil, ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("End(missing) = %v, want ErrNotFound", err)
		}
		for _, st := range []State{StateRunning, StatePaused, "", "zombie"} {
			changed, err := s.End(ctx, "a", st, nil, "")
			if err == nil || changed {
				t.Errorf("End(a, %q) = %v, %v; want an error", st, changed, err)
			}
		}
		if got := mustGet(t, s, "a"); got.State != StateRunning {
			t.Errorf("state %s after refused Ends", got.State)
		}
	})
}

func TestRestart(t *testing.T) {
	ctx := context.Background()
	s, c, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a", Name: "web", Pid: 10, HolderPid: 9, Cwd: "/src"})
	if _, err := s.End(ctx, "a", StateInterrupted, intp(1), "reboot"); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx, "a", 20, 19); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	got := mustGet(t, s, "a")
	if got.State != StateRunning || got.ExitCode != nil || got.EndedAt != nil || got.Reason != "" ||
		got.Pid != 20 || got.HolderPid != 19 || !got.UpdatedAt.Equal(c.t) || got.Cwd != "/src" || got.Name != "web" {
		t.Errorf("after Restart: %+v", got)
	}

	// Running again, it can end again, once.
	if changed, err := s.End(ctx, "a", StateExited, intp(0), ""); err != nil || !changed {
		t.Errorf("End after Restart = %v, %v; want changed", changed, err)
	}

	mustCreate(t, s, Session{ID: "b"})
	if err := s.Restart(ctx, "b", 1, 2); err == nil {
		t.Error("Restart of a running session succeeded")
	}
	if got := mustGet(t, s, "b"); got.Pid != 0 {
		t.Errorf("refused Restart set pid %d", got.Pid)
	}
	mustCreate(t, s, Session{ID: "p", State: StatePaused})
	if err := s.Restart(ctx, "p", 1, 2); err != nil {
		t.Errorf("Restart of a paused session: %v", err)
	}
	if err := s.Restart(ctx, "nope", 1, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Restart(missing) = %v, want ErrNotFound", err)
	}
}

func TestSetters(t *testing.T) {
	ctx := context.Background()
	s, c, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a", Cols: 80, Rows: 24})

	if err := s.SetPids(ctx, "a", 100, 99); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCwd(ctx, "a", "/work"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSize(ctx, "a", 200, 50); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "a")
	if got.Pid != 100 || got.HolderPid != 99 || got.Cwd != "/work" || got.Cols != 200 || got.Rows != 50 ||
		!got.UpdatedAt.Equal(c.t) || got.CreatedAt.Equal(got.UpdatedAt) {
		t.Errorf("after setters: %+v", got)
	}
	if err := s.SetPids(ctx, "a", 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "a"); got.Pid != 0 || got.HolderPid != 0 {
		t.Errorf("SetPids(0, 0) left %d, %d", got.Pid, got.HolderPid)
	}

	// After the end: pids are refused, cwd and size still recorded.
	if _, err := s.End(ctx, "a", StateExited, intp(0), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPids(ctx, "a", 5, 6); !errors.Is(err, ErrNotRunning) {
		t.Errorf("SetPids on ended = %v, want ErrNotRunning", err)
	} else if err.Error() != "store: set pids of session a: session is not running" {
		t.Errorf("message %q", err)
	}
	if err := s.SetCwd(ctx, "a", "/last"); err != nil {
		t.Errorf("SetCwd on ended: %v", err)
	}
	if err := s.SetSize(ctx, "a", 1, 2); err != nil {
		t.Errorf("SetSize on ended: %v", err)
	}

	for name, err := range map[string]error{
		"SetPids": s.SetPids(ctx, "nope", 1, 1),
		"SetCwd":  s.SetCwd(ctx, "nope", "/"),
		"SetSize": s.SetSize(ctx, "nope", 1, 1),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s(missing) = %v, want ErrNotFound", name, err)
		}
	}
}

func TestLists(t *testing.T) {
	ctx := context.Background()
	s, _, _ := openTest(t)

	all, err := s.Sessions(ctx)
	if err != nil || all == nil || len(all) != 0 {
		t.Fatalf("Sessions on empty = %#v, %v; want [] and no error", all, err)
	}
	inState, err := s.SessionsInState(ctx, StateExited)
	if err != nil || inState == nil || len(inState) != 0 {
		t.Fatalf("SessionsInState on empty = %#v, %v; want []", inState, err)
	}

	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// Created out of order; times whose RFC3339Nano forms sort wrongly as
	// text (".1" after ".12", no fraction after a fraction) and a tie.
	for _, sess := range []Session{
		{ID: "d", CreatedAt: base.Add(2 * time.Second)},
		{ID: "c", CreatedAt: base.Add(1*time.Second + 120*time.Millisecond), State: StateExited},
		{ID: "b", CreatedAt: base.Add(1*time.Second + 100*time.Millisecond)},
		{ID: "z", CreatedAt: base.Add(time.Second)},
		{ID: "a", CreatedAt: base.Add(time.Second), State: StateExited},
		{ID: "e", CreatedAt: base.Add(time.Second + time.Nanosecond)},
	} {
		mustCreate(t, s, sess)
	}
	ids := func(l []Session) (out []string) {
		for _, x := range l {
			out = append(out, x.ID)
		}
		return out
	}
	all, err = s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(all), []string{"a", "z", "e", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Sessions order = %v, want %v", got, want)
	}
	exited, err := s.SessionsInState(ctx, StateExited)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(exited), []string{"a", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SessionsInState(exited) = %v, want %v", got, want)
	}
}

func TestThousandSessions(t *testing.T) {
	ctx := context.Background()
	s, _, _ := openTest(t)
	const n = 1000
	for i := 0; i < n; i++ {
		sess := Session{ID: fmt.Sprintf("s%04d", i), Command: []string{"sh", "-c", fmt.Sprint(i)}}
		if i%2 == 0 {
			sess.Name = fmt.Sprintf("name-%d", i)
		}
		mustCreate(t, s, sess)
	}
	all, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("listed %d sessions, want %d", len(all), n)
	}
	for i, sess := range all {
		// The clock advances per create, so creation order is id order.
		if want := fmt.Sprintf("s%04d", i); sess.ID != want || sess.Command[2] != fmt.Sprint(i) {
			t.Fatalf("entry %d = %s %v, want %s", i, sess.ID, sess.Command, want)
		}
	}
	got, err := s.Resolve(ctx, "name-998")
	if err != nil || got.ID != "s0998" {
		t.Errorf("Resolve(name-998) = %s, %v", got.ID, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s, _, _ := openTest(t)
	const workers, each = 20, 25

	// One shared session that every worker tries to end: exactly one wins.
	mustCreate(t, s, Session{ID: "shared", Name: "shared"})
	var wins atomic.Int32

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				for i := 0; i < each; i++ {
					id := fmt.Sprintf("w%02d-%02d", w, i)
					if err := s.CreateSession(ctx, Session{ID: id, Name: "n-" + id}); err != nil {
						return err
					}
					if err := s.SetSize(ctx, id, w, i); err != nil {
						return err
					}
					if _, err := s.Resolve(ctx, "n-"+id); err != nil {
						return err
					}
					changed, err := s.End(ctx, id, StateExited, intp(i), "")
					if err != nil {
						return err
					}
					if !changed {
						return fmt.Errorf("End(%s) did not change", id)
					}
					// Everyone races for the same name; at most one holds it.
					if err := s.Rename(ctx, id, "contested"); err != nil && !errors.Is(err, ErrNameTaken) {
						return err
					}
					if i%5 == 0 { // readers among the writers; listing is slow under -race
						if _, err := s.Sessions(ctx); err != nil {
							return err
						}
					}
				}
				changed, err := s.End(ctx, "shared", StateClosed, intp(w), "")
				if changed {
					wins.Add(1)
				}
				return err
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if wins.Load() != 1 {
		t.Errorf("%d goroutines ended the shared session, want 1", wins.Load())
	}

	all, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*each+1 {
		t.Fatalf("%d sessions, want %d", len(all), workers*each+1)
	}
	contested := 0
	for _, sess := range all {
		if sess.ID == "shared" {
			continue
		}
		if sess.State != StateExited || sess.ExitCode == nil {
			t.Errorf("%s: state %s code %v", sess.ID, sess.State, sess.ExitCode)
		}
		var w, i int
		fmt.Sscanf(sess.ID, "w%02d-%02d", &w, &i)
		if sess.Cols != w || sess.Rows != i || *sess.ExitCode != i {
			t.Errorf("%s: size %dx%d code %d", sess.ID, sess.Cols, sess.Rows, *sess.ExitCode)
		}
		if sess.Name == "contested" {
			contested++
		}
	}
	if contested != 1 {
		t.Errorf("%d sessions named contested, want 1", contested)
	}
}

// A session's environment policy survives a reopen, so that a restore
// after a server restart makes the child's environment the same way.
func TestSessionEnvPolicy(t *testing.T) {
	s, c, path := openTest(t)
	mustCreate(t, s, Session{ID: "l", EnvPolicy: "login"})
	mustCreate(t, s, Session{ID: "o"})
	s.Close()
	s2, err := Open(context.Background(), path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := mustGet(t, s2, "l").EnvPolicy; got != "login" {
		t.Errorf("EnvPolicy after a reopen = %q, want login", got)
	}
	if got := mustGet(t, s2, "o").EnvPolicy; got != "" {
		t.Errorf("EnvPolicy of a row that set none = %q", got)
	}
}

// An interrupted session's cause is kept with its end, changed only while
// it stays interrupted, and cleared by a restart.
func TestCause(t *testing.T) {
	ctx := context.Background()
	s, _, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a"})
	if _, err := s.EndCause(ctx, "a", StateInterrupted, nil, "its holder died", "holder_killed"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "a"); got.Cause != "holder_killed" || got.Reason != "its holder died" {
		t.Fatalf("after EndCause: %+v", got)
	}
	// A later end changes nothing, the cause included.
	if changed, err := s.EndCause(ctx, "a", StateInterrupted, nil, "x", "other"); err != nil || changed {
		t.Fatalf("second EndCause = %v, %v", changed, err)
	}
	// The same cause in other words is a change too (a shutdown's
	// reason, once the machine is seen restarted after it).
	for _, tc := range []struct {
		cause, reason string
		changed       bool
	}{
		{"machine_restarted", "restarted", true}, {"machine_restarted", "the machine restarted", true},
		{"machine_restarted", "the machine restarted", false},
	} {
		changed, err := s.SetCause(ctx, "a", tc.cause, tc.reason)
		if err != nil || changed != tc.changed {
			t.Fatalf("SetCause(%q, %q) = %v, %v; want changed %v", tc.cause, tc.reason, changed, err, tc.changed)
		}
	}
	if got := mustGet(t, s, "a"); got.Cause != "machine_restarted" || got.Reason != "the machine restarted" {
		t.Fatalf("after SetCause: %+v", got)
	}
	if err := s.Restart(ctx, "a", 1, 2); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "a"); got.Cause != "" {
		t.Fatalf("after Restart: cause %q", got.Cause)
	}
	// Only an interrupted session takes a cause.
	if changed, err := s.SetCause(ctx, "a", "machine_restarted", "r"); err != nil || changed {
		t.Fatalf("SetCause of a running session = %v, %v", changed, err)
	}
	if _, err := s.End(ctx, "a", StateClosed, nil, ""); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.SetCause(ctx, "a", "machine_restarted", "r"); err != nil || changed {
		t.Fatalf("SetCause of a closed session = %v, %v", changed, err)
	}
	if changed, err := s.SetCause(ctx, "nope", "machine_restarted", "r"); err != nil || changed {
		t.Fatalf("SetCause of no session = %v, %v", changed, err)
	}
}

// A session's agent and pinned conversation are kept, and a session of
// any other command has neither.
func TestAgentConversation(t *testing.T) {
	s, _, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a", Agent: "claude", AgentConversation: "0b6f3c2e-8d4a-4f1e-9c3b-5a7d2e1f0a9b"})
	mustCreate(t, s, Session{ID: "b"})
	if got := mustGet(t, s, "a"); got.Agent != "claude" || got.AgentConversation != "0b6f3c2e-8d4a-4f1e-9c3b-5a7d2e1f0a9b" {
		t.Fatalf("agent %q, conversation %q", got.Agent, got.AgentConversation)
	}
	if got := mustGet(t, s, "b"); got.Agent != "" || got.AgentConversation != "" {
		t.Fatalf("a plain session: agent %q, conversation %q", got.Agent, got.AgentConversation)
	}
}

// A name is unique within a workspace: another workspace may have it, and
// a reference by that name is then ambiguous, except within a workspace.
func TestNamesPerWorkspace(t *testing.T) {
	ctx := context.Background()
	s, _, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a1", Name: "build", Workspace: "proj"})
	if err := s.CreateSession(ctx, Session{ID: "a2", Name: "build", Workspace: "proj"}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("a second build in proj: %v, want ErrNameTaken", err)
	}
	if got, err := s.Resolve(ctx, "build"); err != nil || got.ID != "a1" {
		t.Fatalf("Resolve(build) with one = %v, %v", got.ID, err)
	}
	mustCreate(t, s, Session{ID: "b1", Name: "build", Workspace: "other"})
	mustCreate(t, s, Session{ID: "c1", Name: "build"})
	if err := s.Rename(ctx, "c1", "build"); err != nil {
		t.Fatalf("renaming to its own name: %v", err)
	}
	_, err := s.Resolve(ctx, "build")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !slices.Equal(amb.Workspaces, []string{"", "other", "proj"}) {
		t.Fatalf("Resolve(build) with three = %v; want an AmbiguousError naming the three workspaces", err)
	}
	if !strings.Contains(err.Error(), "by its id") {
		t.Errorf("the ambiguity does not say what to do: %v", err)
	}
	for _, tc := range []struct{ ws, ref, want string }{
		{"proj", "build", "a1"},
		{"other", "build", "b1"},
		{"", "build", "c1"},
		{"proj", "b1", "b1"}, // an id is any workspace's: the caller's scope decides
		{"none", "build", ""},
	} {
		got, err := s.ResolveIn(ctx, tc.ws, tc.ref)
		if tc.want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("ResolveIn(%q, %q) = %v, %v; want ErrNotFound", tc.ws, tc.ref, got.ID, err)
			}
			continue
		}
		if err != nil || got.ID != tc.want {
			t.Errorf("ResolveIn(%q, %q) = %v, %v; want %s", tc.ws, tc.ref, got.ID, err, tc.want)
		}
	}
	if err := s.Rename(ctx, "b1", "b-build"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, "b1", "build"); err != nil {
		t.Fatalf("renaming back: %v", err)
	}
	mustCreate(t, s, Session{ID: "b2", Name: "test", Workspace: "other"})
	if err := s.Rename(ctx, "b2", "build"); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("renaming to a name its workspace has: %v, want ErrNameTaken", err)
	}
}
