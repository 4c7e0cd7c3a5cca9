package export

import (
	"bytes"

	"github.com/google/pprof/profile"
)

// withNotes returns batch with notes[i] added to the comments of the i-th
// profile where it is not empty, on copies: the caller's bytes are not
// changed. A profile that cannot be parsed goes as it is.
func withNotes(batch []*Profile, notes []string) []*Profile {
	var out []*Profile
	for i, n := range notes {
		if n == "" {
			continue
		}
		if out == nil {
			out = append([]*Profile(nil), batch...)
		}
		pp, err := profile.ParseData(batch[i].Pprof)
		if err != nil {
			continue
		}
		pp.Comments = append(pp.Comments, n)
		var buf bytes.Buffer
		if err := pp.Write(&buf); err != nil {
			continue
		}
		cp := *batch[i]
		cp.Pprof = buf.Bytes()
		out[i] = &cp
	}
	if out == nil {
		return batch
	}
	return out
}
