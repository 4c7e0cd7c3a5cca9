package export_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/pprofbuild/export"
)

func TestOTLP(t *testing.T) {
	res := resource(t)
	col := exporttest.StartCollector(t)
	for _, proto := range []string{export.ProtocolHTTP, export.ProtocolGRPC} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			ep := col.HTTPEndpoint()
			if proto == export.ProtocolGRPC {
				ep = col.GRPCEndpoint()
			}
			before, err := col.Received()
			if err != nil {
				t.Fatal(err)
			}
			c, err := export.NewOTLP(export.OTLPOptions{Protocol: proto, Endpoint: ep, Gzip: true, Resource: res, Headers: map[string]string{"X-Test": "1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			e := export.New(c, export.Options{Logf: logf(t), MaxBatch: 4})
			want := map[string]sent{}
			for n := 1; n <= 3; n++ {
				for _, k := range kinds {
					ep, pp := testProfile(t, k, n)
					want[fmt.Sprintf("%s/%d", k, n)] = sent{ep, pp}
					e.Enqueue(ep)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := col.Received()
			if err != nil {
				t.Fatal(err)
			}
			checkOTLP(t, got[len(before):], want)
			if st := e.Stats(); st.Sent != 9 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
