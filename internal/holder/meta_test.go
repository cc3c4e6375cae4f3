package holder

import (
	"os"
	"path/filepath"
	"testing"

	"termkeep/internal/bootid"
	"termkeep/internal/sessiondir"
)

// meta.json names the boot the holder started in, read where
// $TERMKEEP_BOOT_ID_FILE points, so that a server can tell a restart of
// the machine from a holder's death.
func TestMetaRecordsBootID(t *testing.T) {
	f := filepath.Join(t.TempDir(), "boot_id")
	if err := os.WriteFile(f, []byte("boot-of-this-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(bootid.EnvVar, f)
	th := startHolder(t, "read x", 0)
	m, err := sessiondir.ReadMeta(th.dir)
	if err != nil || m.BootID != "boot-of-this-test" {
		t.Fatalf("meta.json %+v, %v; want boot_id boot-of-this-test", m, err)
	}
}
