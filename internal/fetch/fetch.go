// Package fetch downloads the generator inputs pinned in idl/manifest.txt
// into a cache directory, checking each file's sha256.
package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clrprof/clrprof/idl"
)

// Entry is one pinned upstream file.
type Entry struct {
	Set, File, Repo, Path, Commit, SHA256 string
}

// Manifest parses idl/manifest.txt.
func Manifest(src []byte) ([]Entry, error) {
	var out []Entry
	for _, rec := range idl.Records(src) {
		f, line := rec.Fields, rec.Line
		if len(f) != 6 {
			return nil, fmt.Errorf("manifest.txt:%d: want 6 fields (set file repo path commit sha256), have %d", line, len(f))
		}
		if len(f[5]) != 64 {
			return nil, fmt.Errorf("manifest.txt:%d: sha256 %q is not 64 hex digits", line, f[5])
		}
		out = append(out, Entry{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	return out, nil
}

// BaseURL is where raw files are fetched from: BaseURL/repo/commit/path.
// $CLRPROF_IDL_BASE_URL overrides it.
func BaseURL() string {
	if v := os.Getenv("CLRPROF_IDL_BASE_URL"); v != "" {
		return strings.TrimRight(v, "/")
	}
	return "https://raw.githubusercontent.com"
}

// CacheDir is the directory holding the inputs of a set.
func CacheDir(set string) (string, error) {
	base := os.Getenv("CLRPROF_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(c, "clrprof")
	}
	return filepath.Join(base, "idl", set), nil
}

// Fetch downloads every file of set into its cache directory (skipping files
// already there with the right hash) and returns the directory.
func Fetch(set string) (string, error) {
	entries, err := Manifest(idl.Manifest)
	if err != nil {
		return "", err
	}
	dir, err := CacheDir(set)
	if err != nil {
		return "", err
	}
	return dir, FetchInto(entries, set, dir, BaseURL(), &http.Client{Timeout: 2 * time.Minute})
}

// FetchInto downloads the entries of set from base into dir.
func FetchInto(entries []Entry, set, dir, base string, client *http.Client) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if e.Set != set {
			continue
		}
		n++
		dst := filepath.Join(dir, e.File)
		if b, err := os.ReadFile(dst); err == nil && sum(b) == e.SHA256 {
			continue
		}
		url := fmt.Sprintf("%s/%s/%s/%s", base, e.Repo, e.Commit, e.Path)
		resp, err := client.Get(url)
		if err != nil {
			return fmt.Errorf("fetching %s: %w", e.File, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("fetching %s: %w", e.File, err)
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("fetching %s: %s from %s", e.File, resp.Status, url)
		}
		if got := sum(body); got != e.SHA256 {
			return fmt.Errorf("fetching %s: sha256 %s, manifest pins %s", e.File, got, e.SHA256)
		}
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, body, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	if n == 0 {
		return fmt.Errorf("manifest has no files in set %q", set)
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
