// Package guid converts between COM's GUID text forms and uuid.UUID, for
// package profiler (CLSIDs, IIDs) and package diag (the attach trigger),
// which must not depend on each other's runtime parts.
package guid

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Parse reads a GUID in registry form, with or without braces:
// "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}" or "8a5d2c3e-1f4b-4e6a-9d7c-0b3e5f1a2c4d".
func Parse(s string) (uuid.UUID, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") != strings.HasSuffix(t, "}") {
		return uuid.UUID{}, fmt.Errorf("invalid GUID %q: unbalanced braces", s)
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "{"), "}")
	if len(t) != 36 {
		return uuid.UUID{}, fmt.Errorf("invalid GUID %q: want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", s)
	}
	id, err := uuid.Parse(t)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("invalid GUID %q: %w", s, err)
	}
	return id, nil
}

// Format writes a GUID in registry form: upper case, in braces.
func Format(u uuid.UUID) string {
	return "{" + strings.ToUpper(u.String()) + "}"
}
