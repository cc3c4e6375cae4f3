//go:build !linux

package procinfo

func cwd(int) (string, error) { return "", ErrUnsupported }

func cmdline(int) ([]string, error) { return nil, ErrUnsupported }

func parent(int) (int, error) { return 0, ErrUnsupported }
