package mcp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every tool says truly what it may do: a client that approves calls by
// their hints must not take a tool that runs commands for a harmless one.
func TestToolAnnotations(t *testing.T) {
	c := startServer(t, newFake())
	r := c.call("tools/list", map[string]any{})
	list, _ := r["tools"].([]any)
	want := map[string]struct{ readOnly, destructive, openWorld bool }{
		"list_sessions":  {readOnly: true},
		"read_screen":    {readOnly: true},
		"read_output":    {readOnly: true},
		"wait_for":       {readOnly: true},
		"create_session": {destructive: true, openWorld: true},
		"send_input":     {destructive: true, openWorld: true},
		"kill_session":   {destructive: true, openWorld: true},
	}
	seen := 0
	for _, v := range list {
		tool := v.(map[string]any)
		name := tool["name"].(string)
		w, ok := want[name]
		if !ok {
			continue
		}
		seen++
		a, _ := tool["annotations"].(map[string]any)
		ro, _ := a["readOnlyHint"].(bool)
		// Absent destructiveHint and openWorldHint mean true in the
		// specification; readOnlyHint absent means false.
		de, ok := a["destructiveHint"].(bool)
		if !ok {
			de = !ro
		}
		ow, ok := a["openWorldHint"].(bool)
		if !ok {
			ow = true
		}
		if ro != w.readOnly || (!ro && de != w.destructive) || ow != w.openWorld {
			t.Errorf("%s: annotations %v; want readOnly %v, destructive %v, openWorld %v", name, a, w.readOnly, w.destructive, w.openWorld)
		}
	}
	if seen != len(want) {
		t.Fatalf("tools/list has %d of the %d tools: %v", seen, len(want), list)
	}
}

// A message with an id but neither a method nor a result is an invalid
// request, answered with its id.
func TestNoMethod(t *testing.T) {
	c := startServer(t, newFake())
	c.send(`{"jsonrpc":"2.0","id":7}`)
	m := c.recv()
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32600.0 || m["id"] != 7.0 {
		t.Fatalf("a request with no method: %v", m)
	}
	if r := c.call("ping", nil); r["error"] != nil {
		t.Fatalf("after it: %v", r)
	}
}

// A line over the limit is answered with the id it starts with, so the
// client's call fails rather than its connection.
func TestLongLineID(t *testing.T) {
	c := startServer(t, newFake())
	c.send(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"send_input","arguments":{"session":"web","text":"` + strings.Repeat("a", maxMessage) + `"}}}`)
	m := c.recv()
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32600.0 || m["id"] != "big-1" {
		t.Fatalf("a line above the limit: %v", m)
	}
	if !strings.Contains(m["error"].(map[string]any)["message"].(string), "16 MiB") {
		t.Fatalf("the error does not say the limit: %v", m)
	}
}

func TestIDFromPrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"`, 7.0},
		{`{"id":"a\"b","params":{"x":"`, `a"b`},
		{`{"jsonrpc":"2.0","method":"tools/call","id":12,"params":"`, 12.0},
		{` { "jsonrpc" : "2.0" , "id" : -3.5 , "params"`, -3.5},
		{`{"params":{"id":5,"x":"`, nil}, // an id inside params is not the request's
		{`{"jsonrpc":"2.0","params":{"a":[1,2,{"b":"`, nil},
		{`{"id":null,"params":"`, nil},
		{`{"id":{"x":1},"params":"`, nil},
		{`{"id":[1],"params":"`, nil},
		{`{"id":true,"params":"`, nil},
		{`{"id":12`, nil}, // cut inside the number: 123 or 12?
		{`{"id":"abc`, nil},
		{`[{"id":1,`, nil},
		{`garbage`, nil},
		{``, nil},
		{`{"jsonrpc":"2.0","jsonrpc":"2.0","id":9,`, 9.0},
	} {
		if got := idFromPrefix([]byte(tc.in)); got != tc.want {
			t.Errorf("idFromPrefix(%q) = %#v; want %#v", tc.in, got, tc.want)
		}
	}
}

func FuzzIDFromPrefix(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"`, `{"id":"x"`, `{"params":{"id":5`, `[`, `{"id":1e400,`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		switch id := idFromPrefix(p).(type) {
		case nil, string:
		case float64:
			if id != id {
				t.Fatalf("NaN id from %q", p)
			}
		default:
			t.Fatalf("id of type %T from %q", id, p)
		}
	})
}

