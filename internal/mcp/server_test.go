package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClient speaks to a Serve over pipes.
type testClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
	id    int
}

func startServer(t *testing.T, fake *fakeBackend) *testClient {
	t.Helper()
	return startServerWith(t, Options{Version: "test", Connect: fake.connect})
}

func startServerWith(t *testing.T, opts Options) *testClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, in: inW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		c.done <- Serve(context.Background(), inR, outW, opts)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	c.call("initialize", map[string]any{"protocolVersion": ProtocolVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *testClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *testClient) recv() map[string]any {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server's output ended")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("not JSON: %q", line)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no answer")
	}
	return nil
}

// call sends a request and returns its answer's result (or error).
func (c *testClient) call(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	c.send(string(b))
	m := c.recv()
	if id, _ := m["id"].(float64); int(id) != c.id {
		c.t.Fatalf("answer %v to request %d", m, c.id)
	}
	if r, ok := m["result"].(map[string]any); ok {
		return r
	}
	return m
}

// tool calls a tool and returns its structured content, or its text when
// it has none; isError is reported.
func (c *testClient) tool(name string, args map[string]any) (map[string]any, string, bool) {
	c.t.Helper()
	r := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	isErr, _ := r["isError"].(bool)
	text := ""
	if content, ok := r["content"].([]any); ok && len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	sc, _ := r["structuredContent"].(map[string]any)
	return sc, text, isErr
}

func TestSendInputWrites(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	if _, text, isErr := c.tool("send_input", map[string]any{"session": "web", "text": "ls -l", "keys": []string{"Tab", "Ctrl-C", "Up"}, "enter": true}); isErr {
		t.Fatal(text)
	}
	// The text in one write, then each key in its own, Enter last.
	want := []string{"s1:ls -l", "s1:\t", "s1:\x03", "s1:\x1b[A", "s1:\r"}
	fake.mu.Lock()
	got := slices.Clone(fake.inputs)
	fake.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("inputs %q, want %q", got, want)
	}
	// A bad key sends nothing at all.
	if _, text, isErr := c.tool("send_input", map[string]any{"session": "web", "text": "rm -rf /", "keys": []string{"Enter", "Hyper-X"}}); !isErr || !strings.Contains(text, "Hyper-X") {
		t.Fatalf("bad key: %v %q", isErr, text)
	}
	fake.mu.Lock()
	n := len(fake.inputs)
	fake.mu.Unlock()
	if n != len(want) {
		t.Fatalf("a call with a bad key typed something: %q", fake.inputs[len(want):])
	}
}

func TestWaitQuiet(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	stop := make(chan struct{})
	var mu sync.Mutex
	var printed []time.Time // when each line went out
	start := time.Now()
	go func() {
		for i := 0; i < 8; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				fake.print("s1", fmt.Sprintf("line %d\r\n", i))
				mu.Lock()
				printed = append(printed, time.Now())
				mu.Unlock()
			}
		}
	}()
	defer close(stop)
	sc, text, isErr := c.tool("wait_for", map[string]any{"session": "web", "quiet_ms": 300, "timeout_ms": 5000})
	if isErr {
		t.Fatal(text)
	}
	if sc["quiet"] != true {
		t.Fatalf("wait for quiet: %v", sc)
	}
	// Eight lines 50ms apart, then 300ms of quiet. On a busy machine the
	// printer itself may pause for 300ms; then the quiet was real.
	d := time.Since(start)
	mu.Lock()
	last, gap := start, time.Duration(0)
	for _, p := range printed {
		gap, last = max(gap, p.Sub(last)), p
	}
	n := len(printed)
	mu.Unlock()
	if gap >= 250*time.Millisecond {
		t.Logf("the printer paused %v between lines: quiet after %v is what it was", gap, d)
		return
	}
	if d < 650*time.Millisecond || n < 8 {
		t.Fatalf("quiet after %v with %d of 8 lines printed, while output still flowed", d, n)
	}
	if end := sc["end_offset"].(float64); end < float64(25+8*len("line 0\r\n")) {
		t.Fatalf("quiet at offset %v, before the last line", end)
	}
}

func TestNoServer(t *testing.T) {
	fake := newFake()
	fake.noServer = true
	c := startServer(t, fake)
	_, text, isErr := c.tool("list_sessions", nil)
	if !isErr || !strings.Contains(text, "no termkeep server is running") {
		t.Fatalf("without a server: %v %q", isErr, text)
	}
	// Bad arguments are said before the server is looked for.
	_, text, isErr = c.tool("read_screen", map[string]any{"session": "web", "scrollback": -1})
	if !isErr || !strings.Contains(text, "scrollback") {
		t.Fatalf("bad arguments without a server: %v %q", isErr, text)
	}
}

