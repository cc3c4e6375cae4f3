package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestExchanges plays the recorded exchanges in testdata/*.txt against a
// server on a fake backend, as a client would over stdio. A script's lines:
//
//	> JSON         a line the client writes (sent as it is, malformed or not)
//	< JSON         the next line the server must write: the actual message
//	               must have every member given here with the same value
//	               (members not given are not checked); "*" matches any value
//	! print ID STR the fake session ID prints STR (a JSON string)
//	! screen ID STR the fake session ID's screen is STR (a JSON string)
//	# ...          a comment
//
// Requests are sent one at a time and answered before the next: a
// notification the server wrongly answers is the next "<" line's mismatch.
func TestExchanges(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no recorded exchanges in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			playScript(t, file)
		})
	}
}

func playScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, inR, outW, Options{Version: "test", Connect: fake.connect, Dir: "/home/u",
			LookPath: func(name string) (string, error) { return "/usr/bin/" + name, nil }})
		outW.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for n, line := range strings.Split(string(data), "\n") {
		where := fmt.Sprintf("%s:%d", file, n+1)
		switch {
		case strings.HasPrefix(line, "> "):
			if _, err := io.WriteString(inW, line[2:]+"\n"); err != nil {
				t.Fatalf("%s: write: %v", where, err)
			}
		case strings.HasPrefix(line, "< "):
			var want any
			if err := json.Unmarshal([]byte(line[2:]), &want); err != nil {
				t.Fatalf("%s: the script's expectation is not JSON: %v", where, err)
			}
			select {
			case got, ok := <-lines:
				if !ok {
					t.Fatalf("%s: the server ended its output; want %s", where, line[2:])
				}
				var v any
				if err := json.Unmarshal([]byte(got), &v); err != nil {
					t.Fatalf("%s: the server wrote a line that is not JSON: %q", where, got)
				}
				if path, ok := matches(want, v, "$"); !ok {
					t.Fatalf("%s: at %s:\n got  %s\n want %s", where, path, got, line[2:])
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no answer; want %s", where, line[2:])
			}
		case strings.HasPrefix(line, "! print "):
			id, text, _ := strings.Cut(strings.TrimPrefix(line, "! print "), " ")
			var s string
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			time.Sleep(50 * time.Millisecond) // let the request reach its wait
			fake.print(id, s)
		case strings.HasPrefix(line, "! screen "):
			id, text, _ := strings.Cut(strings.TrimPrefix(line, "! screen "), " ")
			var s string
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			fake.mu.Lock()
			fake.screen[id] = s
			fake.mu.Unlock()
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			t.Fatalf("%s: cannot read the script line %q", where, line)
		}
	}
	// The end of the input ends the server, with nothing more written.
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its input ended")
	}
	cancel()
	if extra, ok := <-lines; ok {
		t.Errorf("the server wrote a line nobody asked for: %s", extra)
	}
}

// matches reports whether got has everything want has (objects: want's
// members; arrays: the same length, element by element; "*": anything),
// and where it differs.
func matches(want, got any, path string) (string, bool) {
	if want == "*" {
		return "", true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				return path + "." + k + " (missing)", false
			}
			if p, ok := matches(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + " (length)", false
		}
		for i := range w {
			if p, ok := matches(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(want, got)
}
