package server

import (
	"strings"
	"testing"
	"time"

	"termkeep/internal/session"
)

func TestParsePolicyDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string // a substring of the error; "" for none
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{" 0s ", 0, ""},
		{"10m", 10 * time.Minute, ""},
		{"30s", 30 * time.Second, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"600", 10 * time.Minute, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"10 minutes", 0, "is not a duration"},
		{"m", 0, "is not a duration"},
		{"-5m", 0, "is negative"},
		{"-5", 0, "out of range"},
		{"NaN", 0, "out of range"},
		{"Inf", 0, "out of range"},
		{"1e30", 0, "out of range"},
	} {
		got, err := ParsePolicyDuration(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParsePolicyDuration(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParsePolicyDuration(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParsePolicyDuration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestPoliciesDue(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	both := policies{orphanGrace: 10 * time.Minute, idleTimeout: time.Hour}
	for _, tc := range []struct {
		name string
		p    policies
		now  time.Time
		a    session.Activity
		want string // a substring of the reason; "" for not due
	}{
		{"off", policies{}, t0.Add(100 * time.Hour), session.Activity{Last: t0, Alone: t0}, ""},
		{"alone, before the grace", both, t0.Add(9 * time.Minute), session.Activity{Last: t0.Add(9 * time.Minute), Alone: t0}, ""},
		{"alone, at the grace", both, t0.Add(10 * time.Minute), session.Activity{Last: t0.Add(10 * time.Minute), Alone: t0}, "no viewer for 10m0s (TERMKEEP_ORPHAN_GRACE)"},
		{"viewer attached", both, t0.Add(59 * time.Minute), session.Activity{Last: t0.Add(59 * time.Minute)}, ""},
		{"viewer attached, idle", both, t0.Add(time.Hour), session.Activity{Last: t0}, "no output or input for 1h0m0s (TERMKEEP_IDLE_TIMEOUT)"},
		{"alone, grace off", policies{idleTimeout: time.Hour}, t0.Add(59 * time.Minute), session.Activity{Last: t0, Alone: t0}, ""},
		{"busy, grace off", policies{idleTimeout: time.Hour}, t0.Add(5 * time.Hour), session.Activity{Last: t0.Add(5*time.Hour - time.Second), Alone: t0}, ""},
	} {
		reason, ok := tc.p.due(tc.now, tc.a)
		if ok != (tc.want != "") || !strings.Contains(reason, tc.want) {
			t.Errorf("%s: due = %q, %v; want %q", tc.name, reason, ok, tc.want)
		}
	}
}
