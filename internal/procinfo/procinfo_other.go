//go:build !linux

package procinfo

func cwd(int) (string, error) { return "", ErrUnsupported }

func cmdline(int) ([]string, error) { return nil, ErrUnsupported }
