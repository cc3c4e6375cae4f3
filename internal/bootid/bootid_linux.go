package bootid

// system reads the kernel's boot id, a UUID made afresh at every boot.
func system() (string, error) { return readFile("/proc/sys/kernel/random/boot_id") }
