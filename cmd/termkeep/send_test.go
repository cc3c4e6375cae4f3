package main

import "testing"

// One line is typed as keys (vim takes a paste as text to insert), several
// lines go as a paste; --paste and --no-paste choose; both is a usage
// error.
func TestSendNoPaste(t *testing.T) {
	for _, c := range []struct {
		text           string
		paste, noPaste bool
		want, usage    bool
	}{
		{":wq", false, false, true, false},
		{"git status", false, false, true, false},
		{"echo a\necho b", false, false, false, false},
		{"a\r", false, false, false, false},
		{":wq", true, false, false, false},
		{"a\nb", false, true, true, false},
		{":wq", true, true, false, true},
	} {
		got, err := sendNoPaste(c.text, c.paste, c.noPaste)
		if (err != nil) != c.usage || (err == nil && got != c.want) {
			t.Errorf("sendNoPaste(%q, paste %v, no-paste %v) = %v, %v; want %v (usage error %v)", c.text, c.paste, c.noPaste, got, err, c.want, c.usage)
		}
		if ee, ok := err.(*exitErr); err != nil && (!ok || ee.code != exitUsage) {
			t.Errorf("%v: not a usage error", err)
		}
	}
}
