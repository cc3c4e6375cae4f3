package cli

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.MainPlain(m) }