// badID refuses exactly null and non-integer numbers as a message's id,
// whatever else the line holds, and never an id it could not read.
func FuzzBadID(f *testing.F) {
	for _, s := range []string{`{"id":null}`, `{"id":1.5}`, `{"id":3e0}`, `{"id":"x"}`, `{"method":"x"}`, `{"id":-0.0}`, `{"id":1e400}`, `[1]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) == 0 {
			return
		}
		id, why := badID(p)
		if why == "" {
			if id != nil {
				t.Fatalf("an id %v with no refusal from %q", id, p)
			}
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(p, &m) != nil {
			t.Fatalf("refused %q, which is no JSON object: %s", p, why)
		}
		raw, ok := m["id"]
		if !ok {
			t.Fatalf("refused %q, which has no id: %s", p, why)
		}
		var v any
		json.Unmarshal(raw, &v)
		if f, isNum := v.(float64); isNum && f == float64(int64(f)) {
			t.Fatalf("refused the integer id of %q", p)
		}
	})
}

// An empty command is refused: the schema asks for at least its program.
func TestEmptyCommandArray(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	_, text, isErr := c.tool("create_session", map[string]any{"command": []string{}})
	if !isErr || !strings.Contains(text, "command") {
		t.Fatalf("command: []: %q (error %v)", text, isErr)
	}
	if n := len(fake.sessions); n != 2 {
		t.Fatalf("a session was started anyway: %d sessions", n)
	}
}

// An unknown session sends the model to the tool that lists them, not to
// a CLI it may not have.
func TestUnknownSessionHint(t *testing.T) {
	c := startServer(t, newFake())
	for _, tool := range []string{"read_screen", "send_input", "wait_for", "kill_session", "read_output"} {
		args := map[string]any{"session": "nope", "text": "x"}
		if tool != "send_input" && tool != "wait_for" {
			delete(args, "text")
		}
		_, text, isErr := c.tool(tool, args)
		if !isErr || !strings.Contains(text, "list_sessions") || strings.Contains(text, "termkeep ls") {
			t.Errorf("%s of an unknown session: %q", tool, text)
		}
	}
}

// More scrollback than the session has is not silently less: the answer
// says how much history there was.
func TestScrollbackShort(t *testing.T) {
	fake := newFake()
	fake.history["s1"] = []string{"old 1", "old 2", "old 3"}
	c := startServer(t, fake)
	r := c.call("tools/call", map[string]any{"name": "read_screen", "arguments": map[string]any{"session": "web", "scrollback": 100000}})
	content, _ := r["content"].([]any)
	var texts []string
	for _, v := range content {
		texts = append(texts, v.(map[string]any)["text"].(string))
	}
	all := strings.Join(texts, "\n")
	if !strings.HasPrefix(all, "old 1\nold 2\nold 3\n$ echo hi") || !strings.Contains(all, "3 lines of history") || !strings.Contains(all, "100000") {
		t.Fatalf("scrollback 100000 of 3 lines: %q", texts)
	}
	r = c.call("tools/call", map[string]any{"name": "read_screen", "arguments": map[string]any{"session": "web", "scrollback": 2}})
	if content, _ := r["content"].([]any); len(content) != 1 {
		t.Fatalf("scrollback within the history: %v", r)
	}
}

// A prompt ending in a space, at the end of the screen, matches: the
// screen's lines come without their trailing blanks, and blank lines
// below the cursor are no text.
func TestWaitPromptAtEnd(t *testing.T) {
	fake := newFake()
	fake.screen["s1"] = "$ sudo -i\n[sudo] ok\nroot@box:~#\n\n\n"
	c := startServer(t, fake)
	for _, args := range []map[string]any{
		{"session": "web", "text": "~# ", "timeout_ms": 2000},
		{"session": "web", "regex": `# ?\z`, "timeout_ms": 2000},
	} {
		sc, text, isErr := c.tool("wait_for", args)
		if isErr || sc["matched"] != true || sc["line"] != 3.0 {
			t.Errorf("wait_for %v: %v %q", args, sc, text)
		}
	}
}

func TestScreenFind(t *testing.T) {
	lit := func(s string) func(string) (int, int, bool) {
		return func(h string) (int, int, bool) { return findLiteral(h, s) }
	}
	for _, tc := range []struct {
		screen, text string
		want         string // the match, "-" for none
	}{
		{"root# \n", "# ", "#"}, // the text has no trailing blanks
		{"a# b\n", "# ", "# "},
		{"root#\n\n\n", "# ", "#"},
		{"root#\n\n\n", "#   ", "#"},
		{"root#", "# ", "#"},
		{"a# b\nroot#\n", "# ", "# "},
		{"a#b\nroot#\n", "# ", "#"},
		{"a#b\n", "# ", "-"},
		{"a b\n", " ", " "},
		{"$\n", " ", "-"}, // only blanks: nothing to anchor them
		{"x\n", "", ""},
		{"abc\n", "abc", "abc"},
		{"ab\n", "abc ", "-"},
		{"", "# ", "-"},
	} {
		hay := screenText(tc.screen)
		i, j, ok := lit(tc.text)(hay)
		got := "-"
		if ok {
			got = hay[i:j]
		}
		if got != tc.want {
			t.Errorf("find %q in %q = %q; want %q", tc.text, tc.screen, got, tc.want)
		}
	}
	for in, want := range map[string]string{"a\nb\n\n\n": "a\nb", "\n\n": "", "a  \n \nb \n\n": "a\n\nb", "": ""} {
		if got := screenText(in); got != want {
			t.Errorf("screenText(%q) = %q; want %q", in, got, want)
		}
	}
}

