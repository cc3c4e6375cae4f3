package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"testing"
	"time"

	"termkeep/internal/api"
)

// An export that works before its first byte tells the client how far it
// is with 102 answers; the final answer says where its body starts.
func TestExportProgressAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &exportWriter{w: w, final: http.Header{"Content-Type": {"text/plain"}}}
		for done := uint64(0); done <= 100; done += 10 {
			ew.progress(done, 100)
			time.Sleep(60 * time.Millisecond)
		}
		io.WriteString(ew, "the text")
	}))
	defer srv.Close()
	var mu sync.Mutex
	var seen []string
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			mu.Lock()
			defer mu.Unlock()
			if code != http.StatusProcessing || h.Get("Content-Type") != "" {
				t.Errorf("1xx answer %d with headers %v", code, h)
			}
			seen = append(seen, h.Get(api.HeaderProgress))
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != 200 || string(body) != "the text" || resp.Header.Get("Content-Type") != "text/plain" ||
		resp.Header.Get(api.HeaderProgress) != "100/100" {
		t.Fatalf("answer %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if len(seen) < 2 {
		t.Fatalf("progress answers: %q", seen)
	}
	last := uint64(0)
	for _, p := range seen {
		done, total, ok := api.ParseProgress(p)
		if !ok || total != 100 || done < last {
			t.Fatalf("progress answers: %q", seen)
		}
		last = done
	}
}
