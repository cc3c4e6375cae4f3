package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkResolve is the lookup every request naming a session makes
// first: attach's time to its first screen includes it.
func BenchmarkResolve(b *testing.B) {
	s, _, _ := openTest(b)
	s.sessions.check = false // as outside tests
	ctx := context.Background()
	for i := range 20 {
		if err := s.CreateSession(ctx, Session{ID: fmt.Sprintf("id%06d", i), Name: fmt.Sprintf("name%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, ref := range []string{"id000007", "name7"} {
		b.Run(ref, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Resolve(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Session", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Session(ctx, "id000007"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
