package attach

import (
	"testing"
	"time"

	"termkeep/internal/predict"
	"termkeep/internal/session/liveness"
)

// Attach predicts, and so feeds its screen model all the time, only
// where a prediction can show: always, or on auto over a pinged link (a
// relay over ssh). A local socket's round trip never reaches auto's
// threshold: there the model costs nothing (docs/performance-ab.md).
func TestPredicts(t *testing.T) {
	ssh := liveness.Config{Interval: time.Second, Timeout: 3 * time.Second}
	for _, c := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"local, auto", Config{Predict: predict.Auto}, false},
		{"local, never", Config{Predict: predict.Never}, false},
		{"local, always", Config{Predict: predict.Always}, true},
		{"over ssh, auto", Config{Predict: predict.Auto, Keepalive: ssh}, true},
		{"over ssh, never", Config{Predict: predict.Never, Keepalive: ssh}, false},
		{"over ssh, always", Config{Predict: predict.Always, Keepalive: ssh}, true},
		{"read-only, always", Config{Predict: predict.Always, ReadOnly: true}, false},
		{"read-only over ssh, auto", Config{Predict: predict.Auto, Keepalive: ssh, ReadOnly: true}, false},
		{"a timeout without pings, auto", Config{Predict: predict.Auto, Keepalive: liveness.Config{Timeout: time.Second}}, false},
	} {
		if got := predicts(c.cfg); got != c.want {
			t.Errorf("%s: predicts %v, want %v", c.name, got, c.want)
		}
	}
}
