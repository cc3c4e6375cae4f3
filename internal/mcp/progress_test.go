package mcp

import (
	"strings"
	"testing"
	"time"
)

// TestWaitProgressAndCancel: a wait_for with a progressToken gets
// notifications/progress with growing progress; notifications/cancelled
// ends it at once with an answer saying so, and the server goes on.
func TestWaitProgressAndCancel(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	c.send(`{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{"_meta":{"progressToken":"w-1"},"name":"wait_for","arguments":{"session":"web","text":"never printed","timeout_ms":60000}}}`)
	var last float64
	for i := 0; i < 2; i++ {
		m := c.recv()
		p, _ := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || p["progressToken"] != "w-1" || p["total"] != 60000.0 {
			t.Fatalf("not a progress notification: %v", m)
		}
		if got, _ := p["progress"].(float64); got <= last {
			t.Fatalf("progress %v after %v", got, last)
		} else {
			last = got
		}
		if msg, _ := p["message"].(string); !strings.Contains(msg, "waiting in session web") {
			t.Fatalf("progress message %q", msg)
		}
	}
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":900}}`)
	for {
		m := c.recv()
		if m["method"] == "notifications/progress" {
			continue // sent before the cancel arrived
		}
		r, _ := m["result"].(map[string]any)
		if m["id"] != 900.0 || r["isError"] != true || !strings.Contains(m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string), "cancelled") {
			t.Fatalf("the cancelled wait's answer: %v", m)
		}
		break
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the wait ended %v after its cancel", took)
	}
	if _, text, isErr := c.tool("read_screen", map[string]any{"session": "web"}); isErr {
		t.Fatalf("after the cancel: %s", text)
	}
	// No progress for a call without a token.
	if r, _, _ := c.tool("wait_for", map[string]any{"session": "web", "text": "never", "timeout_ms": 1200}); r["timed_out"] != true {
		t.Fatalf("wait_for: %v", r)
	}
}
