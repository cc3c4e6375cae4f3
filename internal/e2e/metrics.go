package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Visibility: /metrics, /healthz, /readyz, /v1/stats and `termkeep stats`,
// and the server's structured log.

// UnixGet sends GET path to the server's unix socket and returns the
// status and the body.
func (e *Env) UnixGet(path string) (int, []byte) {
	e.T.Helper()
	sock := filepath.Join(e.Dir, "server.sock")
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://termkeep" + path)
	if err != nil {
		e.T.Fatalf("GET %s on the unix socket: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Scrape is one parsed /metrics answer.
type Scrape map[string]*dto.MetricFamily

// ParseMetrics parses a /metrics answer in the text format.
func ParseMetrics(t *testing.T, body []byte) Scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return mfs
}

// Value is the value of metric name whose labels include the pairs in
// labels (name, value, ...); it fails the test when there is none.
func (s Scrape) Value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mf, ok := s[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

// Metrics scrapes the server's /metrics over its Unix socket.
func (e *Env) Metrics() Scrape {
	e.T.Helper()
	code, body := e.UnixGet("/metrics")
	if code != http.StatusOK {
		e.T.Fatalf("GET /metrics on the unix socket: %d %s", code, body)
	}
	return ParseMetrics(e.T, body)
}