// read_screen rides out a server that has just restarted and is still
// building its screen models, within the call's own deadline.
func TestReadScreenRetries(t *testing.T) {
	fake := newFake()
	fake.screenFails = 3
	c := startServer(t, fake)
	_, text, isErr := c.tool("read_screen", map[string]any{"session": "s2"})
	if isErr || text != "done" {
		t.Fatalf("read_screen while the model catches up: %q (error %v)", text, isErr)
	}
}

// A wait whose stream is cut (the server was killed) carries on once the
// server is back, and sees the exit it was waiting for.
func TestWaitSurvivesCut(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":301,"method":"tools/call","params":{"name":"wait_for","arguments":{"session":"web","exit":true,"timeout_ms":20000}}}`)
	time.Sleep(300 * time.Millisecond)
	fake.restart(500 * time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	fake.Kill(t.Context(), "web")
	m := c.recv()
	r, _ := m["result"].(map[string]any)
	sc, _ := r["structuredContent"].(map[string]any)
	if m["id"] != 301.0 || sc["exited"] != true || sc["exit_code"] != 129.0 {
		t.Fatalf("wait_for exit across a cut stream: %v", m)
	}
}

// A wait whose server does not come back in time says so, and that
// asking again is safe.
func TestWaitCutNoServer(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":302,"method":"tools/call","params":{"name":"wait_for","arguments":{"session":"web","text":"never","timeout_ms":1500}}}`)
	time.Sleep(300 * time.Millisecond)
	fake.setServer(false)
	fake.cutStreams()
	m := c.recv()
	r, _ := m["result"].(map[string]any)
	text := ""
	if content, _ := r["content"].([]any); len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	if r["isError"] != true || !strings.Contains(text, "restarted") || !strings.Contains(text, "safe") {
		t.Fatalf("wait_for with the server gone: %v", m)
	}
}

// read_output collapses progress redraws into what the screen shows.
func TestReadOutputCollapse(t *testing.T) {
	fake := newFake()
	fake.output["s1"] = nil
	fake.print("s1", progress())
	c := startServer(t, fake)
	sc, text, isErr := c.tool("read_output", map[string]any{"session": "web"})
	if isErr || sc["text"] != "downloading\n100% [##########]\ndone\n" {
		t.Fatalf("read_output of a progress bar: %v %q", sc, text)
	}
}

// tail_lines and tail_bytes read the end of the output.
func TestReadOutputTail(t *testing.T) {
	fake := newFake()
	fake.output["s1"] = nil
	var b strings.Builder
	for i := range 5000 {
		b.WriteString(strings.Repeat("x", 20) + " line " + itoa(i) + "\r\n")
	}
	fake.print("s1", b.String()+"$ ")
	end := float64(b.Len() + 2)
	c := startServer(t, fake)
	sc, text, isErr := c.tool("read_output", map[string]any{"session": "web", "tail_lines": 3})
	if isErr || sc["text"] != strings.Repeat("x", 20)+" line 4998\n"+strings.Repeat("x", 20)+" line 4999\n$ " || sc["next_offset"] != end || sc["truncated"] != true {
		t.Fatalf("tail_lines 3: %v %q", sc, text)
	}
	off := sc["offset"].(float64)
	if got := fake.output["s1"][int(off):]; !strings.HasPrefix(string(got), strings.Repeat("x", 20)+" line 4998\r\n") {
		t.Fatalf("tail_lines 3 starts at offset %v: %q", off, got[:30])
	}
	sc, text, isErr = c.tool("read_output", map[string]any{"session": "web", "tail_bytes": 13})
	if isErr || sc["text"] != "line 4999\n$ " || sc["offset"] != end-13 || sc["next_offset"] != end {
		t.Fatalf("tail_bytes 13: %v %q", sc, text)
	}
	if _, text, isErr = c.tool("read_output", map[string]any{"session": "web", "tail_lines": 3, "offset": 5}); !isErr {
		t.Fatalf("tail_lines with offset: %q", text)
	}
	sc, text, isErr = c.tool("read_output", map[string]any{"session": "s2", "tail_lines": 100})
	if isErr || sc["text"] != "café \ufffd ok\ndone\n" || sc["offset"] != 0.0 || sc["truncated"] != false {
		t.Fatalf("tail_lines beyond the start: %v %q", sc, text)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A session gone when the server comes back is that answer, not a
// restart to retry.
func TestWaitCutSessionGone(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":303,"method":"tools/call","params":{"name":"wait_for","arguments":{"session":"web","exit":true,"timeout_ms":20000}}}`)
	time.Sleep(300 * time.Millisecond)
	fake.mu.Lock()
	fake.sessions = fake.sessions[1:]
	fake.mu.Unlock()
	fake.cutStreams()
	m := c.recv()
	r, _ := m["result"].(map[string]any)
	text := ""
	if content, _ := r["content"].([]any); len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	if r["isError"] != true || !strings.Contains(text, `no session "web"`) {
		t.Fatalf("wait_for of a session gone after a restart: %v", m)
	}
}
