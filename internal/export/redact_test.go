package export

import (
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
)

// Sample credentials of each kind the Redactor knows, in their real
// formats (none of them valid).
const (
	sampleAWS       = "AKIAIOSFODNN7EXAMPLE"
	sampleJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	sampleOpenAI    = "sk-abcdefghijklmnopqrT3BlbkFJuvwxyzABCDEFGHIJKLMN"
	sampleOpenAIPrj = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_AbCdEfGh-IjKl"
	sampleAnthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdefghijklmnopqrstuvwxyzAA"
	sampleStripe    = "sk_live_51Hc8XyzAbCdEfGhIjKlMnOpQr"
	sampleStripeRK  = "rk_live_51Hc8XyzAbCdEfGhIjKlMnOpQrSt"
	sampleNPM       = "npm_abcdefghijklmnopqrstuvwxyz0123456789"
)

func TestRedactCredentialFormats(t *testing.T) {
	red, err := NewRedactor()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"Authorization: Bearer " + sampleJWT + "\n":            "Authorization: Bearer [REDACTED]\n",
		"OPENAI_API_KEY=" + sampleOpenAI + "\n":                "OPENAI_API_KEY=[REDACTED]\n",
		"export OPENAI=" + sampleOpenAIPrj + " ok\n":           "export OPENAI=[REDACTED] ok\n",
		"key " + sampleAnthropic + ".\n":                       "key [REDACTED].\n",
		"stripe " + sampleStripe + "\n":                        "stripe [REDACTED]\n",
		"stripe " + sampleStripeRK + "\n":                      "stripe [REDACTED]\n",
		"//registry.npmjs.org/:_authToken=" + sampleNPM + "\n": "//registry.npmjs.org/:_authToken=[REDACTED]\n",
		"npm token " + sampleNPM + "\n":                        "npm token [REDACTED]\n",
		// The scheme, the user and the host stay readable.
		"git clone https://alice:s3cr3t-pass@github.com/org/repo\n":   "git clone https://alice:[REDACTED]@github.com/org/repo\n",
		"DATABASE_URL=postgres://app:p%40ss:w0rd@db:5432/app\n":       "DATABASE_URL=postgres://app:[REDACTED]@db:5432/app\n",
		"remote https://ghp1234567890abcdefghijklmnop@github.com/x\n": "remote https://[REDACTED]@github.com/x\n",
		// Not credentials: left alone.
		"pip install scikit-learn sk-learn risk-free task-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n":   "",
		"npm_config_cache=/tmp/npm npm_lifecycle_event=test\n":                                          "",
		"see https://example.com:8080/path?q=a:b@c and ssh://git@github.com/x and git@github.com:o/r\n": "",
		"sk_live_short and eyJhbGciOiJIUzI1NiJ9 alone\n":                                                "",
		"mail bob@example.com at 10:30\n":                                                               "",
	} {
		if want == "" {
			want = in
		}
		if got := string(red.Redact([]byte(in))); got != want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// Each kind of secret is found however the output was chunked: split in
// two at every point, as a cast's chunks may be.
func TestRedactSplitEverywhere(t *testing.T) {
	red, err := NewRedactor()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{sampleAWS, sampleJWT, sampleOpenAI, sampleOpenAIPrj, sampleAnthropic, sampleStripe, sampleStripeRK, sampleNPM, "s3cr3t-pass"} {
		line := "$ use \x1b[1m" + secret + "\x1b[0m now\r\n"
		if secret == "s3cr3t-pass" {
			line = "$ git clone https://alice:" + secret + "@github.com/org/repo\r\n"
		}
		whole := string(red.Redact([]byte(line)))
		if strings.Contains(whole, secret) || !strings.Contains(whole, Replacement) {
			t.Errorf("%s is not redacted: %q", secret, whole)
			continue
		}
		for i := 1; i < len(line); i++ {
			var got []byte
			s := red.stream(func(_ uint64, l []byte, edits []edit) error {
				got = applyEdits(got, l, edits)
				return nil
			})
			s.write(0, []byte(line[:i]))
			s.write(uint64(i), []byte(line[i:]))
			s.flush()
			if string(got) != whole {
				t.Errorf("%s split at %d: %q, want %q", secret, i, got, whole)
			}
		}
	}
}

// A key drawn with corrections is what the screen shows, not what the raw
// bytes spell: a backspace and an overwrite, a typo erased with "\b \b" or
// "\b\x1b[K", the cursor moved back (CSI D) or a character deleted (CSI
// P). In a cast each is found, and the whole drawing of the key goes,
// however the chunks fell.
func TestRedactDrawnKey(t *testing.T) {
	red, err := NewRedactor()
	if err != nil {
		t.Fatal(err)
	}
	for _, drawn := range []string{
		"AKIA" + "X\bIOSFODNN7EXAMPLE",
		"AKIAIOSFQ\b \bODNN7EXAMPLE",
		"AKIAIOSFQ\b\x1b[KODNN7EXAMPLE",
		"AKIAIOSFODNN7EXAMPLZ\x1b[DE",
		"AKIAIOSFOQDNN7EXAMPLE\x1b[12D\x1b[P",
		"AKIAIOSFODNN7EXAMPLZ\b\b\b\bMPLE",
		"AKIA\x1b[32mIOSF\x1b[0mX\bODNN7EXAMPLE",
	} {
		for _, split := range []int{4, 5, 9, len(drawn) - 2} {
			dir, _ := writeLog(t, outlog.Options{},
				step{data: "$ echo " + drawn[:split]},
				step{after: time.Second, data: drawn[split:] + " done\r\n"},
			)
			out, _ := exportAll(t, dir, Cast, red)
			_, evs := parseCast(t, out)
			text := outputOf(evs)
			for _, frag := range []string{"AKIA", "IOSF", "ODNN", "EXAMPL", "\b"} {
				if strings.Contains(text, frag) {
					t.Errorf("%q split at %d: %q is still in the cast: %q", drawn, split, frag, text)
				}
			}
			if !strings.HasPrefix(text, "$ echo [REDACTED]") || !strings.HasSuffix(text, " done\r\n") {
				t.Errorf("%q split at %d: %q", drawn, split, text)
			}
		}
	}
	// What the screen shows without a key is left as it was.
	for _, in := range []string{"abc\bd\x1b[K ok\n", "AKIAIOSFODNN7EXAMP\b\b\bXYZ\n", "tab\there\x1b[3D\x1b[C!\n"} {
		if got := string(red.Redact([]byte(in))); got != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
		}
	}
}