// A client that writes its requests and closes its end still gets every
// answer, then the server ends.
func TestInputEndAnswersPending(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"wait_for","arguments":{"session":"web","text":"never","timeout_ms":300}}}`)
	c.send(`{"jsonrpc":"2.0","id":102,"method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"read_screen","arguments":{"session":"web"}}}`)
	c.in.Close()
	seen := map[float64]bool{}
	for range 3 {
		m := c.recv()
		seen[m["id"].(float64)] = true
	}
	if !seen[101] || !seen[102] || !seen[103] {
		t.Fatalf("answered %v", seen)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end with its input")
	}
}

func TestLongLine(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxMessage) + `"}}`)
	m := c.recv()
	if e, _ := m["error"].(map[string]any); e == nil || e["code"].(float64) != -32600 || m["id"] != 1.0 {
		t.Fatalf("a line above the limit: %v", m)
	}
	if r := c.call("ping", nil); r["error"] != nil {
		t.Fatalf("after a long line: %v", r)
	}
}

// Output that retention dropped: no news when reading from the oldest byte
// kept (the default), a gap when asked for by offset.
func TestReadOutputRetention(t *testing.T) {
	fake := newFake()
	fake.first["s1"] = 11 // "$ echo hi\r\n" is gone
	c := startServer(t, fake)
	sc, text, isErr := c.tool("read_output", map[string]any{"session": "web"})
	if isErr || sc["text"] != "hi\n$ " || sc["offset"] != 11.0 || sc["gap"] != nil {
		t.Fatalf("from the oldest kept: %v %q", sc, text)
	}
	sc, text, isErr = c.tool("read_output", map[string]any{"session": "web", "offset": 2})
	gap, _ := sc["gap"].(map[string]any)
	if isErr || sc["text"] != "hi\n$ " || sc["offset"] != 11.0 || gap["from"] != 2.0 || gap["to"] != 11.0 {
		t.Fatalf("from offset 2: %v %q", sc, text)
	}
}

// A long wait does not hold up other requests.
func TestConcurrentCalls(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":201,"method":"tools/call","params":{"name":"wait_for","arguments":{"session":"web","text":"never","timeout_ms":3000}}}`)
	c.send(`{"jsonrpc":"2.0","id":202,"method":"tools/call","params":{"name":"read_screen","arguments":{"session":"web"}}}`)
	start := time.Now()
	if m := c.recv(); m["id"] != 202.0 {
		t.Fatalf("first answer %v, want the read_screen's", m)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("read_screen waited %v behind a wait_for", d)
	}
	if m := c.recv(); m["id"] != 201.0 {
		t.Fatalf("second answer %v", m)
	}
}

// Bytes of a character or a sequence cut by damage in the middle of the
// log are given out before the gap, since nothing can complete them: held
// back, every read from them stopped at them again and an agent reading on
// by next_offset never got past the damage.
func TestReadOutputTornBeforeDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		torn string
		raw  bool
	}{
		{"a character, raw", "\xe2\x82", true},
		{"a character", "\xe2\x82", false},
		{"a sequence, raw", "\x1b[3", true},
		{"a sequence", "\x1b[3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			before := "abc" + tc.torn
			fake.output["s1"] = []byte(before + "LOST" + "def\r\n")
			lo, hi := uint64(len(before)), uint64(len(before)+4)
			fake.damaged["s1"] = [2]uint64{lo, hi}
			c := startServer(t, fake)
			off, reads, gaps := 0.0, 0, 0
			var text string
			for off < float64(len(fake.output["s1"])) {
				if reads++; reads > 5 {
					t.Fatalf("still at %v after %d reads: %q", off, reads-1, text)
				}
				sc, txt, isErr := c.tool("read_output", map[string]any{"session": "web", "offset": off, "raw": tc.raw})
				if isErr {
					t.Fatalf("read_output from %v: %s", off, txt)
				}
				if reads == 1 && sc["next_offset"] != float64(lo) {
					t.Fatalf("from 0: next_offset %v, want %d (where the damage starts): %v", sc["next_offset"], lo, sc)
				}
				if g, _ := sc["gap"].(map[string]any); g != nil {
					if gaps++; g["from"] != float64(lo) || g["to"] != float64(hi) {
						t.Fatalf("gap %v, want %d-%d", g, lo, hi)
					}
				}
				text += sc["text"].(string)
				off = sc["next_offset"].(float64)
			}
			if gaps != 1 || !strings.HasPrefix(text, "abc") || !strings.HasSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "def\n") || strings.Contains(text, "LOST") {
				t.Fatalf("read %q with %d gaps", text, gaps)
			}
		})
	}
}
