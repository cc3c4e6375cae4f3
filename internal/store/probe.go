package store

import "context"

// Writable checks that the registry can take a write now, changing
// nothing: it begins a write transaction, which takes SQLite's write lock
// (failing on a database SQLite could open only read-only, or one another
// process holds locked past busy_timeout), and rolls it back. It does not
// prove there is room on the disk for the next commit.
func (s *Store) Writable(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn)
	if err != nil {
		return wrap("check the registry is writable", err)
	}
	return wrap("check the registry is writable", tx.Rollback())
}

// StateCounts returns how many sessions are in each state; a state no
// session is in is absent.
func (s *Store) StateCounts(ctx context.Context) (map[State]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, count(*) FROM sessions GROUP BY state`)
	if err != nil {
		return nil, wrap("count sessions by state", err)
	}
	defer rows.Close()
	out := make(map[State]int)
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, wrap("count sessions by state", err)
		}
		out[State(st)] = n
	}
	return out, wrap("count sessions by state", rows.Err())
}
