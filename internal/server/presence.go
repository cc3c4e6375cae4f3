package server

import (
	"termkeep/internal/api"
	"termkeep/internal/session"
	"termkeep/internal/wire"
)

// presence is the list of who watches a session, from the host's viewers
// and their parties: a viewer with no party is the CLI's (termkeep
// attach, on the unix socket, is the owner's). Names of links and users
// are for the owner only. A pure function: the handler gathers its input.
func presence(v wire.Viewers, parties map[int]session.Party, owner bool) api.Presence {
	out := api.Presence{Cols: int(v.Cols), Rows: int(v.Rows), SizeOwner: v.SizeOwner, Viewers: []api.Viewer{}}
	for _, x := range v.Viewers {
		p, ok := parties[x.ID]
		if !ok || p.Kind == "" {
			p = session.Party{Kind: "cli", Name: "termkeep attach"}
			if x.Kind == wire.ViewerWeb {
				p = session.Party{Kind: "user"}
			}
		}
		if !owner && (p.Kind == "link" || p.Kind == "user") {
			p.Name = ""
		}
		out.Viewers = append(out.Viewers, api.Viewer{
			ID: x.ID, Kind: p.Kind, Name: p.Name, ReadOnly: x.ReadOnly,
			Cols: int(x.Cols), Rows: int(x.Rows), HoldsSize: x.ID != 0 && x.ID == v.SizeOwner,
		})
	}
	return out
}
