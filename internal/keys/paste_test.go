package keys

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"
)

// pasteCase is one row of testdata/paste_cases.json, the table the page's
// sanitizer (web/test/unit/paste.test.mjs) is held to as well.
type pasteCase struct {
	Name string `json:"name"`
	In   string `json:"in"`
	Out  string `json:"out"`
}

func TestSanitizePasteCases(t *testing.T) {
	b, err := os.ReadFile("testdata/paste_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []pasteCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		if got := string(SanitizePaste([]byte(c.In))); got != c.Out {
			t.Errorf("%s: SanitizePaste(%q) = %q, want %q", c.Name, c.In, got, c.Out)
		}
		if got := string(Paste([]byte(c.In), true)); got != pasteStart+c.Out+pasteEnd {
			t.Errorf("%s: Paste(%q, bracketed) = %q", c.Name, c.In, got)
		}
	}
}

// Bytes that are not UTF-8 (a Latin-1 file sent with send) pass, but a
// lone C1 byte, a control to an 8-bit terminal, does not.
func TestSanitizePasteBytes(t *testing.T) {
	if got := SanitizePaste([]byte("caf\xe9 \x9b201~\x85x")); string(got) != "caf\xe9 201~x" {
		t.Errorf("got %q", got)
	}
}

func FuzzSanitizePaste(f *testing.F) {
	for _, s := range []string{"ls\x1b[201~; touch X\r", "\x1b[20\x1b[201~1~", "\x9b201~", "café\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := SanitizePaste(in)
		if bytes.Contains(out, []byte{0x1b}) {
			t.Fatalf("SanitizePaste(%q) = %q keeps an ESC", in, out)
		}
		for i := 0; i < len(out); {
			r, n := utf8.DecodeRune(out[i:])
			if isControl(r) && !pasteAllowed[r] || (r == utf8.RuneError && n == 1 && out[i] >= 0x80 && out[i] <= 0x9f) {
				t.Fatalf("SanitizePaste(%q) = %q keeps control %q", in, out, r)
			}
			i += n
		}
		if again := SanitizePaste(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}
