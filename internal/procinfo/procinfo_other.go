//go:build !linux

package procinfo

func cwd(int) (string, error) { return "", ErrUnsupported }

func cmdline(int) ([]string, error) { return nil, ErrUnsupported }

func parent(int) (int, error) { return 0, ErrUnsupported }

func descendants(int) ([]int, error) { return nil, ErrUnsupported }

func openFiles(int) ([]string, error) { return nil, ErrUnsupported }

func environ(int) ([]string, error) { return nil, ErrUnsupported }

func terminal(int) (uint32, uint32, bool) { return 0, 0, false }
