package procinfo

import (
	"fmt"
	"os"
	"strconv"
)

func cwd(pid int) (string, error) {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return "", fmt.Errorf("procinfo: working directory of %d: %w", pid, err)
	}
	return p, nil
}
