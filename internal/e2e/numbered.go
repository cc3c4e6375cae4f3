package e2e

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
)

// numberedChild prints NumberedLine lines at TK_RATE lines a second (6000
// when unset), from its go (a 'g' on its input) until an 's' or, when
// TK_LINES is set, that many lines, then "END <lines printed>"; it exits
// on a 'q' (after TK_LINES lines, an 's') or when its input ends. Its tty is raw, so the go and the stop
// are not echoed among the lines.
func numberedChild() int {
	rate, _ := strconv.Atoi(os.Getenv("TK_RATE"))
	if rate <= 0 {
		rate = 6000
	}
	limit, _ := strconv.Atoi(os.Getenv("TK_LINES"))
	if limit <= 0 {
		limit = math.MaxInt
	}
	if _, err := term.MakeRaw(0); err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 3
	}
	in := readStdin()
	wait := func(c byte) bool {
		for b := range in {
			for _, x := range b {
				if x == c {
					return true
				}
			}
			if len(b) == 0 {
				return false
			}
		}
		return false
	}
	if !wait('g') {
		return 0
	}
	stop := make(chan bool, 1)
	go func() { stop <- wait('s') }()
	// Paced by the clock, not by the ticks: a late tick is caught up.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	began := time.Now()
	var n int
	var buf []byte
	for {
		select {
		case <-stop:
			fmt.Fprintf(os.Stdout, "END %d\r\n", n)
			wait('q')
			return 0
		case now := <-tick.C:
			buf = buf[:0]
			for due := min(int(now.Sub(began).Seconds()*float64(rate)), limit); n < due; n++ {
				buf = AppendNumbered(buf, n)
			}
			if n == limit {
				buf = fmt.Appendf(buf, "END %d\r\n", n)
			}
			if _, err := os.Stdout.Write(buf); err != nil {
				return 4
			}
			if n == limit {
				<-stop // its reader is stop's: an 's' or the input's end
				return 0
			}
		}
	}
}

// AppendNumbered appends line n as numberedChild prints it: L, nine
// digits, a dash, the alphabet and the digits, CR LF; 47 columns, so it
// never wraps in a terminal of 80.
func AppendNumbered(b []byte, n int) []byte {
	return fmt.Appendf(b, "L%09d-abcdefghijklmnopqrstuvwxyz0123456789\r\n", n)
}

var numberedRE = regexp.MustCompile(`^L([0-9]{9})-abcdefghijklmnopqrstuvwxyz0123456789$`)

// NumberedCount is what a terminal's text shows of numberedChild's lines.
type NumberedCount struct {
	First, Last int // the first and last numbers shown (-1: none)
	Lines       int // whole numbered lines shown
	Missing     int // numbers between First and Last never shown
	Repeated    int // lines shown again (a number seen before)
	Backwards   int // lines whose number is below the one before
	Torn        int // lines that start like one but are not whole
	// Gaps are the first few runs of missing numbers, as "from..to".
	Gaps []string
}

// CountNumbered counts numberedChild's lines in text, a terminal's
// scrollback and screen, one row a line.
func CountNumbered(rows []string) NumberedCount {
	c := NumberedCount{First: -1, Last: -1}
	seen := map[int]bool{}
	prev := -1
	for _, r := range rows {
		m := numberedRE.FindStringSubmatch(r)
		if m == nil {
			if len(r) > 1 && r[0] == 'L' && r[1] >= '0' && r[1] <= '9' {
				c.Torn++
			}
			continue
		}
		n, _ := strconv.Atoi(m[1])
		c.Lines++
		if c.First < 0 {
			c.First = n
		}
		if seen[n] {
			c.Repeated++
		} else {
			seen[n] = true
		}
		if n < prev {
			c.Backwards++
		}
		prev = n
		c.Last = max(c.Last, n)
	}
	if c.First >= 0 {
		for n := c.First; n <= c.Last; n++ {
			if seen[n] {
				continue
			}
			c.Missing++
			if seen[n-1] { // a run of missing numbers starts
				to := n
				for to < c.Last && !seen[to+1] {
					to++
				}
				if len(c.Gaps) < 8 {
					c.Gaps = append(c.Gaps, fmt.Sprintf("%d..%d", n, to))
				}
			}
		}
	}
	return c
}

// String says the count in a failure message's words.
func (c NumberedCount) String() string {
	s := fmt.Sprintf("lines L%09d..L%09d: %d shown, %d missing, %d repeated, %d out of order, %d torn",
		c.First, c.Last, c.Lines, c.Missing, c.Repeated, c.Backwards, c.Torn)
	if len(c.Gaps) > 0 {
		s += " (first gaps " + strings.Join(c.Gaps, ", ") + ")"
	}
	return s
}
