package attach

import (
	"fmt"
	"strings"

	"termkeep/internal/wire"
)

// sizeHolder says who holds the session's size, as attach shows it when
// that changes: the viewer by its name (or kind), or the policy that
// decides. It is "" while this viewer holds it, or when nothing can be
// said (no size yet). Short: a terminal's title shows it.
func sizeHolder(v wire.Viewers) string {
	if v.Cols == 0 || v.Rows == 0 {
		return ""
	}
	size := fmt.Sprintf("size %dx%d", v.Cols, v.Rows)
	switch v.SizePolicy {
	case "fixed":
		return size + ", fixed by termkeep resize"
	case "smallest", "largest":
		return fmt.Sprintf("%s, the %s viewer's", size, v.SizePolicy)
	}
	if v.SizeOwner == 0 {
		return size + "; type to take it"
	}
	if v.SizeOwner == v.You {
		return ""
	}
	who := "another viewer"
	for _, o := range v.Viewers {
		if o.ID != v.SizeOwner {
			continue
		}
		switch {
		case o.Kind == wire.ViewerShare:
			who = strings.TrimSpace("share link " + o.Name)
		case o.Name != "":
			who = o.Name
		case o.Kind == wire.ViewerCLI:
			who = "a terminal"
		case o.Kind == wire.ViewerWeb:
			who = "a browser"
		default:
			who = "a viewer"
		}
	}
	return fmt.Sprintf("%s from %s; type to take it", size, who)
}
