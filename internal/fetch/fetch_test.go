package fetch

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/idl"
)

// sharedIDL is the checkout's copy of the pinned inputs.
func sharedIDL(t *testing.T) string {
	dir := os.Getenv("CLRPROF_IDL")
	if dir == "" {
		dir = "../../../shared/idl"
	}
	if _, err := os.Stat(filepath.Join(dir, "corprof.idl")); err != nil {
		t.Skipf("no generator inputs at %s", dir)
	}
	return dir
}

// serve answers /repo/commit/path with the file of the same name under dir
// (v3.1 files from dir/v3.1), like a raw-file host.
func serve(t *testing.T, dir string, entries []Entry, corrupt string) *httptest.Server {
	byURL := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.File)
		if e.Set == "v3.1" {
			p = filepath.Join(dir, "v3.1", e.File)
		}
		byURL["/"+e.Repo+"/"+e.Commit+"/"+e.Path] = p
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := byURL[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if corrupt != "" && strings.HasSuffix(p, corrupt) {
			b = append(b, '\n')
		}
		w.Write(b)
	}))
}

func TestFetchVerifiesHashes(t *testing.T) {
	dir := sharedIDL(t)
	entries, err := Manifest(idl.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"current", "v3.1"} {
		srv := serve(t, dir, entries, "")
		out := t.TempDir()
		if err := FetchInto(entries, set, out, srv.URL, srv.Client()); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		srv.Close()
		files, _ := os.ReadDir(out)
		if len(files) != 6 {
			t.Errorf("%s: fetched %d files, want 6", set, len(files))
		}
	}
	srv := serve(t, dir, entries, "cor.h")
	defer srv.Close()
	err = FetchInto(entries, "current", t.TempDir(), srv.URL, srv.Client())
	if err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("corrupted download: err = %v, want a sha256 mismatch", err)
	}
}

func TestManifestErrors(t *testing.T) {
	for _, bad := range []string{"current corprof.idl dotnet/runtime path", "current a b c d e"} {
		if _, err := Manifest([]byte(bad)); err == nil {
			t.Errorf("Manifest(%q) succeeded", bad)
		}
	}
}
