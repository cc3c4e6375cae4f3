//go:build !linux

package procinfo

func cwd(int) (string, error) { return "", ErrUnsupported }
